package io.sluice.sql;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SqlDigestTest {

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '~', value = {
        "SELECT * FROM t WHERE id = 42                      | select * from t where id = ?",
        "select c from t1 where k=1.5e3 and n = -7          | select c from t1 where k = ? and n = ?",
        "SELECT 'it''s', \"x\\\"y\", X'0A', 0xFF, b'01', .5  | select ?, ?, ?, ?, ?, ?",
        "SELECT * FROM t WHERE id IN (1, 2, 3)              | select * from t where id in (...)",
        "SELECT * FROM t WHERE id IN (7)                    | select * from t where id in (...)",
        "INSERT INTO t VALUES (1,'a'),(2,'b'),(3,NULL)      | insert into t values (...)",
        "INSERT INTO t (a, b) VALUE (1, 2) AS n ON DUPLICATE KEY UPDATE b = n.b"
                + " | insert into t (a, b) value (...) as n on duplicate key update b = n.b",
        "SELECT  a,\\n\\tb  -- note\\nFROM t /* c */ # x   | select a, b from t",
        "SELECT `col 1`, T2.c3 FROM `Db`.`t2`;              | select `col 1`, t2.c3 from `Db`.`t2`",
        "SELECT 'unterminated                               | select ?",
        "CALL p(1, @V)                                      | call p (?, @v)",
        "SELECT SLEEP(1.5), COUNT(*)                        | select sleep (?), count (*)",
        "SELECT a-1, -1, x IS NOT NULL FROM t WHERE b <=> NULL | select a - ?, ?, x is not null from t where b <=> ?",
        "/*!40101 SET @OLD_CHARSET=@@CHARACTER_SET_CLIENT */; | set @old_charset = @@character_set_client",
        "SELECT * FROM t WHERE (a, b) IN ((1, 2), (3, 4))   | select * from t where (a, b) in ((...))",
        "SELECT c FROM t WHERE id = ? AND k IN (?, ?)       | select c from t where id = ? and k in (...)",
    })
    void literalsBecomeQuestionMarks(String sql, String expected) {
        assertThat(SqlDigest.of(sql.replace("\\n", "\n").replace("\\t", "\t")).text()).isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "SELECT * FROM t WHERE id = 1              | SELECT * FROM t WHERE id = 99999",
        "SELECT * FROM t WHERE id IN (1)           | SELECT * FROM t WHERE id IN (4, 5, 6)",
        "SELECT c FROM t WHERE s = 'a' LIMIT 10    | select  c from t\\nwhere s=\"bb\"  limit 20;",
        "INSERT INTO t VALUES (1, 'a')             | insert into t values(1,'a'),(2,NULL)",
        "SELECT * FROM t WHERE x = -1              | SELECT * FROM t WHERE x=+5 -- why",
        "SELECT f(a, 2)                            | SELECT f( a ,3 )",
    })
    void sameShapeSameHash(String a, String b) {
        SqlDigest first = SqlDigest.of(a);
        SqlDigest second = SqlDigest.of(b.replace("\\n", "\n"));

        assertThat(first.text()).isEqualTo(second.text());
        assertThat(first.hash()).hasSize(16).isEqualTo(second.hash());
    }

    @Test
    void differentShapesDifferentHashes() {
        assertThat(SqlDigest.of("SELECT a FROM t").hash()).isNotEqualTo(SqlDigest.of("SELECT b FROM t").hash());
        assertThat(SqlDigest.of("SELECT a FROM `T`").hash()).isNotEqualTo(SqlDigest.of("SELECT a FROM `t`").hash());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '~', value = {
        "INSERT INTO t VALUES (1,'a'),(2,'b'),(3,'c') | INSERT INTO t VALUES (1,'a'),(2,'b",
        "INSERT INTO t VALUES (1,'a'),(2,'b'),(3,'c') | INSERT INTO t VALUES (1,'a'),(2,",
        "INSERT INTO t VALUES (1,'a'),(2,'b'),(3,'c') | INSERT INTO t VALUES (1,'a'),(2",
        "SELECT * FROM t WHERE id IN (1, 2, 3)        | SELECT * FROM t WHERE id IN (1, 2, 3",
        "SELECT * FROM t WHERE id IN (1, 2, 3)        | SELECT * FROM t WHERE id IN (1,",
    })
    void aStatementCutInItsLastListHasTheWholeStatementsDigest(String whole, String cut) {
        assertThat(SqlDigest.of(cut).text()).isEqualTo(SqlDigest.of(whole).text());
    }

    @Test
    void aLongListFoldsAndALongShapeIsCutAtTheMaximum() {
        String ids = IntStream.range(0, 10_000).mapToObj(Integer::toString).collect(Collectors.joining(", "));
        assertThat(SqlDigest.of("SELECT * FROM t WHERE id IN (" + ids + ") AND k = 1").text())
                .isEqualTo("select * from t where id in (...) and k = ?");

        String columns = IntStream.range(0, 1_000).mapToObj(i -> "c" + i).collect(Collectors.joining(", "));
        String text = SqlDigest.of("SELECT " + columns + " FROM t").text();
        assertThat(text).hasSize(SqlDigest.MAX_LENGTH + 3).startsWith("select c0, c1, ").endsWith("...");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "CREATE USER 'bob'@'%' IDENTIFIED BY 'hunter2'",
        "ALTER USER bob IDENTIFIED WITH mysql_native_password BY 'hunter2'",
        "SET PASSWORD FOR bob = PASSWORD('hunter2')",
        "CHANGE MASTER TO MASTER_PASSWORD = 'hunter2'",
    })
    void theDigestOfAStatementThatCarriesAPasswordHasNone(String sql) {
        SqlDigest digest = SqlDigest.of(sql);

        assertThat(digest.text()).doesNotContain("hunter2");
    }
}
