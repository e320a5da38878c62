package io.sluice.pooling;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Sluice;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.PoolingConfig;
import io.sluice.config.ProxyConfig;
import io.sluice.testing.ExtraMariaDb;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.TestMariaDb;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Transaction pooling against a MariaDB with a binary log, as most production servers run: each write's OK packet
 * then reports {@code last_gtid}, a read-only variable. Sessions that write take turns on one server connection;
 * none may get ERR 1238 ("Variable 'last_gtid' is a read only variable") from Sluice replaying or restoring it.
 */
@Tag("server")
class BinaryLogServerTest {
    private static ExtraMariaDb server;

    @BeforeAll
    static void startServer() {
        server = ExtraMariaDb.start("binlog", List.of("--log-bin=mariadb-bin", "--server-id=11"));
        server.execute("CREATE DATABASE binlog_test", "CREATE TABLE binlog_test.t (id INT PRIMARY KEY)");
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void sessionsThatWriteShareConnectionsWithoutReplayingLastGtid() throws Exception {
        ProxyConfig config = ProxyConfig.builder()
                .port(0)
                .user(ProxyUnderTest.USER, ProxyUnderTest.PASSWORD)
                .pooling(PoolingConfig.transaction())
                .dataSource(new DataSourceConfig("ds_0", server.jdbcUrl(null), TestMariaDb.ROOT_USER,
                        TestMariaDb.ROOT_PASSWORD, 3000, 60_000, 600_000, 1, 0, 1, false))
                .build();
        try (Sluice sluice = Sluice.start(config);
             Connection a = connect(sluice);
             Connection b = connect(sluice)) {
            assertThat(scalar(a, "SELECT @@log_bin")).isEqualTo("1");
            // As PyMySQL does by default: autocommit off, each write committed.
            a.setAutoCommit(false);
            b.setAutoCommit(false);
            execute(a, "INSERT INTO t VALUES (1)");
            a.commit();
            assertThat(scalar(a, "SELECT @@last_gtid")).matches("0-11-\\d+");
            a.commit();
            // b takes the one server connection, on which a left its last_gtid.
            assertThat(scalar(b, "SELECT COUNT(*) FROM t")).isEqualTo("1");
            b.commit();
            for (int i = 2; i < 10; i++) {
                Connection writer = i % 2 == 0 ? a : b;
                Connection reader = i % 2 == 0 ? b : a;
                execute(writer, "INSERT INTO t VALUES (" + i + ")");
                writer.commit();
                assertThat(scalar(reader, "SELECT COUNT(*) FROM t")).isEqualTo(String.valueOf(i));
                reader.commit();
            }
        }
    }

    private static Connection connect(Sluice sluice) throws SQLException {
        return JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(), "binlog_test", ""),
                ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
    }

    private static void execute(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    private static String scalar(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }
}
