package io.sluice.balancer.replication;

import java.util.List;

/**
 * The statements a switchover runs on each server (issue #40), in MariaDB's words or MySQL 8's. Plain text: the
 * switchover sends them on connections of its own account, in this order:
 *
 * <ol>
 *   <li>{@link #fence} on the old primary: read-only, then its last position;</li>
 *   <li>{@link #awaitApplied} on the candidate: waits until it applied that position (0 when it has);</li>
 *   <li>{@link #promote} on the candidate: replication stopped and forgotten, writable;</li>
 *   <li>{@link #replicateFrom} on every other server, the old primary last ({@link #demotedPrimaryFirst} before it):
 *       replicate from the new primary by GTID.</li>
 * </ol>
 */
public enum PromotionStatements {
    /** MariaDB 10.5+: {@code read_only}, {@code gtid_binlog_pos}, {@code MASTER_GTID_WAIT}, {@code CHANGE MASTER}. */
    MARIADB {
        @Override
        public List<String> fence() {
            return List.of("SET GLOBAL read_only = ON", "SELECT @@GLOBAL.gtid_binlog_pos");
        }

        @Override
        public String awaitApplied(String position, long timeoutSeconds) {
            return "SELECT MASTER_GTID_WAIT(" + quote(position) + ", " + timeoutSeconds + ")";
        }

        @Override
        public List<String> promote() {
            return List.of("STOP SLAVE", "RESET SLAVE ALL", "SET GLOBAL read_only = OFF");
        }

        @Override
        public List<String> demotedPrimaryFirst() {
            // It never replicated: its own binlog position is where it starts from the new primary.
            return List.of("SET GLOBAL gtid_slave_pos = @@GLOBAL.gtid_binlog_pos");
        }

        @Override
        public List<String> replicateFrom(String host, int port, String user, String password) {
            return List.of("STOP SLAVE", "CHANGE MASTER TO MASTER_HOST = " + quote(host) + ", MASTER_PORT = " + port
                    + ", MASTER_USER = " + quote(user) + ", MASTER_PASSWORD = " + quote(password)
                    + ", MASTER_USE_GTID = slave_pos", "START SLAVE");
        }

        @Override
        public String unfence() {
            return "SET GLOBAL read_only = OFF";
        }
    },
    /**
     * MySQL 8.0.23+ and 8.4: {@code super_read_only}, {@code gtid_executed}, {@code CHANGE REPLICATION SOURCE}, with
     * {@code GET_SOURCE_PUBLIC_KEY = 1}: a replication account of {@code caching_sha2_password} (the default since
     * 8.0, the only built-in one left in 8.4) cannot otherwise log in to a new source without TLS (decision 186).
     */
    MYSQL {
        @Override
        public List<String> fence() {
            return List.of("SET GLOBAL super_read_only = ON", "SELECT @@GLOBAL.gtid_executed");
        }

        @Override
        public String awaitApplied(String position, long timeoutSeconds) {
            return "SELECT WAIT_FOR_EXECUTED_GTID_SET(" + quote(position) + ", " + timeoutSeconds + ")";
        }

        @Override
        public List<String> promote() {
            return List.of("STOP REPLICA", "RESET REPLICA ALL", "SET GLOBAL super_read_only = OFF",
                    "SET GLOBAL read_only = OFF");
        }

        @Override
        public List<String> demotedPrimaryFirst() {
            return List.of(); // auto-positioning starts from its gtid_executed
        }

        @Override
        public List<String> replicateFrom(String host, int port, String user, String password) {
            return List.of("STOP REPLICA", "CHANGE REPLICATION SOURCE TO SOURCE_HOST = " + quote(host)
                    + ", SOURCE_PORT = " + port + ", SOURCE_USER = " + quote(user) + ", SOURCE_PASSWORD = "
                    + quote(password) + ", SOURCE_AUTO_POSITION = 1, GET_SOURCE_PUBLIC_KEY = 1", "START REPLICA");
        }

        @Override
        public String unfence() {
            return "SET GLOBAL super_read_only = OFF";
        }
    };

    /** The old primary made read-only, then its position read (the last statement's one value). */
    public abstract List<String> fence();

    /** One value: 0 once the server applied {@code position}; -1 (MariaDB) or 1 (MySQL) on timeout. */
    public abstract String awaitApplied(String position, long timeoutSeconds);

    /** The candidate made a primary. */
    public abstract List<String> promote();

    /** What the old primary runs before {@link #replicateFrom}. */
    public abstract List<String> demotedPrimaryFirst();

    /** A server pointed at the new primary, replicating by GTID. */
    public abstract List<String> replicateFrom(String host, int port, String user, String password);

    /** The old primary writable again: a switchover that failed before the promotion rolls back with it. */
    public abstract String unfence();

    /** Whether {@link #awaitApplied}'s answer says the position was applied. */
    public static boolean applied(String answer) {
        return "0".equals(answer == null ? null : answer.strip());
    }

    /** The flavour of the server a reading came from: its positions say which. */
    public static PromotionStatements of(ReplicationReading reading) {
        return reading.applied() instanceof MySqlGtidSet ? MYSQL : MARIADB;
    }

    /** {@code statement} with its password values masked, for logs, plans and the admin API. */
    public static String masked(String statement) {
        return statement.replaceAll("(MASTER_PASSWORD|SOURCE_PASSWORD) = '(?:[^'\\\\]|''|\\\\.)*'", "$1 = '***'");
    }

    /** A SQL string literal: quotes doubled, backslashes escaped. */
    static String quote(String text) {
        return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'";
    }
}
