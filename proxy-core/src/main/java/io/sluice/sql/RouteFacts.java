package io.sluice.sql;

/**
 * What {@link StatementScan} finds in a statement for the read/write router to decide where it may run (the
 * decision itself, and decision 096's rules, are the router's): flags from anywhere in the statement, beside its
 * first three words.
 */
public final class RouteFacts {

    /** FOR UPDATE, FOR SHARE, LOCK IN SHARE MODE. */
    public static final int LOCKING = 1;
    /** INTO (SELECT ... INTO OUTFILE / @x, INSERT INTO). */
    public static final int INTO = 1 << 1;
    /** Calls a function that may write or take a lock: a stored function, GET_LOCK, NEXTVAL, LAST_INSERT_ID(x)... */
    public static final int SIDE_EFFECT = 1 << 2;
    /** Reads what one server connection holds: LAST_INSERT_ID(), CONNECTION_ID(), @@last_gtid, PREVIOUS VALUE. */
    public static final int SESSION_STATE = 1 << 3;
    /** Reads the previous statement's diagnostics: FOUND_ROWS(), ROW_COUNT(), @@warning_count. */
    public static final int DIAGNOSTICS = 1 << 4;
    /** Leaves state on its connection: a user variable, SQL_CALC_FOUND_ROWS. */
    public static final int PINNING = 1 << 5;
    /** More code after a {@code ;}: a multi-statement. */
    public static final int MULTI = 1 << 6;
    /** {@code /* sluice: primary *}{@code /}, or ShardingSphere's write-route-only hint. */
    public static final int HINT_PRIMARY = 1 << 7;
    /** {@code /* sluice: replica *}{@code /}. */
    public static final int HINT_REPLICA = 1 << 8;
    /** READ ONLY (START TRANSACTION READ ONLY). */
    public static final int READ_ONLY = 1 << 9;
    /** AND CHAIN. */
    public static final int CHAIN = 1 << 10;
    /** autocommit set to 0, OFF or FALSE. */
    public static final int AUTOCOMMIT_OFF = 1 << 11;
    /** autocommit set to 1, ON, TRUE or DEFAULT. */
    public static final int AUTOCOMMIT_ON = 1 << 12;
    /** INSERT, UPDATE, DELETE or REPLACE after the first word, outside parentheses (WITH ... UPDATE). */
    public static final int WRITE_WORD = 1 << 13;
    /** The word ANALYZE after the first (EXPLAIN ANALYZE). */
    public static final int ANALYZE = 1 << 14;
    /** The word TO (ROLLBACK TO SAVEPOINT). */
    public static final int TO = 1 << 15;
    /** The word LOCK or EXPORT after the first (FLUSH TABLES WITH READ LOCK, FLUSH TABLES ... FOR EXPORT). */
    public static final int LOCK_WORD = 1 << 16;
    /** CREATE or DROP TEMPORARY TABLE: pins, and leaves the transaction open. */
    public static final int TEMPORARY = 1 << 17;
    /** READ WRITE (START TRANSACTION READ WRITE): read-write whatever the session's access mode says. */
    public static final int READ_WRITE = 1 << 18;
    /** {@code tx_read_only} or {@code transaction_read_only} set to anything but 1, ON or TRUE. */
    public static final int ACCESS_READ_WRITE = 1 << 19;
    /** A versioned executable comment ({@code /*!NNNNN}, {@code /*M!}): the statement has two readings. */
    public static final int VERSIONED = 1 << 20;
    /** GLOBAL, PERSIST, {@code @@global.x}: a SET of the server, not the session. */
    public static final int SERVER_WIDE = 1 << 21;

    private RouteFacts() {
    }
}
