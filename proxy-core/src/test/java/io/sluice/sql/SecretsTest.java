package io.sluice.sql;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The one redaction of credentials: each statement form that carries a password in MariaDB or MySQL. */
class SecretsTest {

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
        "CREATE USER 'bob'@'%' IDENTIFIED BY 'hunter2' | CREATE USER 'bob'@'%' IDENTIFIED BY '<secret>'",
        "create user bob@localhost identified by \"hunter2\", 'amy'@'%' identified by 'x2' | create user bob@localhost identified by '<secret>', 'amy'@'%' identified by '<secret>'",
        "ALTER USER bob IDENTIFIED WITH mysql_native_password BY 'hunter2' | ALTER USER bob IDENTIFIED WITH mysql_native_password BY '<secret>'",
        "ALTER USER bob IDENTIFIED WITH 'caching_sha2_password' AS 'hash' | ALTER USER bob IDENTIFIED WITH 'caching_sha2_password' AS '<secret>'",
        "ALTER USER bob IDENTIFIED BY 'new' REPLACE 'old' RETAIN CURRENT PASSWORD | ALTER USER bob IDENTIFIED BY '<secret>' REPLACE '<secret>' RETAIN CURRENT PASSWORD",
        "CREATE USER bob IDENTIFIED VIA ed25519 USING PASSWORD('hunter2') OR unix_socket | CREATE USER bob IDENTIFIED VIA ed25519 USING PASSWORD('<secret>') OR unix_socket",
        "CREATE USER bob IDENTIFIED VIA mysql_native_password USING '*AB12' | CREATE USER bob IDENTIFIED VIA mysql_native_password USING '<secret>'",
        "SET PASSWORD FOR 'bob'@'%' = PASSWORD('hunter2') | SET PASSWORD FOR 'bob'@'%' = PASSWORD('<secret>')",
        "SET PASSWORD = 'hunter2' | SET PASSWORD = '<secret>'",
        "set password for bob = '*6BB4837EB74329105EE4568DDA7DC67ED2CA2AD9' | set password for bob = '<secret>'",
        "GRANT SELECT ON db.* TO 'bob'@'%' IDENTIFIED BY 'hunter2' WITH GRANT OPTION | GRANT SELECT ON db.* TO 'bob'@'%' IDENTIFIED BY '<secret>' WITH GRANT OPTION",
        "GRANT ALL ON *.* TO bob IDENTIFIED BY PASSWORD '*6BB4' | GRANT ALL ON *.* TO bob IDENTIFIED BY PASSWORD '<secret>'",
        "CHANGE MASTER TO MASTER_HOST='db1', MASTER_PASSWORD='hunter2', MASTER_PORT=3306 | CHANGE MASTER TO MASTER_HOST='db1', MASTER_PASSWORD='<secret>', MASTER_PORT=3306",
        "CHANGE REPLICATION SOURCE TO SOURCE_USER='r', SOURCE_PASSWORD = 'hunter2' | CHANGE REPLICATION SOURCE TO SOURCE_USER='r', SOURCE_PASSWORD = '<secret>'",
        "START SLAVE USER='r' PASSWORD='hunter2' | START SLAVE USER='r' PASSWORD='<secret>'",
        "START REPLICA USER='r' PASSWORD=0x68756e74657232 | START REPLICA USER='r' PASSWORD='<secret>'",
        "EXECUTE IMMEDIATE 'CREATE USER bob IDENTIFIED BY ''hunter2''' | EXECUTE IMMEDIATE '<secret>'",
        "PREPARE s FROM 'SET PASSWORD = ''hunter2''' | PREPARE s FROM '<secret>'",
        "EXECUTE IMMEDIATE CONCAT('CREATE USER bob IDENTIFIED BY ', '''hunter2''') | EXECUTE IMMEDIATE CONCAT('<secret>', '<secret>')",
        "EXECUTE IMMEDIATE X'435245415445205553455220626F62204944454E54494649454420425920276875' | EXECUTE IMMEDIATE '<secret>'",
        "SET @s = 'ALTER USER bob IDENTIFIED BY \"hunter2\"' | SET @s = '<secret>'",
        "/*!80000 ALTER USER bob IDENTIFIED BY 'hunter2' */ | /*!80000 ALTER USER bob IDENTIFIED BY '<secret>' */",
        "SELECT 'a'; CREATE USER bob IDENTIFIED BY 'hunter2'; SELECT 'b' | SELECT 'a'; CREATE USER bob IDENTIFIED BY '<secret>'; SELECT 'b'",
        "ALTER USER bob IDENTIFIED BY 'hunter2 | ALTER USER bob IDENTIFIED BY '<secret>'",
        "CREATE USER bob IDENTIFIED BY 'it''s \\' a, secret' PASSWORD EXPIRE INTERVAL 90 DAY | CREATE USER bob IDENTIFIED BY '<secret>' PASSWORD EXPIRE INTERVAL 90 DAY",
    })
    void hidesTheSecretAndKeepsTheRest(String sql, String expected) {
        String redacted = Secrets.redact(sql);
        assertThat(redacted).isEqualTo(expected);
        assertThat(redacted).doesNotContainIgnoringCase("hunter2");
        byte[] bytes = Secrets.redact(sql.getBytes(StandardCharsets.UTF_8));
        assertThat(new String(bytes, StandardCharsets.UTF_8)).isEqualTo(expected);
    }

    @ParameterizedTest
    @ValueSource(strings = {"SELECT * FROM t WHERE a = 'x'", "INSERT INTO t VALUES ('identify', 'passport')",
        "EXECUTE s USING @a", "PREPARE s FROM 'SELECT ?'", "SELECT 'é' /* ünïcode */ FROM t", ""})
    void statementsWithNoSecretComeBackAsTheyWere(String sql) {
        assertThat(Secrets.redact(sql)).isSameAs(sql);
        byte[] bytes = sql.getBytes(StandardCharsets.UTF_8);
        assertThat(Secrets.redact(bytes)).isSameAs(bytes);
    }

    @ParameterizedTest
    @ValueSource(strings = {"SELECT 1", "UPDATE t SET a = 'b'", "INSERT INTO t VALUES (1)"})
    void mayHoldIsFalseForPlainStatements(String sql) {
        assertThat(Secrets.mayHold(sql)).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {"ALTER USER bob IDENTIFIED BY 'ünïcøde-hunter2-€'", "SET PASSWORD = 'ünï-hunter2'"})
    void nonAsciiSecretsAndTextAroundThemSurviveTheBytes(String sql) {
        byte[] redacted = Secrets.redact(sql.getBytes(StandardCharsets.UTF_8));
        assertThat(new String(redacted, StandardCharsets.UTF_8)).doesNotContain("hunter2").endsWith("'<secret>'");
    }
}
