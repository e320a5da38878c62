package io.sluice.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.config.TlsConfig;
import io.sluice.testing.SluiceExtension;
import io.sluice.testing.Tool;
import io.sluice.tls.GeneratedCertificates;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code server.tls.verifyClient: REQUIRE} with the real mariadb client: a certificate signed by the CA Sluice trusts
 * gets in, no certificate or one from another CA does not. The client certificates are made with the openssl
 * command, as an operator would make them.
 */
@Tag("server")
@Tag("tools")
class ClientCertificateTest {

    @TempDir
    static Path dir;

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.with(b -> b.server(s -> s.withTls(requireCertificates())))
            .sluiceOnly("checks Sluice's own TLS")
            .requires(Tool.MARIADB, Tool.OPENSSL);

    private static Path ca;

    private static TlsConfig requireCertificates() {
        TlsConfig generated = TlsConfig.defaults().withGeneratedDirectory(dir);
        return new TlsConfig(true, null, null, null, TlsConfig.VerifyClient.REQUIRE, false, generated.provider(),
                generated.protocols(), dir);
    }

    @BeforeAll
    static void makeClientCertificates() throws Exception {
        ca = dir.resolve(GeneratedCertificates.CA_FILE);
        // A client certificate signed by the generated CA (whose key sits next to it in the conf dir) ...
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=app",
                "-keyout", "client-key.pem", "-out", "client.csr");
        openssl("x509", "-req", "-in", "client.csr", "-CA", GeneratedCertificates.CA_FILE, "-CAkey",
                GeneratedCertificates.CA_KEY_FILE, "-CAcreateserial", "-days", "1", "-out", "client-cert.pem");
        // ... and one from a CA of its own, which Sluice must refuse.
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj",
                "/CN=stranger", "-days", "1", "-keyout", "stranger-key.pem", "-out", "stranger-cert.pem");
    }

    private static void openssl(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(Tool.OPENSSL.path().toString()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(String.join(" ", command) + "\n" + output).isZero();
    }

    private record Result(int exit, String output) {
    }

    private static Result mariadb(String... tlsOptions) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(Tool.MARIADB.path().toString(), "--ssl", "--ssl-ca=" + ca));
        command.addAll(List.of(tlsOptions));
        command.addAll(List.of("-h127.0.0.1", "-P" + proxy.port(), "-u" + proxy.user(), "-p" + proxy.password(),
                "-N", "-B", "-e", "SELECT 6 * 7"));
        Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).as("mariadb finished").isTrue();
        return new Result(process.exitValue(), output.trim());
    }

    @Test
    void aClientWithACertificateFromTheTrustedCaGetsIn() throws Exception {
        Result result = mariadb("--ssl-cert=client-cert.pem", "--ssl-key=client-key.pem");

        assertThat(result.exit()).as(result.output()).isZero();
        assertThat(result.output()).isEqualTo("42");
    }

    @Test
    void aClientWithoutACertificateIsRefused() throws Exception {
        Result result = mariadb();

        assertThat(result.exit()).as(result.output()).isNotZero();
        assertThat(result.output()).doesNotContain("42").containsIgnoringCase("ssl");
    }

    @Test
    void aClientWithACertificateFromAnotherCaIsRefused() throws Exception {
        Result result = mariadb("--ssl-cert=stranger-cert.pem", "--ssl-key=stranger-key.pem");

        assertThat(result.exit()).as(result.output()).isNotZero();
        assertThat(result.output()).doesNotContain("42");
    }
}
