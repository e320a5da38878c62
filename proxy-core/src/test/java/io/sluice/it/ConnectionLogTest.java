package io.sluice.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.ProxyUnderTest;
import java.sql.Connection;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** The connection log: an INFO line when a client has logged in, and one when it has gone, with how long it stayed. */
@Tag("server")
class ConnectionLogTest {

    @Test
    void oneLineAtLoginAndOneAtDisconnect() throws Exception {
        assumeFalse(ProxyUnderTest.isDirect(), "the connection log is Sluice's");
        Logger logger = (Logger) LoggerFactory.getLogger("io.sluice.connections");
        ListAppender<ILoggingEvent> events = new ListAppender<>();
        Level before = logger.getLevel();
        events.start();
        logger.addAppender(events);
        logger.setLevel(Level.INFO);
        try (ProxyUnderTest proxy = ProxyUnderTest.builder().start()) {
            try (Connection c = proxy.connect(JdbcDriver.MARIADB, null, "");
                 Statement s = c.createStatement()) {
                s.execute("SELECT 1");
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (events.list.size() < 2 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            List<String> lines = events.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
            assertThat(lines).hasSize(2);
            assertThat(lines.get(0)).matches("client /127\\.0\\.0\\.1:\\d+ #\\d+ logged in as '" + proxy.user()
                    + "' to data source ds_0 \\(schema null\\)");
            assertThat(lines.get(1)).matches("client /127\\.0\\.0\\.1:\\d+ #\\d+ \\('" + proxy.user()
                    + "'\\) disconnected after \\d+ ms");
            assertThat(events.list).allSatisfy(e -> assertThat(e.getLevel()).isEqualTo(Level.INFO));
        } finally {
            logger.detachAppender(events);
            logger.setLevel(before);
        }
    }
}
