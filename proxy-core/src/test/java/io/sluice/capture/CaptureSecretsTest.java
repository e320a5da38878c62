package io.sluice.capture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.sluice.Sluice;
import io.sluice.config.CaptureConfig;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.SluiceExtension;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * No password reaches a capture file (issue #42): each statement form that carries one in MariaDB or MySQL is sent by
 * a real client through a real Sluice capturing without compression, and the files are searched byte by byte for
 * each secret. And a capture writes only under {@code capture.directory}, reads keys only under
 * {@code capture.keyDirectory}, and says nothing of files elsewhere; its files are 0600.
 */
@Tag("server")
class CaptureSecretsTest {

    private static final Path ROOT = tempRoot();
    private static final Path CAPTURES = ROOT.resolve("captures");
    private static final Path KEYS = ROOT.resolve("conf");

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.with(b -> b.config(
            c -> c.withOperations(c.operations().withCapture(new CaptureConfig(CAPTURES, KEYS)))))
            .sluiceOnly("capture is Sluice's");

    private static Path tempRoot() {
        try {
            return Files.createTempDirectory("sluice-capture-secrets").toRealPath();
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Sluice sluice() {
        return proxy.sluice();
    }

    @AfterEach
    void stopCapture() {
        if (sluice().captureStatus().running()) {
            sluice().stopCapture();
        }
    }

    /** Each statement with a secret of its own. Statements that would change the server fail on purpose. */
    private static final String[] FORMS = {
        "CREATE USER 'sluice_secret_u'@'%' IDENTIFIED BY 'S3cret-create-user'",
        "ALTER USER 'sluice_secret_u'@'%' IDENTIFIED BY 'S3cret-alter-user'",
        "ALTER USER 'sluice_secret_u'@'%' IDENTIFIED WITH mysql_native_password BY 'S3cret-with-by'",
        "ALTER USER 'sluice_secret_u'@'%' IDENTIFIED WITH mysql_native_password AS 'S3cret-with-as'",
        "ALTER USER 'sluice_secret_u'@'%' IDENTIFIED VIA mysql_native_password USING PASSWORD('S3cret-via-using')",
        "SET PASSWORD FOR 'sluice_secret_u'@'%' = PASSWORD('S3cret-set-password')",
        "SET PASSWORD FOR 'sluice_secret_u'@'%' = 'S3cret-set-hash'",
        "GRANT SELECT ON sluice_no_db.* TO 'sluice_secret_u'@'%' IDENTIFIED BY 'S3cret-grant'",
        "CHANGE MASTER TO MASTER_HOST='127.0.0.9', MASTER_PASSWORD='S3cret-change-master', NO_SUCH_OPTION=1",
        "CHANGE REPLICATION SOURCE TO SOURCE_PASSWORD='S3cret-change-source'",
        "START SLAVE USER='repl' PASSWORD='S3cret-start-slave' NO_SUCH_OPTION",
        "START REPLICA USER='repl' PASSWORD='S3cret-start-replica' NO_SUCH_OPTION",
        "EXECUTE IMMEDIATE 'ALTER USER ''sluice_secret_u''@''%'' IDENTIFIED BY ''S3cret-execute-immediate'''",
        "PREPARE sluice_s FROM 'SET PASSWORD FOR ''sluice_secret_u''@''%'' = PASSWORD(''S3cret-prepare-from'')'",
        "EXECUTE IMMEDIATE CONCAT('ALTER USER ''sluice_secret_u''@''%'' IDENTIFIED BY ', '''S3cret-concat''')",
        "DROP USER 'sluice_secret_u'@'%'",
    };

    @Test
    void anUncompressedCaptureHoldsNoSecretOfAnyForm() throws Exception {
        Path dir = CAPTURES.resolve("forms");
        sluice().startCapture(CaptureOptions.of(dir).withCompress(false).withMinFreeSpace(0));
        List<String> secrets = new ArrayList<>();
        try (Connection c = proxy.connect(JdbcDriver.MARIADB, null, "useServerPrepStmts=true");
             Statement s = c.createStatement()) {
            s.execute("DROP USER IF EXISTS 'sluice_secret_u'@'%'");
            for (String sql : FORMS) {
                secret(sql).ifPresent(secrets::add);
                try {
                    s.execute(sql);
                } catch (SQLException e) {
                    // refused by the server (syntax, privileges, replication): captured all the same
                }
            }
            // The same forms as server-side prepared statements (COM_STMT_PREPARE), not run.
            for (String sql : new String[] {"ALTER USER nobody_sluice IDENTIFIED BY 'S3cret-stmt-prepare'",
                "SET PASSWORD FOR nobody_sluice = PASSWORD('S3cret-stmt-prepare-2')"}) {
                secrets.add(secret(sql).orElseThrow());
                try (PreparedStatement ps = c.prepareStatement(sql)) {
                    ps.getMetaData();
                } catch (SQLException e) {
                    // refused at prepare: captured all the same
                }
            }
        }
        CaptureStatus status = sluice().stopCapture();
        assertThat(status.records()).isGreaterThan(FORMS.length);

        List<Path> files;
        try (Stream<Path> list = Files.list(dir)) {
            files = list.sorted().toList();
        }
        assertThat(files).isNotEmpty();
        byte[] all = new byte[0];
        for (Path file : files) {
            byte[] bytes = Files.readAllBytes(file);
            all = concat(all, bytes);
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).as("%s", file)
                    .isEqualTo("rw-------");
        }
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir))).isEqualTo("rwx------");
        // The statements are there, with their user names, and their secrets are not.
        assertThat(indexOf(all, "sluice_secret_u".getBytes(StandardCharsets.UTF_8))).isNotNegative();
        assertThat(indexOf(all, "'<secret>'".getBytes(StandardCharsets.UTF_8))).isNotNegative();
        assertThat(secrets).hasSize(FORMS.length - 1 + 2);
        for (String secret : secrets) {
            assertThat(indexOf(all, secret.getBytes(StandardCharsets.UTF_8))).as(secret).isNegative();
            assertThat(indexOf(all, secret.substring(6).getBytes(StandardCharsets.UTF_8))).as(secret).isNegative();
        }
    }

    @Test
    void outputAndKeyFileMustLieUnderTheirDirectoriesAndRefusalsTellNothingOfOtherFiles() throws Exception {
        Files.createDirectories(KEYS);
        Path outsideKey = ROOT.resolve("outside.key");
        Files.writeString(outsideKey, "00112233445566778899aabbccddeeff");
        Files.createSymbolicLink(KEYS.resolve("link.key"), outsideKey);
        Files.createDirectories(CAPTURES);
        Files.createSymbolicLink(CAPTURES.resolve("link-out"), ROOT);

        for (String output : new String[] {"/tmp/sluice-nowhere", "../escape", "/etc", "link-out/x", "."}) {
            assertRefused(() -> sluice().startCapture(CaptureOptions.of(Path.of(output))), "output", output);
        }
        assertThat(Files.exists(ROOT.resolve("escape"))).isFalse();
        assertThat(Files.exists(ROOT.resolve("x"))).isFalse();
        for (String key : new String[] {"/etc/shadow", "/etc/machine-id", "/etc/no-such-file", "../outside.key",
            outsideKey.toString(), "link.key"}) {
            assertRefused(() -> sluice().startCapture(CaptureOptions.of(Path.of("k")).withMinFreeSpace(0)
                    .withKeyFile(Path.of(key))), "keyFile", key);
        }
        assertThat(Files.exists(CAPTURES.resolve("k"))).as("nothing is made for a refused capture").isFalse();

        // Relative names are taken from the two directories; a key there works.
        Files.writeString(KEYS.resolve("capture.key"),
                "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff");
        CaptureStatus started = sluice().startCapture(CaptureOptions.of(Path.of("run1")).withMinFreeSpace(0)
                .withKeyFile(Path.of("capture.key")));
        assertThat(started.running()).isTrue();
        assertThat(started.output()).isEqualTo(CAPTURES.resolve("run1").toString());
        sluice().stopCapture();
        assertThat(Files.isDirectory(CAPTURES.resolve("run1"))).isTrue();
    }

    private static void assertRefused(org.assertj.core.api.ThrowableAssert.ThrowingCallable start, String key,
            String given) {
        assertThatThrownBy(start).isInstanceOfSatisfying(CaptureException.class, e -> {
            assertThat(e.kind()).isEqualTo(CaptureException.Kind.INVALID);
            assertThat(e.getMessage()).isEqualTo(key + ": \"" + given + "\" (expected: a path under "
                    + (key.equals("output") ? "capture.directory, " + CAPTURES : "capture.keyDirectory, " + KEYS)
                    + ")");
        });
    }

    /** The secret in a statement: the text that starts with S3cret-, to the next quote. */
    private static java.util.Optional<String> secret(String sql) {
        int start = sql.indexOf("S3cret-");
        if (start < 0) {
            return java.util.Optional.empty();
        }
        int end = sql.indexOf('\'', start);
        return java.util.Optional.of(sql.substring(start, end));
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int k = 0; k < needle.length; k++) {
                if (haystack[i + k] != needle[k]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
