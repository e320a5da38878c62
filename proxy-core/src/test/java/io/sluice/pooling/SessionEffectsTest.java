package io.sluice.pooling;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.readwrite.StatementClassifier;
import io.sluice.sql.SessionEffects;
import io.sluice.sql.StatementScan;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** What the one scan ({@link StatementScan}) finds a statement leaves on its session, and session pooling's filter. */
class SessionEffectsTest {

    /** The one scan, reused as transaction pooling reuses it. */
    private static final StatementScan SCAN = new StatementScan();

    static int sniff(ByteBuf buf, int from, int to) {
        return SCAN.scan(StatementClassifier.BYTES, buf, from, to).effects();
    }


    private static int sniff(String sql) {
        ByteBuf buf = Unpooled.copiedBuffer("xx" + sql, StandardCharsets.UTF_8);
        try {
            return sniff(buf, 2, buf.writerIndex()) & ~SessionEffects.QUALIFIERS; // see below
        } finally {
            buf.release();
        }
    }

    private static boolean mayCallLockFunction(String sql) {
        ByteBuf buf = Unpooled.copiedBuffer("xx" + sql + "yy", StandardCharsets.UTF_8);
        try {
            return HiddenStateFilter.mayCallLockFunction(buf, 2, buf.writerIndex() - 2);
        } finally {
            buf.release();
        }
    }

    /** Session pooling lexes a statement for the lock functions only past this filter (decision 108). */
    @Test
    void theLockFilterLetsThroughEveryStatementThatCallsALockFunction() {
        String[] calls = {"SELECT GET_LOCK('a', 1)", "select get_lock('a', 1)", "DO Release_Lock('a')",
            "SELECT RELEASE_ALL_LOCKS()", "SELECT /*!50000 GET_LOCK('x', 0) */", "SELECT GET_LOCK(?, 0)",
            "SELECT 1; SELECT get_LOCK('b', 2)"};
        for (String sql : calls) {
            assertThat(mayCallLockFunction(sql)).as(sql).isTrue();
            assertThat(sniff(sql) & (SessionEffects.GET_LOCK | SessionEffects.RELEASE_LOCK
                    | SessionEffects.RELEASE_ALL_LOCKS)).as(sql).isNotZero();
        }
        String[] others = {"SELECT c FROM sbtest1 WHERE id = 42", "UPDATE user_accounts SET last_login = NOW()",
            "SELECT IS_FREE", "BEGIN", "", "SELECT a_lo", "SELECT x_LOC"};
        for (String sql : others) {
            assertThat(mayCallLockFunction(sql)).as(sql).isFalse();
        }
        // Underscore then LOCK in a name or a literal gets through the filter; the lexer then finds no call.
        assertThat(mayCallLockFunction("SELECT 'get_lock' FROM row_locks")).isTrue();
        assertThat(sniff("SELECT 'get_lock' FROM row_locks")).isZero();
    }

    private static boolean mayLeaveHiddenState(String sql) {
        ByteBuf buf = Unpooled.copiedBuffer("xx" + sql + "yy", StandardCharsets.UTF_8);
        try {
            return HiddenStateFilter.mayLeaveHiddenState(buf, 2, buf.writerIndex() - 2);
        } finally {
            buf.release();
        }
    }

    /** Issue #38: statements whose text hides what they leave on the connection. */
    @Test
    void codeTheTextDoesNotShowIsStoredCode() {
        String[] opaque = {"EXECUTE IMMEDIATE 'CREATE TEMPORARY TABLE t (a INT)'", "call p()", "  /* x */ CALL db.p(1)",
            "EXECUTE stmt USING @a", "execute immediate concat('LOCK TABLES ', 't', ' READ')",
            "BINLOG 'AAAA'"};
        for (String sql : opaque) {
            assertThat(sniff(sql) & SessionEffects.STORED_CODE).as(sql).isNotZero();
            assertThat(mayLeaveHiddenState(sql)).as(sql).isTrue();
        }
        assertThat(sniff("HANDLER t OPEN AS h") & SessionEffects.HANDLER).isNotZero();
        assertThat(sniff("SET ROLE r1") & SessionEffects.SET_ROLE).isNotZero();
        assertThat(sniff("set role none") & SessionEffects.SET_ROLE).isNotZero();
        assertThat(mayLeaveHiddenState("SET ROLE r1")).isTrue();
        for (String sql : new String[] {"SELECT 'CALL p()'", "SELECT execute FROM t", "SELECT c FROM sbtest1"}) {
            assertThat(sniff(sql) & (SessionEffects.STORED_CODE | SessionEffects.HANDLER)).as(sql).isZero();
            assertThat(mayLeaveHiddenState(sql)).as(sql).isFalse();
        }
    }

    @Test
    void variablesOnlyTheNextStatementUsesAreStatementVariables() {
        String[] sets = {"SET insert_id = 5", "SET INSERT_ID=5", "SET @@insert_id = 5", "SET @@session.insert_id = 5",
            "SET rand_seed1 = 1, rand_seed2 = 2", "SET last_insert_id = 9", "SET identity = 3",
            "SET timestamp = 1, insert_id = 4"};
        for (String sql : sets) {
            assertThat(sniff(sql) & SessionEffects.STATEMENT_VARIABLE).as(sql).isNotZero();
        }
        String[] others = {"SET @x = LAST_INSERT_ID()", "SELECT @@insert_id", "SET time_zone = '+00:00'",
            "SELECT LAST_INSERT_ID(5)"};
        for (String sql : others) {
            assertThat(sniff(sql) & SessionEffects.STATEMENT_VARIABLE).as(sql).isZero();
        }
    }

    @Test
    void readingTheLastStatementsDiagnosticsIsDiagnostics() {
        for (String sql : new String[] {"SHOW WARNINGS", "show errors limit 1", "SHOW COUNT(*) WARNINGS",
            "SELECT @@warning_count", "SELECT @@error_count, @@warning_count", "GET DIAGNOSTICS @n = NUMBER",
            "GET CURRENT DIAGNOSTICS CONDITION 1 @m = MESSAGE_TEXT"}) {
            assertThat(sniff(sql) & SessionEffects.DIAGNOSTICS).as(sql).isNotZero();
        }
        assertThat(sniff("SELECT 1") & SessionEffects.DIAGNOSTICS).isZero();
    }

    /** Issue #38 (F1 of the differential test): a multi-statement's later statements are read as statements too. */
    @Test
    void everyStatementOfAMultiStatementIsRead() {
        assertThat(sniff("DO 0; SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED, READ ONLY")
                & SessionEffects.SET_TRANSACTION).isNotZero();
        assertThat(sniff("SELECT 1;LOCK TABLES t READ") & SessionEffects.LOCK_TABLES).isNotZero();
        assertThat(sniff("DO 0; CALL p()") & SessionEffects.STORED_CODE).isNotZero();
        assertThat(sniff("DO 0; HANDLER t OPEN") & SessionEffects.HANDLER).isNotZero();
        assertThat(sniff("DO 0; SET ROLE r") & SessionEffects.SET_ROLE).isNotZero();
        assertThat(sniff("DO 0; SHOW WARNINGS") & SessionEffects.DIAGNOSTICS).isNotZero();
        assertThat(sniff("SELECT 'a;CALL p()'")).isZero();
        assertThat(sniff("SELECT 1;")).isZero();
    }

    @Test
    void aSelectIsMarkedForFoundRowsAndRowCountAndFoundRowsCalls() {
        ByteBuf buf = Unpooled.copiedBuffer("SELECT ROW_COUNT(), FOUND_ROWS() FROM t", StandardCharsets.UTF_8);
        try {
            assertThat(sniff(buf, 0, buf.writerIndex())).isEqualTo(SessionEffects.SELECT_STATEMENT
                    | SessionEffects.CALLS_ROW_COUNT | SessionEffects.CALLS_FOUND_ROWS);
        } finally {
            buf.release();
        }
        // the previous statement's count, wherever it is read
        assertThat(sniff("INSERT INTO log (n) VALUES (ROW_COUNT())")).isEqualTo(SessionEffects.CALLS_ROW_COUNT);
        for (String begins : new String[] {"BEGIN", "begin work", "START TRANSACTION", "start  transaction read only"}) {
            ByteBuf b = Unpooled.copiedBuffer(begins, StandardCharsets.UTF_8);
            try {
                assertThat(sniff(b, 0, b.writerIndex())).as(begins)
                        .isEqualTo(SessionEffects.BEGINS_TRANSACTION);
            } finally {
                b.release();
            }
        }
        assertThat(sniff("SET @n = FOUND_ROWS()") & SessionEffects.CALLS_FOUND_ROWS).isNotZero();
    }

    /** A stored function's body is not in the text: its call is stored code (issue #38); built-ins are not. */
    @Test
    void aCallOfAStoredFunctionIsStoredCode() {
        for (String sql : new String[] {"SELECT f()", "SELECT lock_f('k')", "DO app.f(1)", "SELECT `f`(1)",
            "SELECT db.concat('a')", "UPDATE t SET a = f(a)", "SELECT 1; SELECT g(2)", "SELECT a FROM t WHERE b = f(c)",
            "INSERT INTO t (a) VALUES (f(1))"}) {
            assertThat(sniff(sql) & SessionEffects.STORED_CODE).as(sql).isNotZero();
        }
        for (String sql : new String[] {"SELECT c FROM sbtest1 WHERE id = 5", "SELECT SUM(k) FROM sbtest1",
            "INSERT INTO sbtest1 (id, k, c, pad) VALUES (1, 2, 'c', 'p')", "INSERT t(a) VALUES (1)",
            "REPLACE INTO db.t (a) VALUES (1)", "SELECT CAST(a AS CHAR(10)), CONVERT(b, DECIMAL(10, 2)) FROM t",
            "SELECT a FROM t WHERE id IN (1, 2) AND EXISTS (SELECT 1)", "SELECT COUNT(*), NOW(), CONCAT('a', 'b')",
            "WITH RECURSIVE c (n) AS (SELECT 1) SELECT n FROM c", "SELECT ROW_NUMBER() OVER (PARTITION BY a) FROM t",
            "CREATE FUNCTION f() RETURNS INT RETURN g()", "CREATE TABLE t (a INT, KEY k (a))",
            "SELECT `CONCAT`('a')", "LOAD DATA INFILE 'x' INTO TABLE t (a, b)",
            "set autocommit=1, sql_mode = concat(@@sql_mode,',STRICT_TRANS_TABLES')",
            "SELECT GET_LOCK('k', 0)", "SELECT NEXTVAL(s)", "SELECT a FROM t JOIN u USING (id)"}) {
            assertThat(sniff(sql) & SessionEffects.STORED_CODE).as(sql).isZero();
        }
    }

    /**
     * Issue #38's cost: the statements of sysbench's OLTP scripts, TPC-C's and the JDBC drivers' connection set-up pin
     * nothing new (none is opaque, none sets a statement variable or a role); the A/B is in the lab note.
     */
    @Test
    void benchmarkAndDriverStatementsPinNothing() {
        int pinning = SessionEffects.STORED_CODE | SessionEffects.HANDLER | SessionEffects.SET_ROLE
                | SessionEffects.STATEMENT_VARIABLE | SessionEffects.LOCK_TABLES | SessionEffects.TEMPORARY
                | SessionEffects.GET_LOCK | SessionEffects.SQL_PREPARE | SessionEffects.SET_TRANSACTION
                | SessionEffects.USER_VARIABLE;
        for (String sql : new String[] {
            "SELECT c FROM sbtest1 WHERE id=5", "SELECT c FROM sbtest3 WHERE id BETWEEN 10 AND 109",
            "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 1 AND 100",
            "SELECT c FROM sbtest1 WHERE id BETWEEN 1 AND 100 ORDER BY c",
            "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN 1 AND 100 ORDER BY c",
            "UPDATE sbtest1 SET k=k+1 WHERE id=7", "UPDATE sbtest1 SET c='x' WHERE id=7", "DELETE FROM sbtest1 WHERE id=7",
            "INSERT INTO sbtest1 (id, k, c, pad) VALUES (7, 1, 'c', 'p')", "BEGIN", "COMMIT",
            // TPC-C (sysbench-tpcc, HammerDB's SQL forms)
            "SELECT c_discount, c_last, c_credit, w_tax FROM customer1, warehouse1 WHERE w_id = 1 AND c_w_id = w_id"
                    + " AND c_d_id = 2 AND c_id = 3",
            "SELECT d_next_o_id, d_tax FROM district1 WHERE d_w_id = 1 AND d_id = 2 FOR UPDATE",
            "UPDATE stock1 SET s_quantity = 5, s_ytd = s_ytd + 1, s_order_cnt = s_order_cnt + 1 WHERE s_i_id = 1"
                    + " AND s_w_id = 2",
            "SELECT COUNT(DISTINCT (s.s_i_id)) FROM order_line1 AS ol, stock1 AS s WHERE ol.ol_w_id = 1",
            "SELECT o_id, o_carrier_id, o_entry_d FROM orders1 WHERE o_w_id = 1 ORDER BY o_id DESC LIMIT 1",
            // the drivers' set-up
            "set autocommit=1, sql_mode = concat(@@sql_mode,',STRICT_TRANS_TABLES'), session_track_schema=1,"
                    + " session_track_system_variables = CONCAT(@@global.session_track_system_variables,"
                    + "',auto_increment_increment')",
            "SELECT @@max_allowed_packet, @@wait_timeout",
            "/* mysql-connector-j-8.4.0 */SELECT @@session.auto_increment_increment AS auto_increment_increment,"
                    + " @@character_set_client AS character_set_client, @@collation_server AS collation_server",
            "SET NAMES utf8mb4", "SET character_set_results = NULL", "SET autocommit=0",
            "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED", "SELECT 1", "SELECT @@session.transaction_read_only"}) {
            assertThat(sniff(sql) & pinning).as(sql).isZero();
        }
    }

    @Test
    void aBackquotedLockFunctionIsTheLockFunction() {
        assertThat(sniff("SELECT `GET_LOCK`('k', 0)") & SessionEffects.GET_LOCK).isNotZero();
        assertThat(sniff("SELECT `release_lock` ('k')") & SessionEffects.RELEASE_LOCK).isNotZero();
        assertThat(sniff("SELECT `get_lock` FROM t") & SessionEffects.GET_LOCK).isZero(); // a column
    }

    @Test
    void plainStatementsPinNothing() {
        assertThat(sniff("SELECT c FROM sbtest1 WHERE id = 42")).isZero();
        assertThat(sniff("UPDATE t SET v = v + 1 WHERE id = 3")).isZero();
        assertThat(sniff("SET SESSION sql_mode = 'ANSI'")).isZero();
        assertThat(sniff("SELECT @@session.time_zone, @@autocommit")).isZero();
        assertThat(sniff("BEGIN")).isZero();
        assertThat(sniff("")).isZero();
    }

    @Test
    void findsUserVariablesOutsideLiteralsAndComments() {
        assertThat(sniff("SET @a = 1")).isEqualTo(SessionEffects.USER_VARIABLE);
        assertThat(sniff("SELECT @a := id FROM t")).isEqualTo(SessionEffects.USER_VARIABLE);
        assertThat(sniff("SELECT 'me@example.com', `a@b` FROM t /* @x */ -- @y\n")).isZero();
        assertThat(sniff("SELECT \"it's @ \\\" here\" # @z")).isZero();
        assertThat(sniff("/*!40101 SET @OLD_CHARSET=@@CHARACTER_SET_CLIENT */"))
                .as("a SET naming @@name unscoped, read here: scopeAssignments leaves it").isEqualTo(
                        SessionEffects.USER_VARIABLE | SessionEffects.UNSCOPED_SYSTEM_VARIABLE);
    }

    @Test
    void findsLocksTemporaryTablesXaAndPrepare() {
        assertThat(sniff("CREATE TEMPORARY TABLE tmp (id INT)")).isEqualTo(SessionEffects.TEMPORARY);
        assertThat(sniff("lock tables t write")).isEqualTo(SessionEffects.LOCK_TABLES);
        assertThat(sniff("UNLOCK TABLES")).isEqualTo(SessionEffects.UNLOCK_TABLES);
        assertThat(sniff("SELECT GET_LOCK('a', 1)")).isEqualTo(SessionEffects.GET_LOCK);
        assertThat(sniff("SELECT release_lock('a')")).isEqualTo(SessionEffects.RELEASE_LOCK);
        assertThat(sniff("DO RELEASE_ALL_LOCKS()")).isEqualTo(SessionEffects.RELEASE_ALL_LOCKS);
        assertThat(sniff("XA START 'x'")).isEqualTo(SessionEffects.XA_START);
        assertThat(sniff("xa commit 'x'")).isEqualTo(SessionEffects.XA_END);
        assertThat(sniff("XA END 'x'")).isZero();
        assertThat(sniff("PREPARE s FROM 'SELECT 1'")).isEqualTo(SessionEffects.SQL_PREPARE);
        assertThat(sniff("SELECT SQL_CALC_FOUND_ROWS * FROM t LIMIT 1")).isEqualTo(SessionEffects.CALC_FOUND_ROWS);
        assertThat(sniff("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")).isEqualTo(SessionEffects.SET_TRANSACTION);
        assertThat(sniff("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")).isZero();
        assertThat(sniff("SELECT 'GET_LOCK(' FROM t")).isZero();
    }

    @Test
    void findsLastInsertIdCalls() {
        int calls = SessionEffects.CALLS_LAST_INSERT_ID;
        assertThat(sniff("SELECT LAST_INSERT_ID()")).isEqualTo(calls);
        assertThat(sniff("  select last_insert_id ( ) ;  ")).isEqualTo(calls);
        assertThat(sniff("SELECT v FROM t WHERE id = LAST_INSERT_ID()")).isEqualTo(calls);
        assertThat(sniff("SELECT LAST_INSERT_ID(), @a")).isEqualTo(calls | SessionEffects.USER_VARIABLE);
        assertThat(sniff("SELECT LAST_INSERT_ID(5)")).isEqualTo(SessionEffects.SETS_LAST_INSERT_ID);
        assertThat(sniff("UPDATE seq SET id = LAST_INSERT_ID(id + 1)")).isEqualTo(SessionEffects.SETS_LAST_INSERT_ID);
        // a child row with its parent's id: the previous statement's id, as much as a SELECT's
        assertThat(sniff("INSERT INTO t VALUES (LAST_INSERT_ID())")).isEqualTo(calls);
        assertThat(sniff("UPDATE t SET parent = last_insert_id() WHERE id = 1")).isEqualTo(calls);
        assertThat(sniff("SELECT last_insert_id FROM t")).isZero(); // a column of that name
        // the same value by other names
        assertThat(sniff("SELECT `LAST_INSERT_ID`()")).isEqualTo(calls);
        assertThat(sniff("SELECT @@identity")).isEqualTo(calls);
        assertThat(sniff("SELECT @@SESSION.last_insert_id")).isEqualTo(calls);
    }

    @Test
    void findsTheNextValueOfASequence() {
        int next = SessionEffects.NEXT_SEQUENCE_VALUE;
        assertThat(sniff("SELECT NEXTVAL(s)")).isEqualTo(next);
        assertThat(sniff("INSERT INTO t VALUES (next value for s)")).isEqualTo(next);
        assertThat(sniff("SELECT LASTVAL(s), PREVIOUS VALUE FOR s")).isZero(); // reads what the connection holds
        assertThat(sniff("SELECT nextval FROM t")).isZero();
    }

    @Test
    void findsABackupLock() {
        assertThat(sniff("BACKUP STAGE START")).isEqualTo(SessionEffects.BACKUP_LOCK);
        assertThat(sniff("backup lock t")).isEqualTo(SessionEffects.BACKUP_LOCK);
        assertThat(sniff("SELECT backup FROM t")).isZero();
    }

    @Test
    void putsTheSessionsLastInsertIdIntoSelects() {
        assertThat(QueryRewrites.withLastInsertId("SELECT LAST_INSERT_ID()", 42, true))
                .isEqualTo("SELECT LAST_INSERT_ID(42 | 0) AS `LAST_INSERT_ID()`");
        assertThat(QueryRewrites.withLastInsertId("select last_insert_id( ) ;", 7, true))
                .isEqualTo("select LAST_INSERT_ID(7 | 0) AS `last_insert_id( )` ;");
        assertThat(QueryRewrites.withLastInsertId("SELECT LAST_INSERT_ID() AS last, 'x'", 71, true))
                .isEqualTo("SELECT LAST_INSERT_ID(71 | 0) AS last, 'x'");
        assertThat(QueryRewrites.withLastInsertId("SELECT v FROM t WHERE id = LAST_INSERT_ID()", 71, true))
                .isEqualTo("SELECT v FROM t WHERE id = LAST_INSERT_ID(71 | 0)");
        assertThat(QueryRewrites.withLastInsertId("SELECT 1, LAST_INSERT_ID() FROM dual", 3, true))
                .isEqualTo("SELECT 1, LAST_INSERT_ID(3 | 0) AS `LAST_INSERT_ID()` FROM dual");
        assertThat(QueryRewrites.withLastInsertId("SELECT 'LAST_INSERT_ID()'", 3, true)).isEqualTo("SELECT 'LAST_INSERT_ID()'");
    }

    @Test
    void putsTheSessionsLastInsertIdIntoOtherStatementsWithoutSettingIt() {
        String id = "IF(1, CAST(9 AS UNSIGNED), LAST_INSERT_ID())";
        assertThat(QueryRewrites.withLastInsertId("INSERT INTO child (parent) VALUES (LAST_INSERT_ID())", 9, false))
                .isEqualTo("INSERT INTO child (parent) VALUES (" + id + ")");
        assertThat(QueryRewrites.withLastInsertId("DO 1, LAST_INSERT_ID()", 9, false))
                .as("no alias outside a select list").isEqualTo("DO 1, " + id);
        assertThat(QueryRewrites.withLastInsertId("SET @a = 1, @p = LAST_INSERT_ID()", 9, false))
                .isEqualTo("SET @a = 1, @p = " + id);
        assertThat(QueryRewrites.withLastInsertId("INSERT INTO t SELECT 1, LAST_INSERT_ID()", 9, false))
                .isEqualTo("INSERT INTO t SELECT 1, " + id + " AS `LAST_INSERT_ID()`");
    }

    @Test
    void putsTheSessionsLastInsertIdInPlaceOfItsOtherNames() {
        assertThat(QueryRewrites.withLastInsertId("SELECT @@identity, @@session.LAST_INSERT_ID", 5, true))
                .isEqualTo("SELECT LAST_INSERT_ID(5 | 0) AS `@@identity`, LAST_INSERT_ID(5 | 0) AS `@@session.LAST_INSERT_ID`");
        assertThat(QueryRewrites.withLastInsertId("SELECT `last_insert_id`()", 5, true))
                .isEqualTo("SELECT LAST_INSERT_ID(5 | 0) AS ```last_insert_id``()`");
        assertThat(QueryRewrites.withLastInsertId("SET @p = @@identity", 5, false))
                .isEqualTo("SET @p = IF(1, CAST(5 AS UNSIGNED), LAST_INSERT_ID())");
        assertThat(QueryRewrites.withLastInsertId("SET @@session.last_insert_id = 3, @p = LAST_INSERT_ID()", 5, false))
                .as("an assignment to it stays").isEqualTo("SET @@session.last_insert_id = 3, @p = "
                        + "IF(1, CAST(5 AS UNSIGNED), LAST_INSERT_ID())");
        assertThat(QueryRewrites.withLastInsertId("SELECT @identity, @@insert_id", 5, true))
                .as("a user variable, another variable").isEqualTo("SELECT @identity, @@insert_id");
    }

    @Test
    void keepsTheServerReportingEveryVariable() {
        String mariaDbConnectorJ = "set sql_mode=CONCAT(@@sql_mode,',STRICT_TRANS_TABLES'),"
                + "session_track_system_variables = CONCAT(@@global.session_track_system_variables,',tx_isolation'),"
                + "autocommit=1";
        assertThat(sniff(mariaDbConnectorJ) & SessionEffects.TRACKED_VARIABLES).isNotZero();
        assertThat(QueryRewrites.trackAllVariables(mariaDbConnectorJ)).isEqualTo(
                "set sql_mode=CONCAT(@@sql_mode,',STRICT_TRANS_TABLES'),session_track_system_variables = "
                        + "CONCAT(@@global.session_track_system_variables,',tx_isolation'), "
                        + "session_track_system_variables = '*',autocommit=1");
        assertThat(QueryRewrites.trackAllVariables("SET @@session.session_track_system_variables:='x,y'; "))
                .isEqualTo("SET @@session.session_track_system_variables:='x,y', "
                        + "@@session.session_track_system_variables= '*'; ");
        assertThat(QueryRewrites.trackAllVariables("SET SESSION session_track_system_variables=NULL"))
                .as("the server still judges the client's value: NULL fails with 1231")
                .isEqualTo("SET SESSION session_track_system_variables=NULL, session_track_system_variables= '*'");
        assertThat(QueryRewrites.trackAllVariables("SET GLOBAL session_track_system_variables = 'a'")).isNull();
        assertThat(QueryRewrites.trackAllVariables("SET @@GLOBAL.session_track_system_variables=NULL")).isNull();
        assertThat(QueryRewrites.trackAllVariables("SET @@global.session_track_system_variables = 'a'")).isNull();
        assertThat(QueryRewrites.trackAllVariables("SELECT 'session_track_system_variables = 1'")).isNull();
    }

    @Test
    void flushesThatHoldTableLocksPinLikeLockTables() {
        assertThat(sniff("FLUSH TABLES WITH READ LOCK") & SessionEffects.LOCK_TABLES).isNotZero();
        assertThat(sniff("flush tables t1, t2 with read lock") & SessionEffects.LOCK_TABLES).isNotZero();
        assertThat(sniff("FLUSH TABLES t1 FOR EXPORT") & SessionEffects.LOCK_TABLES).isNotZero();
        assertThat(sniff("FLUSH TABLES") & SessionEffects.LOCK_TABLES).isZero();
        assertThat(sniff("FLUSH PRIVILEGES") & SessionEffects.LOCK_TABLES).isZero();
        assertThat(sniff("SELECT 'FLUSH TABLES WITH READ LOCK'") & SessionEffects.LOCK_TABLES).isZero();
    }

    @Test
    void unscopedSystemVariableAssignmentsGetAnExplicitSessionScope() {
        assertThat(sniff("SET @@autocommit = 0") & SessionEffects.UNSCOPED_SYSTEM_VARIABLE).isNotZero();
        assertThat(sniff("SET @@session.autocommit = 0") & SessionEffects.UNSCOPED_SYSTEM_VARIABLE).isZero();
        assertThat(sniff("SET @@global.max_connections = 10") & SessionEffects.UNSCOPED_SYSTEM_VARIABLE).isZero();
        assertThat(sniff("SELECT @@autocommit") & SessionEffects.UNSCOPED_SYSTEM_VARIABLE).isZero();
        assertThat(QueryRewrites.scopeAssignments("SET @@autocommit = 0, @@sql_mode := @@sql_mode, time_zone = '+01:00'"))
                .isEqualTo("SET @@SESSION.autocommit = 0, @@SESSION.sql_mode := @@sql_mode, time_zone = '+01:00'");
        assertThat(QueryRewrites.scopeAssignments("SET @@session.autocommit = 0, @@GLOBAL.x = 1")).isNull();
        assertThat(QueryRewrites.scopeAssignments("SET sql_mode = @@sql_mode")).isNull();
    }
}
