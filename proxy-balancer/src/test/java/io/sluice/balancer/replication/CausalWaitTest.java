package io.sluice.balancer.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class CausalWaitTest {

    private static final GtidPosition MARIADB = GtidPosition.parse("0-1-42");
    private static final GtidPosition MYSQL = GtidPosition.parse("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5");

    @Test
    void theStatementForEachFlavour() {
        assertThat(CausalWait.sql(MARIADB, Duration.ofMillis(250)))
                .isEqualTo("SELECT MASTER_GTID_WAIT('0-1-42', 0.25)");
        assertThat(CausalWait.sql(MARIADB, Duration.ofSeconds(2))).isEqualTo("SELECT MASTER_GTID_WAIT('0-1-42', 2)");
        assertThat(CausalWait.sql(MARIADB, Duration.ofMillis(1005)))
                .isEqualTo("SELECT MASTER_GTID_WAIT('0-1-42', 1.005)");
        assertThat(CausalWait.sql(MYSQL, Duration.ofMillis(250))).isEqualTo(
                "SELECT WAIT_FOR_EXECUTED_GTID_SET('3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5', 1)");
        assertThat(CausalWait.sql(MariaDbGtidPosition.empty(), Duration.ofSeconds(1))).isNull();
    }

    @Test
    void theResults() {
        assertThat(CausalWait.read(MARIADB, "0")).isEqualTo(CausalWait.Outcome.REACHED);
        assertThat(CausalWait.read(MARIADB, "-1")).isEqualTo(CausalWait.Outcome.TIMED_OUT);
        assertThat(CausalWait.read(MARIADB, null)).isEqualTo(CausalWait.Outcome.FAILED);
        assertThat(CausalWait.read(MARIADB, "1")).isEqualTo(CausalWait.Outcome.FAILED);
        assertThat(CausalWait.read(MYSQL, "0")).isEqualTo(CausalWait.Outcome.REACHED);
        assertThat(CausalWait.read(MYSQL, "1")).isEqualTo(CausalWait.Outcome.TIMED_OUT);
        assertThat(CausalWait.read(MYSQL, "-1")).isEqualTo(CausalWait.Outcome.FAILED);
    }
}
