package io.sluice.scripted;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.sluice.frontend.DirectMemoryHeadroom;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.MySqlWire;
import io.sluice.testing.ScriptedClient;
import io.sluice.testing.ScriptedServerConnection;
import io.sluice.testing.ScriptedSluice;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;

/**
 * With too little direct memory left for another session (the check's figures set by the test), a new client gets
 * ERR 1040 and a close, the WARN says why, and the session already open goes on; once memory is free again clients
 * log in as before.
 */
@ExtendWith(LeakDetection.class)
class DirectMemoryRefusalTest {
    private static final long MIB = 1L << 20;

    @Test
    void newClientsAreRefusedWhileDirectMemoryIsShortAndOpenSessionsCarryOn() {
        AtomicLong used = new AtomicLong(10 * MIB);
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        Logger logger = (Logger) LoggerFactory.getLogger(DirectMemoryHeadroom.class);
        logger.addAppender(logged);
        try (ScriptedSluice sluice = ScriptedSluice.sessionPooling(2)) {
            sluice.context().useHeadroom(new DirectMemoryHeadroom(used::get, () -> 512 * MIB));
            ScriptedClient open = sluice.connectAndLogin("app");
            ScriptedServerConnection server = sluice.backend().connection(0);

            used.set(500 * MIB);
            ScriptedClient refused = sluice.connect();

            assertThat(refused.expectErr(1040)).isEqualTo(
                    "Too many connections: Sluice's direct memory is nearly exhausted (500 of 512 MiB in use)");
            refused.expectClosed();
            assertThat(sluice.context().registry().open()).as("sessions: the one open before").isOne();
            assertThat(logged.list).anySatisfy(e -> {
                assertThat(e.getLevel()).isEqualTo(Level.WARN);
                assertThat(e.getFormattedMessage()).startsWith("direct memory nearly exhausted (500 of 512 MiB");
            });

            open.send(MySqlWire.comQuery("SELECT 1"));
            server.expectQuery("SELECT 1");
            server.respond(Fixtures.oneRow("1", MySqlWire.SERVER_STATUS_AUTOCOMMIT));
            open.expectPayloads(Fixtures.oneRow("1", MySqlWire.SERVER_STATUS_AUTOCOMMIT));

            used.set(100 * MIB);
            ScriptedClient later = sluice.connect().sendLogin(ScriptedSluice.USER, null);
            later.expectOk();
        } finally {
            logger.detachAppender(logged);
        }
    }
}
