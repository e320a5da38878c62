package io.sluice.replay;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.sql.SqlDigest;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What {@code --read-only} counts as a read, from the statement's digest: the read/write router's judgement (issue #38:
 * they disagreed on locking reads and lock functions).
 */
class ReplayReadOnlyTest {

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '~', value = {
        "SELECT c FROM t WHERE id = 1                       | true",
        "(SELECT a FROM t) UNION (SELECT b FROM u)          | true",
        "  -- why\\n show tables                            | true",
        "SET @a = 1                                         | true",
        "/*!40101 SET NAMES utf8mb4 */                      | true",
        "BEGIN                                              | true",
        "SELECT a INTO OUTFILE '/tmp/a' FROM t              | false",
        "SET GLOBAL max_connections = 10                    | false",
        "SET PASSWORD = 'secret'                            | false",
        "WITH x AS (SELECT 1) UPDATE t SET a = 1            | false",
        "EXPLAIN ANALYZE SELECT 1                           | true",
        "EXPLAIN ANALYZE UPDATE t SET a = 1                 | false",
        "SET @@global.max_connections = 10                  | false",
        "SET PERSIST max_connections = 10                   | false",
        "INSERT INTO t VALUES (1)                           | false",
        "update t set a = 1                                 | false",
        "CALL p()                                           | false",
        "SELECT id FROM t WHERE id = 1 FOR UPDATE           | false",
        "SELECT GET_LOCK('k', 0)                            | false",
        "SELECT f(1)                                        | false",
        "SELECT `GET_LOCK`('k', 0)                          | false",
        "SHOW WARNINGS                                      | true",
        "COMMIT                                             | true",
    })
    void readsAreJudgedByTheDigest(String sql, boolean read) {
        assertThat(Replay.isRead(SqlDigest.of(sql.replace("\\n", "\n")).text())).isEqualTo(read);
    }
}
