package io.sluice.sql;

import io.sluice.sql.SqlLexer.Source;
import java.util.ArrayList;
import java.util.List;

/**
 * The words {@link StatementScan} knows, spelt as their names, looked up by length: one vocabulary for what a
 * statement leaves on its session and where it may run.
 */
public enum Keyword {
    // first words
    SELECT, WITH, VALUES, TABLE, DO, HELP, SHOW, EXPLAIN, DESCRIBE, DESC, ANALYZE, SET, USE, BEGIN, START, COMMIT,
    ROLLBACK, SAVEPOINT, RELEASE, XA, LOCK, UNLOCK, PREPARE, EXECUTE, DEALLOCATE, HANDLER, GET, FLUSH, CREATE,
    ALTER, DROP, RENAME, TRUNCATE, GRANT, REVOKE, INSTALL, UNINSTALL, INSERT, UPDATE, DELETE, REPLACE, LOAD, CALL,
    // words after the first
    FOR, SHARE, IN, INTO, READ, ONLY, AND, CHAIN, TO, TRANSACTION, STATEMENT, SQL_CALC_FOUND_ROWS, TEMPORARY,
    AUTOCOMMIT, NEXT, PREVIOUS, VALUE, WARNINGS, ERRORS, COUNT, STATUS, PROCESSLIST, MASTER, BINLOG, BINARY,
    SLAVE, SLAVES, REPLICA, REPLICAS, ENGINE, PROFILE, PROFILES, RELAYLOG, ALL, GLOBAL, SESSION, LOCAL, FULL,
    NO_WRITE_TO_BINLOG, EXPORT, WRITE, RECURSIVE, PERSIST, PERSIST_ONLY, PASSWORD, ROLE, DIAGNOSTICS, REFERENCES,
    TRIGGER, VIEW,
    // words after which a stored program's body starts a statement
    THEN, ELSE, LOOP, REPEAT,
    // functions
    GET_LOCK, RELEASE_LOCK, RELEASE_ALL_LOCKS, IS_FREE_LOCK, IS_USED_LOCK, NEXTVAL, SETVAL, LAST_INSERT_ID, LASTVAL,
    CONNECTION_ID, FOUND_ROWS, ROW_COUNT,
    // the transaction access mode's variables
    TX_READ_ONLY, TRANSACTION_READ_ONLY,
    // variables only the next statement uses, and the one that chooses what the server reports
    INSERT_ID, IDENTITY, RAND_SEED1, RAND_SEED2, SESSION_TRACK_SYSTEM_VARIABLES;

    private static final Keyword[][] BY_LENGTH = byLength();

    private static Keyword[][] byLength() {
        List<List<Keyword>> lists = new ArrayList<>();
        for (Keyword word : values()) {
            while (lists.size() <= word.name().length()) {
                lists.add(new ArrayList<>());
            }
            lists.get(word.name().length()).add(word);
        }
        Keyword[][] table = new Keyword[lists.size()][];
        for (int i = 0; i < table.length; i++) {
            table[i] = lists.get(i).toArray(new Keyword[0]);
        }
        return table;
    }

    /** The keyword the text from {@code start} to {@code end} spells, in any case, or {@code null}. */
    public static <T> Keyword of(Source<T> s, T text, int start, int end) {
        int length = end - start;
        if (length >= BY_LENGTH.length) {
            return null;
        }
        for (Keyword word : BY_LENGTH[length]) {
            if (SqlLexer.is(s, text, start, end, word.name())) {
                return word;
            }
        }
        return null;
    }
}
