package io.sluice.balancer.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class PromotionStatementsTest {

    @Test
    void mariaDbRepointsByGtidWithQuotedValues() {
        assertThat(PromotionStatements.MARIADB.replicateFrom("10.0.0.2", 3307, "repl", "p'w\\d")).containsExactly(
                "STOP SLAVE",
                "CHANGE MASTER TO MASTER_HOST = '10.0.0.2', MASTER_PORT = 3307, MASTER_USER = 'repl',"
                        + " MASTER_PASSWORD = 'p''w\\\\d', MASTER_USE_GTID = slave_pos",
                "START SLAVE");
        assertThat(PromotionStatements.MARIADB.awaitApplied("0-1-42", 5))
                .isEqualTo("SELECT MASTER_GTID_WAIT('0-1-42', 5)");
    }

    @Test
    void mySqlUsesItsOwnWords() {
        assertThat(PromotionStatements.MYSQL.fence()).containsExactly("SET GLOBAL super_read_only = ON",
                "SELECT @@GLOBAL.gtid_executed");
        assertThat(PromotionStatements.MYSQL.promote()).contains("STOP REPLICA", "RESET REPLICA ALL");
        assertThat(PromotionStatements.MYSQL.replicateFrom("db2", 3306, "repl", "x").get(1))
                .isEqualTo("CHANGE REPLICATION SOURCE TO SOURCE_HOST = 'db2', SOURCE_PORT = 3306,"
                        + " SOURCE_USER = 'repl', SOURCE_PASSWORD = 'x', SOURCE_AUTO_POSITION = 1,"
                        + " GET_SOURCE_PUBLIC_KEY = 1");
        assertThat(PromotionStatements.MYSQL.demotedPrimaryFirst()).isEmpty();
    }

    @Test
    void passwordsAreMaskedInWhatIsShown() {
        String statement = PromotionStatements.MARIADB.replicateFrom("h", 1, "repl", "se'cr\\'et").get(1);
        assertThat(PromotionStatements.masked(statement)).contains("MASTER_PASSWORD = '***'").doesNotContain("cr");
        String mySql = PromotionStatements.MYSQL.replicateFrom("h", 1, "repl", "s3cret").get(1);
        assertThat(PromotionStatements.masked(mySql)).contains("SOURCE_PASSWORD = '***'").doesNotContain("s3cret");
    }

    @Test
    void theFlavourComesFromTheReadingsPositions() {
        ReplicationReading mariaDb = ReplicationReading.of("a", false, "0-1-1", "", Map.of());
        ReplicationReading mySql = ReplicationReading.ofMySql("b", false,
                "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5", Map.of());
        assertThat(PromotionStatements.of(mariaDb)).isEqualTo(PromotionStatements.MARIADB);
        assertThat(PromotionStatements.of(mySql)).isEqualTo(PromotionStatements.MYSQL);
        assertThat(PromotionStatements.applied("0")).isTrue();
        assertThat(PromotionStatements.applied("-1")).isFalse();
        assertThat(PromotionStatements.applied(null)).isFalse();
    }
}
