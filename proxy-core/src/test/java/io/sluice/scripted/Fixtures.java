package io.sluice.scripted;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testing.MySqlWire;
import io.sluice.testing.ScriptedSluice;
import java.util.List;

/** What the scripted session tests share: a status, an error code, a small result, and the pool's "nothing left". */
final class Fixtures {
    /** The status of a server inside a transaction. */
    static final int IN_TRANSACTION = MySqlWire.SERVER_STATUS_AUTOCOMMIT | MySqlWire.SERVER_STATUS_IN_TRANS;
    /** The client-side error Sluice answers with when its backend connection broke: CR_SERVER_LOST. */
    static final int CR_SERVER_LOST = 2013;

    private Fixtures() {
    }

    /**
     * A text result of one integer column, named as its value, and one row: {@code SELECT 1}'s answer, as packets
     * for a client with CLIENT_DEPRECATE_EOF (the scripted client asks for it).
     */
    static List<byte[]> oneRow(String value, int status) {
        return MySqlWire.resultSet(true, List.of(MySqlWire.columnDefinition(value, MySqlWire.MYSQL_TYPE_LONG)),
                List.of(MySqlWire.textRow(value)), status);
    }

    /** Nothing of a dead connection is left in the pool: none idle, and its slot is free again. */
    static void assertNotPooled(ScriptedSluice sluice) {
        assertThat(sluice.pool().idleConnections()).as("idle connections").isZero();
        assertThat(sluice.pool().openConnections()).as("open connections (slots taken)").isZero();
    }
}
