package io.sluice.isolation;

import java.util.List;

/**
 * A kind of state a session can leave on its server connection, with the statement that makes it, the statements that
 * observe it (run by its owner they show it still there, run by another session they show whether it leaked), and
 * the statements that end it.
 *
 * <p>Statements are templates: {@code {n}} is a number that differs from step to step (so that one session's value
 * is told from another's), and {@code {lock}} a named-lock name of the run's own database. In a stored program
 * {@code {n}} becomes its parameter ({@code n}) or the inserted row's column ({@code NEW.n}).
 *
 * <p>No statement of the corpus may block: writes go to MyISAM tables (a statement-long table lock, never held across
 * statements) or are plain auto-increment inserts into {@code tx} (no gap or key conflicts); the table that
 * {@code LOCK TABLES ... READ} locks ({@code lt}) is never written; GET_LOCK waits 0 seconds.
 */
enum StateKind {
    TEMPORARY_TABLE("CREATE TEMPORARY TABLE IF NOT EXISTS tmp_iso (n INT)",
            List.of("SELECT COUNT(*) FROM tmp_iso", "INSERT INTO tmp_iso VALUES ({n})", "SELECT SUM(n) FROM tmp_iso"),
            "DROP TEMPORARY TABLE IF EXISTS tmp_iso"),
    USER_VARIABLE("SET @iso_v = {n}",
            List.of("SELECT @iso_v"),
            "SET @iso_v = NULL"),
    NAMED_LOCK("DO GET_LOCK('{lock}', 0)",
            // CONNECTION_ID() only inside a comparison: 1 for the owner, 0 for another session, NULL when free.
            List.of("SELECT IS_USED_LOCK('{lock}') = CONNECTION_ID()", "SELECT GET_LOCK('{lock}', 0)"),
            "SELECT RELEASE_LOCK('{lock}')"),
    TABLE_LOCK("LOCK TABLES lt READ",
            // Under LOCK TABLES a table that was not locked gives 1100; lt itself is only ever read.
            List.of("SELECT COUNT(*) FROM o", "SELECT COUNT(*) FROM lt"),
            "UNLOCK TABLES"),
    ROLE("SET ROLE " + IsolationSchema.ROLE,
            List.of("SELECT CURRENT_ROLE()"),
            "SET ROLE NONE"),
    SYSTEM_VARIABLE("SET SESSION div_precision_increment = {n} % 20, time_zone = '+05:30',"
            + " sql_mode = 'NO_ENGINE_SUBSTITUTION,NO_UNSIGNED_SUBTRACTION'",
            List.of("SELECT @@session.div_precision_increment, @@session.time_zone, @@session.sql_mode",
                    "SELECT 1 / 7, CAST(0 AS UNSIGNED) - 1"),
            "SET SESSION div_precision_increment = DEFAULT, time_zone = DEFAULT, sql_mode = DEFAULT"),
    INSERT_ID("SET insert_id = 1000 + {n}",
            List.of("SELECT @@insert_id", "INSERT INTO ai (n) VALUES ({n})"),
            "SET insert_id = 0"),
    TIMESTAMP("SET timestamp = 1000000000 + {n}",
            // The clock itself is not deterministic: only a timestamp that was set is shown.
            List.of("SELECT IF(@@timestamp < 1500000000, @@timestamp, 'now')",
                    "SELECT IF(UNIX_TIMESTAMP() < 1500000000, FROM_UNIXTIME(UNIX_TIMESTAMP(), '%Y'), 'now')"),
            "SET timestamp = DEFAULT"),
    WARNINGS("DO CAST(CONCAT({n}, 'abc') AS UNSIGNED)",
            List.of("SHOW WARNINGS", "SELECT @@warning_count", "SHOW COUNT(*) WARNINGS"),
            "DO 0"),
    FOUND_ROWS("SELECT SQL_CALC_FOUND_ROWS id INTO @iso_fr FROM o WHERE id <= {n} % 9 + 1 ORDER BY id LIMIT 1",
            List.of("SELECT FOUND_ROWS()", StateKind.PREPARED + "SELECT FOUND_ROWS()"),
            "DO 0"),
    ROW_COUNT("UPDATE o SET v = v + 1 WHERE id <= {n} % 9",
            // a server-prepared one too: its text cannot be rewritten on the way, the statement prepared can
            List.of("SELECT ROW_COUNT()", StateKind.PREPARED + "SELECT ROW_COUNT()"),
            "DO 0"),
    LAST_INSERT_ID("INSERT INTO ai (n) VALUES ({n})",
            // read by a SELECT, by an INSERT (a child row with its parent's id) and by a server-prepared SELECT
            List.of("SELECT LAST_INSERT_ID()", "INSERT INTO lid (v) VALUES (LAST_INSERT_ID()) RETURNING v",
                    StateKind.PREPARED + "SELECT LAST_INSERT_ID() + 0"),
            "DO LAST_INSERT_ID(0)"),
    SEQUENCE("DO NEXTVAL(sq)",
            // the value the session's own NEXTVAL returned: NULL for a session that drew none
            List.of("SELECT LASTVAL(sq)", "SELECT PREVIOUS VALUE FOR sq"),
            "DO 0"),
    HANDLER("HANDLER hd OPEN",
            List.of("HANDLER hd READ `PRIMARY` FIRST", "HANDLER hd READ `PRIMARY` NEXT"),
            "HANDLER hd CLOSE"),
    SQL_PREPARE("PREPARE iso_ps FROM 'SELECT 42'",
            List.of("EXECUTE iso_ps"),
            "DEALLOCATE PREPARE iso_ps"),
    NEXT_TRANSACTION("SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED, READ ONLY",
            // The next transaction only: in autocommit that is the next statement, which reads uncommitted rows
            // of tx and may not write (1792).
            List.of("SELECT COUNT(*) FROM tx", "INSERT INTO ai (n) VALUES ({n})"),
            "DO 0"),
    TRANSACTION("START TRANSACTION",
            List.of("SELECT @@in_transaction, COUNT(*) FROM tx", "INSERT INTO tx (n) VALUES ({n})"),
            "COMMIT");

    /** Begins a probe that runs as a server-side prepared statement (COM_STMT_PREPARE, COM_STMT_EXECUTE). */
    static final String PREPARED = "/* prepared */ ";

    private final String make;
    private final List<String> probes;
    private final String end;

    StateKind(String make, List<String> probes, String end) {
        this.make = make;
        this.probes = probes;
        this.end = end;
    }

    /** The statement that makes the state, a template. */
    String make() {
        return make;
    }

    /** Statements that observe the state (some use it up or add to it, as a client would), templates. */
    List<String> probes() {
        return probes;
    }

    /** The statement that ends the state, a template. */
    String end() {
        return end;
    }

    /** The routine and trigger-table suffix of this kind. */
    String id() {
        return name().toLowerCase();
    }
}
