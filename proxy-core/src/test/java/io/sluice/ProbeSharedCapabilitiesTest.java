package io.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.sluice.backend.BackendServerInfo;
import io.sluice.config.DataSourceConfig;
import io.sluice.protocol.Capabilities;
import io.sluice.protocol.HandshakeV10;
import io.sluice.testing.Prerequisites;
import io.sluice.testing.TestMariaDb;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The start-up probe offers clients only what every reachable backend offers. The other backend here is a scripted
 * greeting: a MariaDB without metadata caching (10.5) cannot be started on demand, and the probe reads nothing but
 * the greeting.
 *
 * <p>It needs a test server with MARIADB_CLIENT_CACHE_METADATA, which is what the other backend lacks. CI's servers
 * have it (MariaDB 10.6 and later: Debian 12's 10.11, the embedded 11.4), so there a server without it fails the test
 * rather than skips it; a developer's older MariaDB or MySQL skips it (see {@link Prerequisites#mariaDbCacheMetadata}).
 * The prerequisite is read from the server's own greeting, and the probe must then report the bit too, so a probe that
 * lost it fails here instead of passing for an old server.
 */
@Tag("server")
class ProbeSharedCapabilitiesTest {

    @Test
    void capabilitiesAreThoseEveryReachableBackendOffers() throws Exception {
        Prerequisites.mariaDbCacheMetadata();
        TestMariaDb mariaDb = TestMariaDb.get();
        BackendServerInfo real = ProbeResult.probe(List.of(dataSource("real", mariaDb.port()))).serverInfo();
        assertThat(real.mariaDbCapabilities() & Capabilities.MARIADB_CLIENT_CACHE_METADATA)
                .as("MARIADB_CLIENT_CACHE_METADATA as the probe read it from the greeting").isNotZero();
        int older = real.mariaDbCapabilities() & ~Capabilities.MARIADB_CLIENT_CACHE_METADATA;
        byte[] nonce = "abcdefghijklmnopqrst".getBytes(java.nio.charset.StandardCharsets.US_ASCII); // no NUL in it
        HandshakeV10 olderGreeting = new HandshakeV10("5.5.5-10.5.27-MariaDB", 1, nonce,
                real.capabilities() & ~Capabilities.CLIENT_DEPRECATE_EOF, real.collationId(), 2,
                "mysql_native_password", older);
        try (ServerSocket listener = new ServerSocket(0, 4, InetAddress.getLoopbackAddress())) {
            Thread greeter = new Thread(() -> greetOnce(listener, olderGreeting), "older-mariadb-greeting");
            greeter.start();
            ProbeResult probe = ProbeResult.probe(List.of(dataSource("real", mariaDb.port()),
                    dataSource("older", listener.getLocalPort())));
            greeter.join(10_000);

            assertThat(probe.reachable()).containsExactly("real", "older");
            BackendServerInfo shared = probe.serverInfo();
            assertThat(shared.serverVersion()).isEqualTo(real.serverVersion());
            assertThat(shared.mariaDbCapabilities()).isEqualTo(older);
            assertThat(shared.capabilities() & Capabilities.CLIENT_DEPRECATE_EOF).isZero();
            assertThat(shared.hasMariaDbCapabilities()).isTrue();
        }
    }

    private static DataSourceConfig dataSource(String name, int port) {
        return new DataSourceConfig(name, "jdbc:mysql://127.0.0.1:" + port + "/", "root", "", 2_000, 600_000,
                1_800_000, 4, 0);
    }

    private static void greetOnce(ServerSocket listener, HandshakeV10 greeting) {
        ByteBuf frame = greeting.write(UnpooledByteBufAllocator.DEFAULT);
        try (Socket socket = listener.accept(); OutputStream out = socket.getOutputStream()) {
            byte[] bytes = new byte[frame.readableBytes()];
            frame.readBytes(bytes);
            out.write(bytes);
            out.flush();
            socket.getInputStream().read(); // until the probe hangs up
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } finally {
            frame.release();
        }
    }
}
