package io.sluice.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.sluice.api.SessionSnapshot;
import io.sluice.config.ProxyProtocol;
import io.sluice.config.UserConfig;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.Prerequisites;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.TestMariaDb;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * PROXY protocol on the client listener, behind a real HAProxy ({@code send-proxy} and {@code send-proxy-v2}): the
 * client the header names is the one {@code user@host} rules and {@code /api/sessions} see; a header from outside
 * {@code server.proxyProtocol.trustedNetworks} closes the connection; a client talking directly is served as before.
 * Clients bind 127.0.0.2 or 127.0.0.3 while HAProxy connects to Sluice from 127.0.0.1, so only the header can tell.
 */
@ExtendWith(LeakDetection.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("server")
@Tag("tools")
class ProxyProtocolTest {

    @Test
    void haproxyNamesTheClientWithEitherVersion() throws Exception {
        assumeFalse(ProxyUnderTest.isDirect(), "PROXY protocol is Sluice's listener");
        try (ProxyUnderTest proxy = ProxyUnderTest.builder()
                .server(s -> s.withProxyProtocol(new ProxyProtocol(List.of("127.0.0.1/32"))))
                .user(new UserConfig("alice", "127.0.0.2", "alice-pw"))
                .start();
             HaProxy haproxy = HaProxy.inFrontOf(proxy.port())) {
            for (int port : new int[] {haproxy.v1Port(), haproxy.v2Port()}) {
                try (RawMySqlClient alice = RawMySqlClient.connect("127.0.0.1", port, "127.0.0.2")) {
                    assertThat(alice.authenticate("alice", "alice-pw", null).isOk())
                            .as("alice@127.0.0.2 through HAProxy port %d", port).isTrue();
                    assertThat(alice.query("SELECT 1").rows()).containsExactly(List.of("1"));
                    assertThat(proxy.sluice().sessions()).extracting(SessionSnapshot::client)
                            .anySatisfy(client -> assertThat(client).startsWith("/127.0.0.2:"));
                }
                try (RawMySqlClient elsewhere = RawMySqlClient.connect("127.0.0.1", port, "127.0.0.3")) {
                    assertThat(elsewhere.authenticate("alice", "alice-pw", null).errorCode())
                            .as("alice from 127.0.0.3: her account names another host").isEqualTo(1045);
                }
            }
            // A client of the trusted network may still talk to Sluice directly, without a header.
            try (RawMySqlClient direct = RawMySqlClient.login("127.0.0.1", proxy.port(), proxy.user(),
                    proxy.password(), null)) {
                assertThat(direct.query("SELECT 2").rows()).containsExactly(List.of("2"));
            }
        }
    }

    @Test
    void aHeaderFromOutsideTheTrustedNetworksClosesOnlyItsConnection() throws Exception {
        assumeFalse(ProxyUnderTest.isDirect(), "PROXY protocol is Sluice's listener");
        try (ProxyUnderTest proxy = ProxyUnderTest.builder()
                .server(s -> s.withProxyProtocol(new ProxyProtocol(List.of("10.0.0.0/8"))))
                .start();
             RawMySqlClient other = RawMySqlClient.login("127.0.0.1", proxy.port(), proxy.user(), proxy.password(),
                     null);
             RawMySqlClient forger = RawMySqlClient.connect("127.0.0.1", proxy.port())) {
            forger.writeRaw("PROXY TCP4 10.1.2.3 127.0.0.1 40000 3307\r\n".getBytes(StandardCharsets.US_ASCII));
            assertThat(forger.readUntilClosed()).as("what Sluice answered a forged header with").isEmpty();
            assertThat(other.query("SELECT 3").rows()).as("another session").containsExactly(List.of("3"));
        }
    }

    /** An HAProxy in tcp mode with two frontends, one per PROXY protocol version, both to one Sluice port. */
    private static final class HaProxy implements AutoCloseable {
        private final Process process;
        private final Path config;
        private final int v1Port;
        private final int v2Port;

        private HaProxy(Process process, Path config, int v1Port, int v2Port) {
            this.process = process;
            this.config = config;
            this.v1Port = v1Port;
            this.v2Port = v2Port;
        }

        static HaProxy inFrontOf(int sluicePort) throws Exception {
            Path binary = List.of(Path.of("/usr/sbin/haproxy"), Path.of("/usr/bin/haproxy")).stream()
                    .filter(Files::isExecutable).findFirst().orElse(null);
            Prerequisites.require(binary != null, "HAProxy", "apt-get install haproxy");
            int v1 = TestMariaDb.freePortForTests();
            int v2 = TestMariaDb.freePortForTests();
            Path config = Files.createTempFile("sluice-haproxy", ".cfg");
            Files.writeString(config, String.join("\n",
                    "defaults", "  mode tcp", "  timeout connect 5s", "  timeout client 30s", "  timeout server 30s",
                    "frontend v1", "  bind 127.0.0.1:" + v1, "  default_backend sluice_v1",
                    "backend sluice_v1", "  server s 127.0.0.1:" + sluicePort + " send-proxy",
                    "frontend v2", "  bind 127.0.0.1:" + v2, "  default_backend sluice_v2",
                    "backend sluice_v2", "  server s 127.0.0.1:" + sluicePort + " send-proxy-v2", ""));
            Process process = new ProcessBuilder(binary.toString(), "-db", "-f", config.toString())
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            HaProxy haproxy = new HaProxy(process, config, v1, v2);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!(listening(v1) && listening(v2))) {
                if (!process.isAlive() || System.nanoTime() > deadline) {
                    haproxy.close();
                    throw new IllegalStateException("HAProxy did not start listening (exit "
                            + (process.isAlive() ? "-" : process.exitValue()) + ")");
                }
                Thread.sleep(50);
            }
            return haproxy;
        }

        private static boolean listening(int port) {
            try (Socket probe = new Socket()) {
                probe.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return true;
            } catch (IOException e) {
                return false;
            }
        }

        int v1Port() {
            return v1Port;
        }

        int v2Port() {
            return v2Port;
        }

        @Override
        public void close() throws IOException, InterruptedException {
            process.destroy();
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
            Files.deleteIfExists(config);
        }
    }
}
