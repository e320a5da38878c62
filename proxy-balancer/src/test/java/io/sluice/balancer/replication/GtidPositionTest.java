package io.sluice.balancer.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class GtidPositionTest {

    private static final String A = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
    private static final String B = "5d2f1c3e-0000-11e1-9e33-c80aa9429562";

    @ParameterizedTest(name = "{0} at or past {1}: {2}")
    @CsvSource(delimiter = '|', textBlock = """
            0-1-42           | 0-1-42          | true
            0-1-43           | 0-1-42          | true
            0-1-41           | 0-1-42          | false
            0-2-50           | 0-1-42          | true
            0-1-42,1-1-7     | 0-1-42          | true
            0-1-42           | 0-1-42,1-1-7    | false
            '1-1-7, 0-1-42'  | 0-1-40,1-2-7    | true
            0-1-42           | ''              | true
            ''               | ''              | true
            ''               | 0-1-1           | false
            """)
    void mariaDbPositionsCompareByDomain(String a, String b, boolean atOrPast) {
        assertThat(MariaDbGtidPosition.parse(a).isAtOrPast(MariaDbGtidPosition.parse(b))).isEqualTo(atOrPast);
        assertThat(MariaDbGtidPosition.parse(a).transactionsBehind(MariaDbGtidPosition.parse(b)) == 0)
                .isEqualTo(atOrPast);
    }

    @Test
    void mariaDbPositionsAreCanonical() {
        assertThat(MariaDbGtidPosition.parse(" 1-2-7 ,0-1-42").toString()).isEqualTo("0-1-42,1-2-7");
        assertThat(MariaDbGtidPosition.parse("0-1-5,0-2-9").toString()).isEqualTo("0-2-9");
        assertThat(MariaDbGtidPosition.parse("0-1-40").transactionsBehind(MariaDbGtidPosition.parse("0-1-42,1-1-3")))
                .isEqualTo(5);
        assertThat(MariaDbGtidPosition.parse("0-1-40").union(MariaDbGtidPosition.parse("0-1-42,1-1-3")))
                .hasToString("0-1-42,1-1-3");
        assertThat(MariaDbGtidPosition.parse("0-1-9223372036854775807").sequence(0)).isEqualTo(Long.MAX_VALUE);
        assertThat(MariaDbGtidPosition.parse("0-1-1").sequence(5)).isEqualTo(-1);
    }

    @ParameterizedTest
    @ValueSource(strings = {"0-1", "0-1-", "a-1-2", "0-1-2,", "0-1-2-3", "-1-1-2", "0-1-99999999999999999999",
        "4294967296-1-1", "0 1 2"})
    void mariaDbRefusesWhatIsNoPosition(String text) {
        assertThatThrownBy(() -> MariaDbGtidPosition.parse(text)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a MariaDB GTID position");
    }

    @ParameterizedTest(name = "{0} at or past {1}: {2}")
    @CsvSource(delimiter = '|', textBlock = """
            A:1-5          | A:1-5          | true
            A:1-5:7        | A:3-4:7        | true
            A:1-5          | A:1-6          | false
            A:1-5,B:1-3    | B:2            | true
            A:1-5          | B:1            | false
            A:1-3:5-9      | A:4            | false
            A:1-9          | ''             | true
            ''             | A:1            | false
            """)
    void mySqlSetsCompareBySubset(String a, String b, boolean atOrPast) {
        MySqlGtidSet x = MySqlGtidSet.parse(a.replace("A", A).replace("B", B));
        MySqlGtidSet y = MySqlGtidSet.parse(b.replace("A", A).replace("B", B));
        assertThat(x.isAtOrPast(y)).isEqualTo(atOrPast);
    }

    @Test
    void mySqlSetsAreCanonical() {
        MySqlGtidSet set = MySqlGtidSet.parse(B + ":1-3,\n" + A.toUpperCase() + ":7:1-5:6");
        assertThat(set).hasToString(A + ":1-7," + B + ":1-3");
        assertThat(set.contains(A, 7)).isTrue();
        assertThat(set.contains(A, 8)).isFalse();
        assertThat(MySqlGtidSet.parse(A + ":1-3").transactionsBehind(MySqlGtidSet.parse(A + ":2-10,"
                + B + ":1"))).isEqualTo(8);
        assertThat(MySqlGtidSet.parse(A + ":1-3").union(MySqlGtidSet.parse(A + ":4-5"))).hasToString(A + ":1-5");
        MySqlGtidSet tagged = MySqlGtidSet.parse(A + ":1-5:web:1-3");
        assertThat(tagged.contains(A + ":web", 3)).isTrue();
        assertThat(tagged.contains(A, 6)).isFalse();
        assertThat(MySqlGtidSet.parse(tagged.toString())).isEqualTo(tagged);
    }

    @ParameterizedTest
    @ValueSource(strings = {"abc:1", "3e11fa47-71ca-11e1-9e33-c80aa9429562", "3e11fa47-71ca-11e1-9e33-c80aa9429562:0",
        "3e11fa47-71ca-11e1-9e33-c80aa9429562:5-3", "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-"})
    void mySqlRefusesWhatIsNoSet(String text) {
        assertThatThrownBy(() -> MySqlGtidSet.parse(text)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a MySQL GTID set");
    }

    @Test
    void flavoursDoNotMix() {
        GtidPosition mariaDb = GtidPosition.parse("0-1-1");
        GtidPosition mySql = GtidPosition.parse(A + ":1");
        assertThat(mariaDb).isInstanceOf(MariaDbGtidPosition.class);
        assertThat(mySql).isInstanceOf(MySqlGtidSet.class);
        assertThat(mariaDb.isAtOrPast(mySql)).isFalse();
        assertThat(mySql.isAtOrPast(mariaDb)).isFalse();
    }
}
