package io.sluice.backend;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testing.LeakDetection;
import io.sluice.testing.MySqlWire;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.RawMySqlClient;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Sluice stops while one of its own exchanges with a backend is half answered: the exchange's packets are released
 * and the channel closed while the event loops still run. A real server answers Sluice's session check within a
 * millisecond, so this state cannot be produced on demand with MariaDB: a scripted backend logs Sluice in and
 * answers the check with its first packet only. Such packets were reported leaked by CI right after test classes
 * stopped Sluice; Sluice now closes every pooled connection while its loop still runs, and this checks that the
 * half-answered exchange is released on the way.
 */
@ExtendWith(LeakDetection.class)
@Tag("server")
class StopMidExchangeTest {

    /** Logs any client in, answers its first command with one packet (a column count), then says nothing more. */
    private static final class HalfAnsweringBackend implements AutoCloseable {
        private final ServerSocket server;
        private final ExecutorService threads = Executors.newCachedThreadPool();
        private final List<Socket> sockets = new CopyOnWriteArrayList<>();
        final CountDownLatch halfAnswered = new CountDownLatch(1);

        HalfAnsweringBackend() throws IOException {
            server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            threads.execute(this::accept);
        }

        int port() {
            return server.getLocalPort();
        }

        private void accept() {
            while (!server.isClosed()) {
                try {
                    Socket socket = server.accept();
                    sockets.add(socket);
                    threads.execute(() -> serve(socket));
                } catch (IOException e) {
                    return; // closed
                }
            }
        }

        private void serve(Socket socket) {
            try (socket) {
                InputStream in = socket.getInputStream();
                OutputStream out = socket.getOutputStream();
                write(out, 0, greeting());
                if (read(in) == null) {
                    return; // Sluice's start-up probe only reads the greeting
                }
                write(out, 2, MySqlWire.ok(MySqlWire.SERVER_STATUS_AUTOCOMMIT));
                if (read(in) == null) {
                    return;
                }
                write(out, 1, MySqlWire.columnCount(7)); // a result set of 7 columns ... and nothing after it
                halfAnswered.countDown();
                while (read(in) != null) {
                    // wait for Sluice to close
                }
            } catch (IOException e) {
                // Sluice closed the connection
            }
        }

        private static byte[] greeting() {
            int capabilities = 0x000FA20F; // 4.1 protocol, secure connection, plugin auth, transactions, ...
            return MySqlWire.handshakeV10("5.5.5-10.11.0-scripted", 1,
                    "abcdefghijklmnopqrst".getBytes(StandardCharsets.US_ASCII), capabilities,
                    MySqlWire.UTF8MB4_GENERAL_CI, MySqlWire.SERVER_STATUS_AUTOCOMMIT, "mysql_native_password");
        }

        private static void write(OutputStream out, int sequenceId, byte[] payload) throws IOException {
            out.write(MySqlWire.frame(sequenceId, payload));
            out.flush();
        }

        private static byte[] read(InputStream in) throws IOException {
            DataInputStream data = new DataInputStream(in);
            byte[] header = new byte[4];
            try {
                data.readFully(header);
            } catch (java.io.EOFException e) {
                return null;
            }
            int length = (header[0] & 0xFF) | (header[1] & 0xFF) << 8 | (header[2] & 0xFF) << 16;
            byte[] payload = new byte[length];
            data.readFully(payload);
            return payload;
        }

        @Override
        public void close() throws IOException {
            server.close();
            for (Socket socket : sockets) {
                socket.close();
            }
            threads.shutdownNow();
        }
    }

    @Test
    void stoppingDuringSluicesOwnExchangeReleasesItsPackets() throws Exception {
        ExecutorService client = Executors.newSingleThreadExecutor();
        try (HalfAnsweringBackend backend = new HalfAnsweringBackend()) {
            ProxyUnderTest proxy = ProxyUnderTest.builder()
                    .backendUrl("jdbc:mysql://127.0.0.1:" + backend.port() + "/")
                    .connectionTimeoutMillis(30_000)
                    .start();
            RawMySqlClient raw = RawMySqlClient.connect(proxy.host(), proxy.port());
            try {
                // A login that names a schema takes a backend connection at once; its login's session check is the
                // exchange the scripted backend answers by half.
                client.submit(() -> raw.authenticate(proxy.user(), proxy.password(), "app"));
                assertThat(backend.halfAnswered.await(20, TimeUnit.SECONDS)).as("Sluice sent its session check").isTrue();
                Thread.sleep(200); // lets Sluice read the half answer into its exchange
            } finally {
                proxy.close();
                raw.close();
            }
        } finally {
            client.shutdownNow();
        }
        LeakDetection.assertNoLeaks(getClass().getSimpleName());
    }
}
