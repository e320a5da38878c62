package io.sluice.faults;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * The ledger the load writes on each server: every transaction inserts its row in {@code ledger} and the same key
 * in {@code mirror}. Checked on the servers themselves, not through Sluice: every transaction a worker saw
 * acknowledged is there (none lost), no key is in one table without the other (none half-applied), and no key is
 * on two servers.
 */
final class Ledger {
    static final String SCHEMA = "fault_ledger";
    /**
     * The account Sluice logs in to the servers with: no privilege beyond the schema, so that {@code max_connections}
     * holds for it (MariaDB lets an account with SUPER in whatever the count).
     */
    static final String USER = "fault_app";
    static final String PASSWORD = "fault";

    /** How the check reaches a server as root, directly. */
    interface RootAccess {
        Connection rootConnection() throws SQLException;
    }

    private Ledger() {
    }

    /** Creates the schema and empty tables on {@code server}. */
    static void create(RootAccess server) throws SQLException {
        execute(server, "CREATE DATABASE IF NOT EXISTS " + SCHEMA,
                "CREATE USER IF NOT EXISTS " + USER + "@'%' IDENTIFIED BY '" + PASSWORD + "'",
                "GRANT ALL ON " + SCHEMA + ".* TO " + USER + "@'%'",
                "CREATE TABLE IF NOT EXISTS " + SCHEMA + ".ledger (worker INT NOT NULL, seq INT NOT NULL,"
                        + " amount INT NOT NULL, PRIMARY KEY (worker, seq)) ENGINE=InnoDB",
                "CREATE TABLE IF NOT EXISTS " + SCHEMA + ".mirror (worker INT NOT NULL, seq INT NOT NULL,"
                        + " PRIMARY KEY (worker, seq)) ENGINE=InnoDB",
                "TRUNCATE TABLE " + SCHEMA + ".ledger", "TRUNCATE TABLE " + SCHEMA + ".mirror");
    }

    private static void execute(RootAccess server, String... sql) throws SQLException {
        try (Connection c = server.rootConnection(); Statement s = c.createStatement()) {
            for (String each : sql) {
                s.execute(each);
            }
        }
    }

    /**
     * Checks the load's transactions against what the servers hold.
     *
     * @return the transactions applied whose COMMIT the client never saw acknowledged (in doubt: the error came after
     *     the server had committed); they are whole, and at most one per error
     */
    static int check(LedgerLoad load, Map<String, RootAccess> servers) throws SQLException {
        Set<Long> applied = new HashSet<>();
        for (Map.Entry<String, RootAccess> entry : servers.entrySet()) {
            String server = entry.getKey();
            Set<Long> ledger = keys(entry.getValue(), "ledger");
            Set<Long> mirror = keys(entry.getValue(), "mirror");
            assertThat(mirror).as("%s: no transaction half-applied (ledger and mirror hold the same keys)", server)
                    .isEqualTo(ledger);
            for (long key : ledger) {
                assertThat(applied.add(key)).as("%s: transaction %s applied on one server only", server, key)
                        .isTrue();
            }
        }
        int acknowledged = 0;
        for (LedgerLoad.Worker worker : load.workers()) {
            for (int seq : worker.acknowledged) {
                acknowledged++;
                assertThat(applied).as("worker %d, transaction %d: acknowledged, so applied", worker.id, seq)
                        .contains(key(worker.id, seq));
            }
        }
        int inDoubt = applied.size() - acknowledged;
        long failedOnSessions = load.failures().stream().filter(f -> !f.isLogin()).count();
        assertThat((long) inDoubt).as("applied but never acknowledged: at most one per error").isBetween(0L,
                failedOnSessions);
        return inDoubt;
    }

    private static Set<Long> keys(RootAccess server, String table) throws SQLException {
        Set<Long> keys = new HashSet<>();
        try (Connection c = server.rootConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT worker, seq FROM " + SCHEMA + "." + table)) {
            while (rs.next()) {
                keys.add(key(rs.getInt(1), rs.getInt(2)));
            }
        }
        return keys;
    }

    private static long key(int worker, int seq) {
        return (long) worker << 32 | seq;
    }
}
