package io.sluice.routing;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** {@code causalReads: GLOBAL} reads the primary's position in the server's flavour. */
class CausalWaiterTest {

    @Test
    void globalReadsGtidExecutedOnMySqlAndTheBinlogPositionOnMariaDb() {
        assertThat(CausalWaiter.primaryPosition(true)).isEqualTo("SELECT @@GLOBAL.gtid_executed");
        assertThat(CausalWaiter.primaryPosition(false)).isEqualTo("SELECT @@GLOBAL.gtid_binlog_pos");
    }
}
