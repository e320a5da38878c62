package io.sluice.readwrite;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Where each class of statement goes, and why; every row is checked as a String, as bytes and in a ByteBuf. */
class StatementClassifierTest {

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
            SELECT * FROM t                                            | replica
            select * from t where id = 1                               | replica
            "  \n\t SeLeCt 1"                                          | replica
            (SELECT 1) UNION (SELECT 2)                                | replica
            WITH c AS (SELECT 1) SELECT * FROM c                       | replica
            WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 5) SELECT * FROM c | replica
            SHOW TABLES                                                | replica
            SHOW CREATE TABLE t                                        | replica
            SHOW TABLE STATUS                                          | replica
            SHOW FULL TABLES                                           | replica
            SHOW VARIABLES LIKE 'x'                                    | replica
            DESCRIBE t                                                 | replica
            DESC t                                                     | replica
            EXPLAIN SELECT * FROM t                                    | replica
            EXPLAIN UPDATE t SET a = 1                                 | replica
            VALUES (1), (2)                                            | replica
            TABLE t                                                    | replica
            HELP 'select'                                              | replica
            SELECT SLEEP(1)                                            | replica
            SELECT NOW(), RAND(), UUID()                               | replica
            ANALYZE SELECT * FROM t                                    | replica
            SELECT 'FOR UPDATE', "INSERT", `update` FROM t             | replica
            SELECT 1 -- FOR UPDATE                                     | replica
            SELECT 1 /* ; DELETE FROM t */                             | replica
            SELECT 1;                                                  | replica
            "SELECT 1;  -- done"                                       | replica
            SELECT get_lock_count FROM t                               | replica
            SELECT t.nextval FROM t                                    | replica
            WITH c AS (SELECT 'a' s) SELECT REPLACE(s, 'a', 'b'), INSERT(s, 1, 1, 'x') FROM c | replica
            EXPLAIN ANALYZE SELECT REPLACE(a, 'x', 'y') FROM t         | replica
            SELECT * FROM t FOR SYSTEM_TIME AS OF '2020-01-01'         | replica
            SELECT * FROM t FOR UPDATE                                 | primary:locking_read
            select * from t for share                                  | primary:locking_read
            SELECT * FROM t LOCK IN SHARE MODE                         | primary:locking_read
            SELECT * FROM t FOR UPDATE SKIP LOCKED                     | primary:locking_read
            SELECT * FROM t /*!50000 FOR UPDATE */                     | primary:locking_read
            WITH c AS (SELECT 1) SELECT * FROM c FOR UPDATE            | primary:locking_read
            INSERT INTO t VALUES (1)                                   | primary:write
            insert into t select * from u                              | primary:write
            UPDATE t SET a = 1                                         | primary:write
            DELETE FROM t                                              | primary:write
            REPLACE INTO t VALUES (1)                                  | primary:write
            LOAD DATA LOCAL INFILE 'f' INTO TABLE t                    | primary:write
            CALL p()                                                   | primary:write
            CREATE TABLE t (a INT)                                     | primary:write
            ALTER TABLE t ADD b INT                                    | primary:write
            DROP TABLE t                                               | primary:write
            TRUNCATE t                                                 | primary:write
            RENAME TABLE t TO u                                        | primary:write
            GRANT SELECT ON *.* TO 'u'@'h'                             | primary:write
            CREATE USER u@localhost                                    | primary:write
            SELECT * FROM t INTO OUTFILE '/tmp/x'                      | primary:write
            WITH c AS (SELECT 1) UPDATE t SET a = 1                    | primary:write
            WITH c AS (SELECT 1) DELETE FROM t                         | primary:write
            ANALYZE TABLE t                                            | primary:write
            ANALYZE UPDATE t SET a = 1                                 | primary:write
            EXPLAIN ANALYZE DELETE FROM t                              | primary:write
            FLUSH TABLES                                               | primary:write
            SELECT GET_LOCK('a', 1)                                    | primary:side_effect
            SELECT release_lock('a')                                   | primary:side_effect
            SELECT RELEASE_ALL_LOCKS()                                 | primary:side_effect
            SELECT IS_FREE_LOCK('a')                                   | primary:side_effect
            SELECT IS_USED_LOCK('a')                                   | primary:side_effect
            SELECT LAST_INSERT_ID(42)                                  | primary:side_effect
            SELECT NEXTVAL(s)                                          | primary:side_effect
            SELECT SETVAL(s, 10)                                       | primary:side_effect
            SELECT NEXT VALUE FOR s                                    | primary:side_effect
            SELECT db.f(1)                                             | primary:side_effect
            SELECT `db`.f (1)                                          | primary:side_effect
            DO GET_LOCK('a', 0)                                        | primary:side_effect
            SELECT LAST_INSERT_ID()                                    | primary:session_state
            SELECT LASTVAL(s)                                          | primary:session_state
            SELECT PREVIOUS VALUE FOR s                                | primary:session_state
            SELECT CONNECTION_ID()                                     | primary:session_state
            SELECT @@last_insert_id                                    | primary:session_state
            SELECT @@IDENTITY                                          | primary:session_state
            SELECT @@session.last_gtid                                 | primary:session_state
            SHOW WARNINGS                                              | previous:diagnostics
            SHOW ERRORS                                                | previous:diagnostics
            SHOW COUNT(*) WARNINGS                                     | previous:diagnostics
            SELECT @@warning_count                                     | previous:diagnostics
            SELECT FOUND_ROWS()                                        | previous:diagnostics
            SELECT ROW_COUNT()                                         | previous:diagnostics
            GET DIAGNOSTICS @n = NUMBER                                | primary:pinning
            GET DIAGNOSTICS CONDITION 1 x = MESSAGE_TEXT                | previous:diagnostics
            SELECT 1; SELECT 2                                         | primary:multi_statement
            INSERT INTO t VALUES (1); SELECT 1                         | primary:multi_statement
            "SELECT 'a;b'; SELECT 2"                                   | primary:multi_statement
            SET @a = 1                                                 | primary:pinning
            SELECT @a                                                  | primary:pinning
            SELECT a INTO @a FROM t                                    | primary:pinning
            SELECT SQL_CALC_FOUND_ROWS * FROM t                        | primary:pinning
            CREATE TEMPORARY TABLE t (a INT)                           | primary:pinning
            LOCK TABLES t READ                                         | primary:pinning
            UNLOCK TABLES                                              | primary:pinning
            FLUSH TABLES WITH READ LOCK                                | primary:pinning
            FLUSH TABLES t FOR EXPORT                                  | primary:pinning
            PREPARE s FROM 'SELECT 1'                                  | primary:pinning
            EXECUTE s                                                  | primary:pinning
            DEALLOCATE PREPARE s                                       | primary:pinning
            HANDLER t OPEN                                             | primary:pinning
            XA START 'x'                                               | primary:pinning
            SET TRANSACTION ISOLATION LEVEL READ COMMITTED             | primary:pinning
            SET NAMES utf8mb4                                          | primary:set
            SET SESSION sql_mode = ''                                  | primary:set
            SET autocommit = 0                                         | primary:set
            SET GLOBAL max_connections = 10                            | primary:server_state
            SET @@global.max_connections = 10                          | primary:server_state
            SET PASSWORD = PASSWORD(?)                                 | primary:server_state
            SET @@session.sql_mode = ?                                 | primary:set
            SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED     | primary:set
            USE db                                                     | primary:set
            BEGIN                                                      | primary:transaction
            START TRANSACTION                                          | primary:transaction
            START TRANSACTION READ WRITE                               | primary:transaction
            START TRANSACTION READ ONLY                                | replica:read_only_transaction
            START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY      | replica:read_only_transaction
            COMMIT                                                     | primary:transaction
            ROLLBACK                                                   | primary:transaction
            SAVEPOINT a                                                | primary:transaction
            ROLLBACK TO SAVEPOINT a                                    | primary:transaction
            RELEASE SAVEPOINT a                                        | primary:transaction
            SHOW PROCESSLIST                                           | primary:server_state
            SHOW FULL PROCESSLIST                                      | primary:server_state
            SHOW GLOBAL STATUS                                         | primary:server_state
            SHOW STATUS LIKE 'x'                                       | primary:server_state
            SHOW MASTER STATUS                                         | primary:server_state
            SHOW SLAVE STATUS                                          | primary:server_state
            SHOW REPLICA STATUS                                        | primary:server_state
            SHOW BINARY LOGS                                           | primary:server_state
            SHOW ENGINE INNODB STATUS                                  | primary:server_state
            START SLAVE                                                | primary:other
            KILL 5                                                     | primary:other
            "   "                                                      | primary:other
            /* only a comment */                                       | primary:other
            OPTIMIZE TABLE t                                           | primary:other
            /* sluice: primary */ SELECT 1                             | primary:hint
            SELECT /*sluice:PRIMARY*/ 1                                | primary:hint
            "-- sluice: primary\nSELECT 1"                             | primary:hint
            /* SHARDINGSPHERE_HINT: WRITE_ROUTE_ONLY=true */ SELECT 1  | primary:hint
            /* ShardingSphere hint: writeRouteOnly=true */ SELECT 1    | primary:hint
            /* SHARDINGSPHERE_HINT: WRITE_ROUTE_ONLY=false */ SELECT 1 | replica
            /* sluice: replica */ SELECT 1                             | replica:hint
            /* sluice: replica */ SELECT * FROM t FOR UPDATE           | primary:locking_read
            /* sluice: replica */ INSERT INTO t VALUES (1)             | primary:write
            SELECT '/* sluice: primary */'                             | replica
            SET STATEMENT max_statement_time = 1 FOR SELECT * FROM t   | replica
            SET STATEMENT max_statement_time = 1 FOR UPDATE t SET a = 1 | primary:write
            /* sluice: primary */ SET STATEMENT max_statement_time = 1 FOR SELECT 1 | primary:hint
            """)
    void classifies(String sql, String reason) {
        assertThat(StatementClassifier.reason(StatementClassifier.classify(sql)).label()).isEqualTo(reason);
        byte[] bytes = sql.getBytes(StandardCharsets.UTF_8);
        assertThat(StatementClassifier.classify(bytes)).isEqualTo(StatementClassifier.classify(sql));
        ByteBuf buf = Unpooled.buffer().writeByte(3).writeBytes(bytes); // after the command byte, as in a packet
        try {
            assertThat(StatementClassifier.classify(buf, 1, buf.writerIndex()))
                    .isEqualTo(StatementClassifier.classify(sql));
            assertThat(buf.readerIndex()).isZero();
        } finally {
            buf.release();
        }
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', textBlock = """
            SELECT 1                                          | NONE
            BEGIN                                             | BEGIN
            begin work                                        | BEGIN
            START TRANSACTION                                 | BEGIN
            START TRANSACTION READ ONLY                       | BEGIN_READ_ONLY
            START TRANSACTION READ WRITE                      | BEGIN_READ_WRITE
            start transaction with consistent snapshot, read write | BEGIN_READ_WRITE
            XA START 'x'                                      | BEGIN
            COMMIT                                            | END
            COMMIT WORK                                       | END
            ROLLBACK                                          | END
            COMMIT AND CHAIN                                  | CHAIN
            COMMIT AND NO CHAIN                               | END
            ROLLBACK TO SAVEPOINT a                           | NONE
            ROLLBACK WORK TO a                                | NONE
            XA COMMIT 'x'                                     | END
            SET autocommit = 0                                | AUTOCOMMIT_OFF
            SET AUTOCOMMIT=OFF                                | AUTOCOMMIT_OFF
            set session autocommit = false                    | AUTOCOMMIT_OFF
            SET @@autocommit := 0                             | AUTOCOMMIT_OFF
            SET @@session.autocommit = 0                      | AUTOCOMMIT_OFF
            SET sql_mode = '', autocommit = 0                 | AUTOCOMMIT_OFF
            SET autocommit = 1                                | AUTOCOMMIT_ON
            SET autocommit = ON                               | AUTOCOMMIT_ON
            SET autocommit = DEFAULT                          | AUTOCOMMIT_ON
            SET autocommit = @x                               | NONE
            SELECT @@autocommit                               | NONE
            CREATE TABLE t (a INT)                            | IMPLICIT_COMMIT
            DROP TABLE t                                      | IMPLICIT_COMMIT
            CREATE TEMPORARY TABLE t (a INT)                  | NONE
            LOCK TABLES t WRITE                               | IMPLICIT_COMMIT
            GRANT SELECT ON *.* TO u                          | IMPLICIT_COMMIT
            INSERT INTO t VALUES (1)                          | NONE
            """)
    void readsTransactionEffects(String sql, TransactionEffect effect) {
        assertThat(StatementClassifier.transaction(StatementClassifier.classify(sql))).isEqualTo(effect);
    }

    /**
     * Decision 110: sysbench's reads, drivers' own statements and the common built-ins stay replica reads with the
     * allow-list of read-only functions in place.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
            SELECT c FROM sbtest1 WHERE id=5012
            SELECT c FROM sbtest1 WHERE id BETWEEN 10 AND 109
            SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 10 AND 109
            SELECT c FROM sbtest1 WHERE id BETWEEN 10 AND 109 ORDER BY c
            SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN 10 AND 109 ORDER BY c
            SELECT 1
            SELECT @@version
            SELECT @@session.tx_read_only
            SELECT NOW()
            SELECT COUNT(*) FROM t
            SELECT count(DISTINCT a) FROM t
            "SELECT CONCAT(a, '-', b), CONCAT_WS(',', a, b) FROM t"
            SELECT CAST(a AS DECIMAL(10, 2)), CAST(b AS CHAR(20)), CONVERT(c, SIGNED) FROM t
            SELECT COALESCE(a, 0), IFNULL(b, ''), NULLIF(c, 1), IF(d > 0, 1, 2) FROM t
            "SELECT DATE_FORMAT(NOW(), '%Y-%m-%d'), DATE_ADD(d, INTERVAL 1 DAY), UNIX_TIMESTAMP() FROM t"
            "SELECT UPPER(a), LOWER(b), SUBSTRING(c, 1, 3), TRIM(d), LENGTH(e), REPLACE(f, 'x', 'y') FROM t"
            SELECT ROUND(a, 2), ABS(b), FLOOR(c), CEIL(d), MOD(e, 3), GREATEST(a, b), LEAST(a, b) FROM t
            "SELECT JSON_EXTRACT(j, '$.a'), JSON_UNQUOTE(JSON_VALUE(j, '$.b')) FROM t"
            SELECT a FROM t WHERE b IN (1, 2, 3) AND EXISTS (SELECT 1 FROM u WHERE u.a = t.a)
            SELECT a FROM t JOIN u USING (id) LEFT JOIN v ON (v.id = t.id)
            SELECT ROW_NUMBER() OVER (PARTITION BY a ORDER BY b) FROM t
            SELECT MAX(a), MIN(b), AVG(c), GROUP_CONCAT(d SEPARATOR ',') FROM t GROUP BY e
            SELECT * FROM (SELECT 1 AS a) AS x
            SELECT DATABASE(), USER(), VERSION(), CURRENT_USER()
            SELECT @@max_allowed_packet, @@system_time_zone, @@time_zone, @@auto_increment_increment
            /* mysql-connector-j-8.4.0 */SELECT @@session.auto_increment_increment AS auto_increment_increment
            SELECT `COUNT`(*) FROM t
            SELECT `t`.`a` FROM `t` WHERE `t`.`b` = 1
            WITH c (n) AS (SELECT 1), d (m) AS (SELECT 2) SELECT * FROM c, d
            SELECT * FROM v
            SELECT ANY_VALUE(a), BIN_TO_UUID(b), REGEXP_LIKE(c, 'x') FROM t GROUP BY d
            SELECT * FROM t PARTITION (p0) FORCE INDEX (i) WHERE MATCH (a) AGAINST ('x')
            "SELECT EXTRACT(YEAR FROM d), TRIM(BOTH 'x' FROM s), POSITION('a' IN s), CONVERT(s USING utf8mb4) FROM t"
            SELECT /*!40001 SQL_NO_CACHE */ * FROM t
            /*! SELECT */ 1
            SELECT 1 /*!99999 , 2 */
            """)
    void commonReadsStayReplicaReads(String sql) {
        assertThat(StatementClassifier.route(StatementClassifier.classify(sql))).isEqualTo(Route.REPLICA);
    }

    /** Decision 110: what may write behind a read goes to the primary. */
    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
            SELECT f()                                                 | primary:side_effect
            SELECT f ()                                                | primary:side_effect
            SELECT a, add_row(a) FROM t                                | primary:side_effect
            SELECT `f`(1)                                              | primary:side_effect
            SELECT `db`.`f`(1)                                         | primary:side_effect
            SELECT `GET_LOCK`('x', 0)                                  | primary:side_effect
            SELECT `get_lock` ('x', 0)                                 | primary:side_effect
            SELECT `LAST_INSERT_ID`()                                  | primary:session_state
            SELECT `FOUND_ROWS`()                                      | previous:diagnostics
            DO f(1)                                                    | primary:side_effect
            SELECT * FROM t WHERE a = f(1)                             | primary:side_effect
            SELECT MASTER_GTID_WAIT('0-1-1')                           | primary:side_effect
            SELECT LOAD_FILE('/etc/passwd')                            | primary:side_effect
            /*!99999 SELECT 1 */ DELETE FROM t                         | primary:write
            /*M!99999 SELECT 1 */ DELETE FROM t                        | primary:write
            /*!99999 SELECT 1 FROM */ t                                | primary:other
            /*!40001 SELECT 1 */                                       | primary:other
            SELECT 1 /*!99999 , f() */                                 | primary:side_effect
            /*!99999 DELETE FROM t */ SELECT 1                         | primary:write
            SET tx_read_only = 0                                       | primary:transaction
            SET SESSION transaction_read_only = OFF                    | primary:transaction
            SET @@session.tx_read_only = DEFAULT                       | primary:transaction
            SET SESSION TRANSACTION READ WRITE                         | primary:transaction
            SET TRANSACTION READ WRITE                                 | primary:pinning
            SET SESSION TRANSACTION READ ONLY                          | primary:set
            SET tx_read_only = 1                                       | primary:set
            SET STATEMENT tx_read_only = 0 FOR SELECT * FROM t         | primary:transaction
            SET STATEMENT max_statement_time = 1 FOR SELECT f()        | primary:side_effect
            """)
    void hiddenWritesGoToThePrimary(String sql, String reason) {
        assertThat(StatementClassifier.reason(StatementClassifier.classify(sql)).label()).isEqualTo(reason);
        assertThat(StatementClassifier.classify(sql.getBytes(StandardCharsets.UTF_8)))
                .isEqualTo(StatementClassifier.classify(sql));
    }

    /** Decision 110: what would make a replica's connection read-write, which never runs there. */
    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
            START TRANSACTION READ WRITE                               | true
            SET SESSION TRANSACTION READ WRITE                         | true
            SET TRANSACTION READ WRITE                                 | true
            SET tx_read_only = 0                                       | true
            SET tx_read_only = @x                                      | true
            set session transaction_read_only=off                      | true
            SET @@tx_read_only = 1 + 0                                 | true
            SET STATEMENT tx_read_only = 0 FOR SELECT 1                | true
            SET SESSION TRANSACTION READ ONLY                          | false
            SET tx_read_only = ON                                      | false
            START TRANSACTION READ ONLY                                | false
            START TRANSACTION                                          | false
            SELECT @@tx_read_only                                      | false
            SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED     | false
            """)
    void tellsAccessModeChanges(String sql, boolean changes) {
        assertThat(StatementClassifier.changesAccessMode(StatementClassifier.classify(sql))).isEqualTo(changes);
    }
}
