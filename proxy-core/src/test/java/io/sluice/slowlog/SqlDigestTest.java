package io.sluice.slowlog;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SqlDigestTest {

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "SELECT * FROM t WHERE id = 42                      | SELECT * FROM t WHERE id = ?",
        "select c from t1 where k=1.5e3 and n = -7          | select c from t1 where k=? and n = -?",
        "SELECT 'it''s', \"x\\\"y\", X'0A', 0xFF, b'01'     | SELECT ?, ?, ?, ?, ?",
        "SELECT * FROM t WHERE id IN (1, 2, 3)              | SELECT * FROM t WHERE id IN (...)",
        "INSERT INTO t VALUES (1,'a'),(2,'b')               | INSERT INTO t VALUES (...),(...)",
        "SELECT  a,\\n\\tb  -- note\\nFROM t /* c */ # x   | SELECT a, b FROM t",
        "SELECT `col 1`, t2.c3 FROM `db`.`t2`               | SELECT `col 1`, t2.c3 FROM `db`.`t2`",
        "SELECT 'unterminated                               | SELECT ?",
        "CALL p(1, @v)                                      | CALL p(?, @v)",
        "SELECT SLEEP(1.5)                                  | SELECT SLEEP(?)",
        "SELECT * FROM t WHERE id IN (7)                    | SELECT * FROM t WHERE id IN (...)",
    })
    void literalsBecomeQuestionMarks(String sql, String expected) {
        assertThat(SqlDigest.of(sql.replace("\\n", "\n").replace("\\t", "\t")).text()).isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "SELECT * FROM t WHERE id = 1              | SELECT * FROM t WHERE id = 99999",
        "SELECT * FROM t WHERE id IN (1)           | SELECT * FROM t WHERE id IN (4, 5, 6)",
        "SELECT c FROM t WHERE s = 'a' LIMIT 10    | SELECT  c FROM t WHERE s = \"bb\"  LIMIT 20",
    })
    void sameShapeSameHash(String a, String b) {
        assertThat(SqlDigest.of(a).hash()).hasSize(16).isEqualTo(SqlDigest.of(b).hash());
    }

    @org.junit.jupiter.api.Test
    void differentShapesDifferentHashes() {
        assertThat(SqlDigest.of("SELECT a FROM t").hash()).isNotEqualTo(SqlDigest.of("SELECT b FROM t").hash());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "CREATE USER 'bob'@'%' IDENTIFIED BY 'hunter2'",
        "ALTER USER bob IDENTIFIED WITH mysql_native_password BY 'hunter2'",
        "SET PASSWORD FOR bob = PASSWORD('hunter2')",
        "CHANGE MASTER TO MASTER_PASSWORD = 'hunter2'",
    })
    void statementsThatMayCarryAPasswordAreFlaggedAndTheirDigestHasNone(String sql) {
        SqlDigest digest = SqlDigest.of(sql);

        assertThat(digest.mayCarryPassword()).isTrue();
        assertThat(digest.text()).doesNotContain("hunter2");
    }
}
