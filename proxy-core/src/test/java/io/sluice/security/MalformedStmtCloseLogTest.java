package io.sluice.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.sluice.protocol.Command;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.RawMySqlClient;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Malformed COM_STMT_CLOSE packets, which have no response, cost the client at most its own session and no WARN
 * line: a client can send them at will, and a log is no place it may fill (issue #42). The forms: no whole statement
 * id, an id and junk after it (the server reads the id, as MySQL does), and a frame whose sequence id is not 0 (the
 * server would answer ERR 1156 to a command that has no response and hang up, which read as a backend breaking the
 * protocol and a lost backend: two WARN lines).
 */
@Tag("server")
class MalformedStmtCloseLogTest {

    private static final int SESSIONS = 4;

    @Test
    void malformedCloseLogsNoWarning() throws Exception {
        assumeFalse(ProxyUnderTest.isDirect(), "the log is Sluice's");
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        ListAppender<ILoggingEvent> events = new ListAppender<>();
        events.start();
        root.addAppender(events);
        try (ProxyUnderTest proxy = ProxyUnderTest.builder().maxPoolSize(1).start()) {
            for (int session = 0; session < SESSIONS; session++) {
                try (RawMySqlClient raw = proxy.rawLogin(null)) {
                    raw.sendCommand(Command.COM_STMT_CLOSE, new byte[session % 4]); // no whole id
                    raw.sendCommand(Command.COM_STMT_CLOSE, new byte[4 + 40 * session]); // an id and more
                    assertThat(raw.query("SELECT 7").rows()).containsExactly(List.of("7"));
                    byte[] close = {(byte) Command.COM_STMT_CLOSE, 1, 0, 0, 0};
                    raw.writeFrameHeader(close.length, 1 + session);
                    raw.writeRaw(close);
                    List<RawMySqlClient.Packet> answer = raw.readUntilClosed();
                    assertThat(answer).hasSize(1);
                    assertThat(answer.get(0).errorCode()).isEqualTo(1156); // as MySQL: ER_NET_PACKETS_OUT_OF_ORDER
                    assertThat(answer.get(0).errorMessage()).contains("out of order");
                }
            }
            // The one backend connection was not lost: the next session gets it, and its answers.
            try (RawMySqlClient raw = proxy.rawLogin(null)) {
                assertThat(raw.query("SELECT 8").rows()).containsExactly(List.of("8"));
            }
            List<String> warnings;
            synchronized (events.list) {
                warnings = events.list.stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.WARN))
                        .map(e -> e.getLoggerName() + ": " + e.getFormattedMessage()).toList();
            }
            assertThat(warnings).isEmpty();
        } finally {
            root.detachAppender(events);
        }
    }
}
