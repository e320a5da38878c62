package io.sluice.pooling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.balancer.replication.CausalWait;
import io.sluice.balancer.replication.MariaDbGtidPosition;
import io.sluice.balancer.replication.MySqlGtidSet;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The causal wait speaks the server's flavour: the position a session's tracker reported is parsed as MariaDB's or
 * MySQL's by what the connection's greeting said (the primary's position {@code GLOBAL} reads: {@code
 * io.sluice.routing.CausalWaiterTest}).
 */
class GtidWaitFlavourTest {

    @Test
    void aMySqlConnectionWaitsWithWaitForExecutedGtidSet() {
        String gtid = "3e11fa47-71ca-11e1-9e33-c80aa9429562:23";
        assertThat(GtidWait.position(gtid, true)).isInstanceOf(MySqlGtidSet.class);
        assertThat(CausalWait.sql(GtidWait.position(gtid, true), Duration.ofMillis(250)))
                .isEqualTo("SELECT WAIT_FOR_EXECUTED_GTID_SET('" + gtid + "', 1)");
        assertThat(CausalWait.sql(GtidWait.position("0-1-42", false), Duration.ofMillis(250)))
                .isEqualTo("SELECT MASTER_GTID_WAIT('0-1-42', 0.25)");
        assertThat(GtidWait.position("0-1-42", false)).isInstanceOf(MariaDbGtidPosition.class);
    }

    @Test
    void aPositionOfTheOtherFlavourIsRefusedNotMisread() {
        assertThatThrownBy(() -> GtidWait.position("0-1-42", true)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> GtidWait.position("3e11fa47-71ca-11e1-9e33-c80aa9429562:23", false))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
