package io.sluice.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.sluice.testing.JdbcDriver;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.SluiceExtension;
import io.sluice.testing.TestMariaDb;
import java.net.ServerSocket;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.Statement;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The backend goes away: at start (Sluice refuses to start) or under a live session (the client sees a lost link). */
@Tag("server")
class BackendFailureTest {

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.withDefaults();

    /** No backend reachable at start: Sluice starts anyway (see StartupProbeTest) and logins say why they fail. */
    @Test
    void startsWhenNoBackendIsReachableAndLoginsSayWhy() throws Exception {
        assumeFalse(ProxyUnderTest.isDirect(), "Sluice.start is the proxy's");
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        try (ProxyUnderTest unreachable = ProxyUnderTest.builder()
                .backendUrl("jdbc:mysql://127.0.0.1:" + closedPort + "/test").connectionTimeoutMillis(2000).start()) {
            assertThatThrownBy(() -> unreachable.connect(JdbcDriver.MARIADB, null, "").close())
                    .isInstanceOf(java.sql.SQLException.class)
                    .satisfies(e -> assertThat(e.getMessage()).contains("No backend is available"));
        }
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void backendConnectionKilledMidSession(JdbcDriver driver) throws Exception {
        try (Connection c = proxy.connect(driver, null, "")) {
            long backendId;
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT CONNECTION_ID()")) {
                assertThat(rs.next()).isTrue();
                backendId = rs.getLong(1);
            }
            TestMariaDb.get().execute("KILL " + backendId);
            Thread.sleep(100);
            assertThatThrownBy(() -> {
                try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT 1")) {
                    rs.next();
                }
            }).isInstanceOfSatisfying(SQLException.class, e -> assertThat(isLostConnection(e))
                    .as("%s (code %d, SQLSTATE %s)", e, e.getErrorCode(), e.getSQLState()).isTrue());
            assertThat(c.isValid(2)).isFalse();
        }
        try (Connection c = proxy.connect(driver, null, ""); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT 6 * 7")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getInt(1)).isEqualTo(42);
        }
    }

    private static boolean isLostConnection(SQLException e) {
        String state = e.getSQLState();
        return (state != null && state.startsWith("08"))
                || e instanceof SQLNonTransientConnectionException
                || e.getClass().getName().endsWith("CommunicationsException")
                || e.getErrorCode() == 1927; // ER_CONNECTION_KILLED (70100), what MariaDB itself sends
    }
}
