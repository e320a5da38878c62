package io.sluice.statistics;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.ImmediateEventExecutor;
import io.sluice.protocol.Command;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** A session's prepared statements as the statistics follow them: by the id the client knows, until it closes them. */
class SessionDigestsTest {

    private final DigestStatistics statistics = new DigestStatistics(100);
    private final SessionDigests session = statistics.forSession(ImmediateEventExecutor.INSTANCE);

    private StatementRecord send(int command, byte[] argument) {
        ByteBuf frame = Unpooled.buffer().writeMediumLE(argument.length + 1).writeByte(0).writeByte(command)
                .writeBytes(argument);
        try {
            session.onArrival(command, frame);
            return session.onCommand(command, frame, "app", "db", "ds_0");
        } finally {
            frame.release();
        }
    }

    private void prepare(String sql, int id) {
        send(Command.COM_STMT_PREPARE, sql.getBytes(StandardCharsets.UTF_8))
                .completed(100, 100, false, 0, 0, 0, id, false);
    }

    private static byte[] id(int id) {
        return new byte[] {(byte) id, (byte) (id >> 8), (byte) (id >> 16), (byte) (id >> 24), 0, 1, 0, 0, 0};
    }

    @Test
    void anExecuteCountsUnderItsPreparedStatementsDigestUntilTheStatementIsClosed() {
        prepare("SELECT c FROM t WHERE id = ?", 1);
        prepare("UPDATE t SET c = ? WHERE id = ?", 2);
        assertThat(((DigestCounters) send(Command.COM_STMT_EXECUTE, id(1))).digest().text())
                .isEqualTo("select c from t where id = ?");
        assertThat(((DigestCounters) send(Command.COM_STMT_EXECUTE, id(2))).digest().text())
                .isEqualTo("update t set c = ? where id = ?");
        assertThat(send(Command.COM_STMT_CLOSE, id(1))).isNull();
        assertThat(send(Command.COM_STMT_EXECUTE, id(1))).as("closed").isNull();
        assertThat(send(Command.COM_STMT_EXECUTE, id(2))).isNotNull();
        assertThat(send(Command.COM_RESET_CONNECTION, new byte[0])).isNull();
        assertThat(send(Command.COM_STMT_EXECUTE, id(2))).as("reset").isNull();
    }

    @Test
    void mariaDbsPrepareAndExecuteCountsUnderTheStatementPreparedLast() {
        StatementRecord prepare = send(Command.COM_STMT_PREPARE, "SELECT 1 FROM t WHERE a = ?".getBytes(
                StandardCharsets.UTF_8));
        StatementRecord execute = send(Command.COM_STMT_EXECUTE, id(-1));
        assertThat(((DigestCounters) execute).digest().text()).isEqualTo("select ? from t where a = ?");
        prepare.completed(100, 100, false, 0, 0, 0, 9, false);
        assertThat(send(Command.COM_STMT_EXECUTE, id(9))).isSameAs(execute);
    }

    @Test
    void aClientThatPreparesAndClosesForeverKeepsItsTableSmall() {
        for (int id = 1; id <= 100_000; id++) {
            prepare("SELECT c FROM t WHERE id = ?", id);
            send(Command.COM_STMT_EXECUTE, id(id)).completed(100, 100, false, 0, 1, 0, 0, false);
            send(Command.COM_STMT_CLOSE, id(id));
        }
        assertThat(statistics.summaries()).singleElement().satisfies(row -> assertThat(row.count()).isEqualTo(100_000));
        assertThat(statistics.entries()).isEqualTo(1);
    }
}
