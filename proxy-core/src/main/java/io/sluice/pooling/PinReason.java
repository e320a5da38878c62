package io.sluice.pooling;

import java.util.Locale;

/**
 * Why a session in {@code pooling: TRANSACTION} keeps its backend connection between transactions: server state that
 * Sluice cannot carry to another connection. Shown per session by {@code /api/sessions?verbose} and counted by the
 * {@code sluice_session_pins_total{reason}} metric, so that a session that keeps its connection says why.
 */
public enum PinReason {
    /** {@code SET @v = ...} or {@code SELECT @v := ...}: user variables live on the server connection. */
    USER_VARIABLE,
    /** {@code CREATE TEMPORARY TABLE}. */
    TEMPORARY_TABLE,
    /** {@code LOCK TABLES}, until {@code UNLOCK TABLES}. */
    TABLE_LOCK,
    /** {@code GET_LOCK()}, until {@code RELEASE_ALL_LOCKS()} or as many {@code RELEASE_LOCK()} calls. */
    NAMED_LOCK,
    /** An XA transaction, from {@code XA START} to {@code XA COMMIT} or {@code XA ROLLBACK}. */
    XA,
    /** A server-side cursor opened by {@code COM_STMT_EXECUTE}, until the statement is reset or closed. */
    CURSOR,
    /** {@code COM_STMT_SEND_LONG_DATA}: the parameter data waits on the server for the next execute. */
    LONG_DATA,
    /** {@code SQL_CALC_FOUND_ROWS}: {@code FOUND_ROWS()} must run on the same connection, until the next SELECT. */
    FOUND_ROWS,
    /** SQL-level {@code PREPARE}: the statement lives on the server connection. */
    SQL_PREPARE,
    /**
     * {@code SET TRANSACTION ...} without SESSION: it applies to the next transaction of this connection, which no
     * tracker reports and a DO or SET does not start; the session keeps the connection until it ends or resets.
     */
    SET_TRANSACTION,
    /** The server reported a session state change its trackers did not describe. */
    SESSION_STATE,
    /** The server does not offer CLIENT_SESSION_TRACK, so Sluice cannot follow session state. */
    NO_SESSION_TRACK,
    /** {@code COM_SET_OPTION} (multi-statements on or off), which no tracker reports. */
    SET_OPTION,
    /** The client changed the session trackers Sluice relies on ({@code session_track_*}). */
    SESSION_TRACKERS,
    /**
     * Session pooling: a prepared statement Sluice cannot prepare again elsewhere (a session-pooling move): the
     * server counts statements the session has not closed and Sluice did not record them (a group of one backend at
     * login, decision 104), or an execute's parameter types went by unread (decision 106).
     */
    PREPARED_STATEMENT,
    /**
     * Session pooling with MariaDB's metadata caching: a prepared statement's result columns on the server it was to
     * move to are not those its client last received (a table altered, or backends whose schemas differ), or the
     * statement does not prepare there; the client would decode rows with the wrong definitions (issue #31).
     */
    METADATA_DIFFERS,
    /**
     * A statement that runs code its text does not show: {@code CALL}, {@code EXECUTE IMMEDIATE}, {@code EXECUTE} of
     * an SQL prepared statement, {@code BINLOG}, a stored function; text with a byte the session's character set or
     * sql_mode makes the server read otherwise than Sluice (decision 204). What it left (a named lock, LOCK TABLES, a
     * temporary table...) is not all reported by the server, so the session keeps its connection until it ends or
     * resets, and the connection is reset before anyone else gets it (issue #38).
     */
    STORED_CODE,
    /** {@code HANDLER ... OPEN}: a cursor on the server connection, reported by no tracker. */
    HANDLER,
    /** {@code SET ROLE}: the session's privileges; MariaDB's COM_RESET_CONNECTION keeps it, so the reset checks it. */
    ROLE,
    /**
     * A variable only the next statement uses ({@code SET insert_id}, {@code rand_seed1}...): it stays with the
     * connection it was set on, which no other session gets before a reset.
     */
    STATEMENT_VARIABLE,
    /**
     * {@code NEXTVAL(s)} or {@code NEXT VALUE FOR s}: {@code LASTVAL(s)} and {@code PREVIOUS VALUE FOR s} read the
     * value it returned on this server connection, which no tracker reports and Sluice does not carry.
     */
    SEQUENCE,
    /**
     * {@code BACKUP STAGE} or {@code BACKUP LOCK} (MariaDB): a lock COM_RESET_CONNECTION does not release. The session
     * keeps its connection, which is closed when the session ends, never pooled again.
     */
    BACKUP_LOCK,
    /**
     * The last statement left warnings or an error: {@code SHOW WARNINGS} and {@code @@warning_count} read them on
     * this connection. The session keeps it until its next statement, and no other session sees them: MariaDB keeps
     * them through statements on no table, so a connection that held them is reset before it goes back.
     */
    DIAGNOSTICS;

    /** The name shown in the admin API and in metrics: {@code user_variable}. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
