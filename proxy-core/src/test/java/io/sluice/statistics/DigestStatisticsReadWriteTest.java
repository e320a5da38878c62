package io.sluice.statistics;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Sluice;
import io.sluice.config.PoolingConfig;
import io.sluice.config.ProxyConfig;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.ReplicationGroup;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Statement statistics under read/write splitting: the group is the split group's name, reads count as run on a
 * replica and writes on the primary, prepared statements included.
 */
@Tag("server")
class DigestStatisticsReadWriteTest {
    private static ReplicationGroup servers;
    private static Sluice sluice;

    @BeforeAll
    static void start() {
        servers = ReplicationGroup.start("digrw", 1);
        servers.primary().execute("CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY, v INT)",
                "INSERT INTO app.t VALUES (1, 1), (2, 2), (3, 3)");
        servers.awaitCaughtUp();
        ProxyConfig config = servers.sluiceConfig(3000)
                .pooling(PoolingConfig.defaults())
                .readWriteSplitting(servers.splitGroup("app_rw"))
                .build();
        sluice = Sluice.start(config);
    }

    @AfterAll
    static void stop() {
        if (sluice != null) {
            sluice.close();
        }
        if (servers != null) {
            servers.close();
        }
    }

    @Test
    void readsCountOnTheReplicaAndWritesOnThePrimaryOfTheSplitGroup() throws Exception {
        try (Connection c = JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(), "app_rw",
                        "useServerPrepStmts=true"), ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
                Statement s = c.createStatement();
                PreparedStatement read = c.prepareStatement("SELECT v FROM t WHERE id = ?")) {
            for (int i = 0; i < 6; i++) {
                read.setInt(1, 1 + i % 3);
                try (ResultSet rs = read.executeQuery()) {
                    assertThat(rs.next()).isTrue();
                }
            }
            assertThat(s.executeUpdate("UPDATE t SET v = v + 1 WHERE id = 1")).isEqualTo(1);
        }
        List<DigestSummary> rows = sluice.statistics().summaries();
        DigestSummary reads = rows.stream().filter(r -> r.digestText().equals("select v from t where id = ?"))
                .findFirst().orElseThrow();
        DigestSummary writes = rows.stream().filter(r -> r.digestText().equals("update t set v = v + ? where id = ?"))
                .findFirst().orElseThrow();
        assertThat(reads.group()).isEqualTo("app_rw");
        assertThat(reads.count()).isEqualTo(6);
        assertThat(reads.replica()).isEqualTo(6);
        assertThat(writes.count()).isEqualTo(1);
        assertThat(writes.replica()).isZero();
        assertThat(writes.primary()).isEqualTo(1);
        assertThat(writes.rowsAffected()).isEqualTo(1);
    }
}
