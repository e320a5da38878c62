package io.sluice.slowlog;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.sluice.Sluice;
import io.sluice.config.ProxyConfig;
import io.sluice.config.SlowQueryLogConfig;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.ProxyUnderTest;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;

/** The slow-query log through a real proxy and driver: what is logged, how it is cut, and that passwords are not. */
@ExtendWith(LeakDetection.class)
@Tag("server")
class SlowQueryLogTest {
    private final ListAppender<ILoggingEvent> events = new ListAppender<>();
    private final Logger logger = (Logger) LoggerFactory.getLogger(SlowQueryLog.LOGGER);

    @BeforeEach
    void capture() {
        events.start();
        logger.addAppender(events);
    }

    @AfterEach
    void release() {
        logger.detachAppender(events);
    }

    private static Sluice start(SlowQueryLogConfig slowLog) {
        ProxyConfig base = ProxyUnderTest.builder().config();
        return Sluice.start(base.withOperations(base.operations().withSlowQueryLog(slowLog)));
    }

    private static Connection connect(Sluice sluice) throws SQLException {
        return JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(), null, ""),
                ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
    }

    private List<String> lines() {
        return events.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
    }

    @Test
    void slowStatementsAreLoggedCutWithTheirDigestAndFastOnesAreNot() throws Exception {
        try (Sluice sluice = start(new SlowQueryLogConfig(true, 150, 40));
                Connection connection = connect(sluice); Statement statement = connection.createStatement()) {
            statement.executeQuery("SELECT 1").close();
            statement.executeQuery("SELECT SLEEP(0.3), 'a long literal that goes past forty bytes', 12345").close();

            assertThat(lines()).hasSize(1);
            String line = lines().get(0);
            assertThat(line).contains(" ms COM_QUERY ").contains("user=app").contains("backend=ds_0")
                    .contains("sql=SELECT SLEEP(0.3), 'a long literal that  [cut at 40 of 69 bytes]").contains("digest=").contains("digest_text=select sleep (?), ?");
        }
    }

    @Test
    void aSlowStatementThatCarriesAPasswordShowsItHidden() throws Exception {
        try (Sluice sluice = start(new SlowQueryLogConfig(true, 0, 1024));
                Connection connection = connect(sluice); Statement statement = connection.createStatement()) {
            for (String sql : new String[] {"ALTER USER no_such_user_here IDENTIFIED BY 'hunter2-secret'",
                "EXECUTE IMMEDIATE 'ALTER USER no_such_user_here IDENTIFIED BY ''hunter2-immediate'''"}) {
                try {
                    statement.execute(sql); // refused by the server, but logged: threshold 0 logs everything
                } catch (SQLException expected) {
                    // the point is the log line
                }
            }

            // The statement as sent, but for the password (the one redaction of decision 130).
            assertThat(lines()).anySatisfy(line -> assertThat(line)
                    .contains("sql=ALTER USER no_such_user_here IDENTIFIED BY '<secret>'")
                    .contains("(error)").contains("literals hidden"));
            // Before, the digest of EXECUTE IMMEDIATE '...' held no "identified", and its text was logged whole.
            assertThat(lines()).anySatisfy(line -> assertThat(line).contains("sql=EXECUTE IMMEDIATE '<secret>'"));
            assertThat(lines()).allSatisfy(line -> assertThat(line).doesNotContain("hunter2"));
        }
    }

    @Test
    void offLogsNothing() throws Exception {
        try (Sluice sluice = start(SlowQueryLogConfig.defaults());
                Connection connection = connect(sluice); Statement statement = connection.createStatement()) {
            statement.executeQuery("SELECT SLEEP(0.05)").close();

            assertThat(lines()).isEmpty();
        }
    }
}
