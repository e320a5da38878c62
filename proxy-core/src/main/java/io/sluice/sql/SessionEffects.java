package io.sluice.sql;

/**
 * What a statement leaves on its session, as {@link StatementScan} finds it: the flags transaction pooling pins for
 * (and unpins at), session pooling follows lock functions by, and the session-state follower reads. They err on the
 * side of pinning: a user variable merely read pins the session too, because the session that reads one has usually
 * set it. The catalogue of what pins and why is {@code docs/isolation.md}.
 */
public final class SessionEffects {

    /** {@code @name} (not {@code @@name}): a user variable. */
    public static final int USER_VARIABLE = 1;
    /** The word TEMPORARY: CREATE or DROP TEMPORARY TABLE. */
    public static final int TEMPORARY = 1 << 1;
    /**
     * Starts with LOCK (LOCK TABLES), or a FLUSH that takes table locks held until UNLOCK TABLES: FLUSH TABLES WITH
     * READ LOCK, FLUSH TABLES ... FOR EXPORT.
     */
    public static final int LOCK_TABLES = 1 << 2;
    /** Starts with UNLOCK: UNLOCK TABLES. */
    public static final int UNLOCK_TABLES = 1 << 3;
    /** Calls GET_LOCK(). */
    public static final int GET_LOCK = 1 << 4;
    /** Calls RELEASE_LOCK(). */
    public static final int RELEASE_LOCK = 1 << 5;
    /** Calls RELEASE_ALL_LOCKS(). */
    public static final int RELEASE_ALL_LOCKS = 1 << 6;
    /** XA START or XA BEGIN. */
    public static final int XA_START = 1 << 7;
    /** XA COMMIT or XA ROLLBACK. */
    public static final int XA_END = 1 << 8;
    /** SQL_CALC_FOUND_ROWS. */
    public static final int CALC_FOUND_ROWS = 1 << 9;
    /** Starts with PREPARE: an SQL-level prepared statement. */
    public static final int SQL_PREPARE = 1 << 10;
    /** SET TRANSACTION ... (for the next transaction only, unlike SET SESSION TRANSACTION). */
    public static final int SET_TRANSACTION = 1 << 11;
    /**
     * Calls {@code LAST_INSERT_ID()} without argument somewhere (a SELECT, or an INSERT of a child row with its
     * parent's id): see transaction pooling's rewrite of it.
     */
    public static final int CALLS_LAST_INSERT_ID = 1 << 14;
    /** Calls {@code LAST_INSERT_ID(expr)}, which sets the value {@code LAST_INSERT_ID()} returns next. */
    public static final int SETS_LAST_INSERT_ID = 1 << 15;
    /**
     * A SET statement names a system variable as {@code @@name}, without {@code SESSION.} or {@code GLOBAL.}: MariaDB's
     * tracker does not report such an assignment (10.11: {@code SET @@autocommit = 0} is silent where
     * {@code SET autocommit = 0} and {@code SET @@session.autocommit = 0} are reported). See transaction pooling's rewrite of it.
     */
    public static final int UNSCOPED_SYSTEM_VARIABLE = 1 << 16;
    /** SHOW WARNINGS, SHOW ERRORS, SHOW COUNT(*) ...: reads the last statement's diagnostics, which it leaves. */
    public static final int DIAGNOSTICS = 1 << 17;
    /** Names {@code session_track_system_variables}: a client choosing what the server reports (MariaDB Connector/J). */
    public static final int TRACKED_VARIABLES = 1 << 13;
    /**
     * Runs code the text does not show: CALL (a procedure), EXECUTE (EXECUTE IMMEDIATE, or an SQL prepared statement),
     * BINLOG (events of a binary log). What it leaves on the session (a named lock, LOCK TABLES, a temporary table) is
     * known to no tracker for certain: the session keeps its connection until it ends or resets (issue #38).
     */
    public static final int STORED_CODE = 1 << 18;
    /** Starts with HANDLER: an open handler is a cursor on the server connection, which no tracker reports. */
    public static final int HANDLER = 1 << 19;
    /**
     * SET ROLE: the session's privileges, which COM_RESET_CONNECTION does not undo on MariaDB and no tracker names.
     */
    public static final int SET_ROLE = 1 << 20;
    /**
     * A SET of a variable that the next statement alone uses ({@code insert_id}, {@code identity},
     * {@code last_insert_id}, {@code rand_seed1}, {@code rand_seed2}), which mysqlbinlog's output and replication
     * tools write: re-applied on another connection it would reach the wrong statement, and left on a pooled one,
     * another session's INSERT.
     */
    public static final int STATEMENT_VARIABLE = 1 << 21;
    /** Calls {@code ROW_COUNT()}: the previous statement's count, see transaction pooling's rewrite of it. */
    public static final int CALLS_ROW_COUNT = 1 << 22;
    /** Starts with SELECT: a new SELECT replaces what {@code FOUND_ROWS()} returns. */
    public static final int SELECT_STATEMENT = 1 << 23;
    /** Calls {@code FOUND_ROWS()}. */
    public static final int CALLS_FOUND_ROWS = 1 << 24;
    /** Calls {@code ROW_COUNT()} or {@code FOUND_ROWS()}: reads what the previous statement left. */
    public static final int PREVIOUS_VALUES = CALLS_ROW_COUNT | CALLS_FOUND_ROWS;
    /** BEGIN or START TRANSACTION: the transaction that uses what a SET TRANSACTION set. */
    public static final int BEGINS_TRANSACTION = 1 << 25;
    /**
     * {@code NEXTVAL(s)} or {@code NEXT VALUE FOR s}: what {@code LASTVAL(s)} and {@code PREVIOUS VALUE FOR s} then
     * return is the server connection's, and no tracker reports it.
     */
    public static final int NEXT_SEQUENCE_VALUE = 1 << 26;
    /**
     * Starts with BACKUP ({@code BACKUP STAGE}, {@code BACKUP LOCK}, MariaDB): a lock that COM_RESET_CONNECTION does
     * not release (checked on 10.11), so the connection must be closed, never pooled again.
     */
    public static final int BACKUP_LOCK = 1 << 27;
    /**
     * CREATE, ALTER or DROP of a TRIGGER or a VIEW, RENAME TABLE or ALTER TABLE ... RENAME: which tables and views run hidden code may have
     * changed ({@link HiddenCodeNames}, decision 200), so they are read again once the statement has run. Comes with
     * {@link #STORED_CODE}: the session's next statement may use the definition before it is read.
     */
    public static final int DEFINES_HIDDEN_CODE = 1 << 12;
    /** The flags that only qualify a statement, for the pins' ends: a statement with no other leaves nothing. */
    public static final int QUALIFIERS = SELECT_STATEMENT | BEGINS_TRANSACTION;

    /** The system variable a client sets to choose what the server reports: the name, upper case. */
    public static final String TRACKED_VARIABLES_NAME = "SESSION_TRACK_SYSTEM_VARIABLES";

    private SessionEffects() {
    }
}
