package io.sluice.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP relay in front of a MySQL server that can be switched to play a server in trouble, for new connections
 * (those relayed before the switch carry on):
 * <ul>
 *   <li>{@link #fill()}: at its {@code max_connections}, each gets what MariaDB sends in place of a greeting, ERR 1040
 *       "Too many connections" without a SQLSTATE (the marker comes only with CLIENT_PROTOCOL_41, which the server
 *       does not know yet), and is closed;</li>
 *   <li>{@link #hang()}: hung (SIGSTOPped, say), each is accepted, as the kernel does for a stopped process, and
 *       never hears a byte; {@link #freeze()} also stops the connections relayed so far, both ways;</li>
 *   <li>{@link #slowReplies(long)}: far away, or busy: what the server sends arrives that much later (every
 *       connection, from then on), which widens the window in which a client's next command meets a query of
 *       Sluice's own still running;</li>
 *   <li>{@link #holdRequests(String, long)}: a command that contains a given text reaches the server that much
 *       later than it was sent (a busy network on the way in), while everything else passes at once.</li>
 * </ul>
 * The shared test server cannot be filled or stopped without disturbing the others that use it.
 */
public final class FaultyServerRelay implements AutoCloseable {
    /** The ERR payload: 0xFF, 1040 little-endian, the message, no '#' and no SQLSTATE. */
    private static final byte[] TOO_MANY_CONNECTIONS = MySqlWire.concat(new byte[] {(byte) 0xFF, 0x10, 0x04},
            "Too many connections".getBytes(StandardCharsets.UTF_8));

    private final ServerSocket listener;
    private final String targetHost;
    private final int targetPort;
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread thread = new Thread(r, "full-server-relay");
        thread.setDaemon(true);
        return thread;
    });
    private final AtomicInteger turnedAway = new AtomicInteger();
    private final java.util.List<Socket> held = new java.util.concurrent.CopyOnWriteArrayList<>();
    private volatile boolean full;
    private volatile boolean hung;
    private volatile boolean frozen;
    private volatile long replyDelayMillis;
    private volatile byte[] heldMarker;
    private volatile long heldMillis;

    /** Listens on a free port of 127.0.0.1 and relays to {@code targetHost:targetPort}. */
    public FaultyServerRelay(String targetHost, int targetPort) throws IOException {
        this.targetHost = targetHost;
        this.targetPort = targetPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        threads.execute(this::accept);
    }

    public int port() {
        return listener.getLocalPort();
    }

    /** A JDBC URL of the relay, as a data source names it. */
    public String jdbcUrl() {
        return "jdbc:mysql://127.0.0.1:" + port() + "/";
    }

    /** From now on, new connections are turned away with ERR 1040. */
    public void fill() {
        full = true;
    }

    /** From now on, new connections are accepted and left without a greeting. */
    public void hang() {
        hung = true;
    }

    /** Hangs new connections and stops relaying on the open ones: the server is stopped. */
    public void freeze() {
        hung = true;
        frozen = true;
    }

    /** From now on, each chunk the server sends is held {@code millis} before it is passed on. */
    public void slowReplies(long millis) {
        replyDelayMillis = millis;
    }

    /**
     * From now on, each chunk a client sends that contains {@code marker} (as UTF-8) is held {@code millis} before it
     * is passed on; other chunks are not.
     */
    public void holdRequests(String marker, long millis) {
        heldMillis = millis;
        heldMarker = marker.getBytes(StandardCharsets.UTF_8);
    }

    /** How many connections were turned away. */
    public int turnedAway() {
        return turnedAway.get();
    }

    /** How many connections were accepted and left hanging. */
    public int hanging() {
        return held.size();
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                if (hung) {
                    held.add(client);
                } else if (full) {
                    turnAway(client);
                } else {
                    relay(client);
                }
            } catch (IOException closed) {
                return;
            }
        }
    }

    private void turnAway(Socket client) throws IOException {
        try (client) {
            OutputStream out = client.getOutputStream();
            out.write(MySqlWire.frame(0, TOO_MANY_CONNECTIONS));
            out.flush();
        }
        turnedAway.incrementAndGet();
    }

    private void relay(Socket client) throws IOException {
        Socket server = new Socket();
        server.connect(new InetSocketAddress(targetHost, targetPort), 5_000);
        threads.execute(() -> pump(client, server, false));
        threads.execute(() -> pump(server, client, true));
    }

    /** Copies until either side ends, then closes both. */
    private void pump(Socket from, Socket to, boolean fromServer) {
        byte[] buffer = new byte[16 * 1024];
        try (InputStream in = from.getInputStream()) {
            OutputStream out = to.getOutputStream();
            for (int n; (n = in.read(buffer)) >= 0; ) {
                while (frozen && !listener.isClosed()) {
                    Thread.sleep(10); // a stopped server: the bytes stay where they are
                }
                long delay = replyDelayMillis;
                if (fromServer && delay > 0) {
                    Thread.sleep(delay);
                }
                byte[] marker = heldMarker;
                if (!fromServer && marker != null && contains(buffer, n, marker)) {
                    Thread.sleep(heldMillis);
                }
                out.write(buffer, 0, n);
            }
        } catch (IOException | InterruptedException ended) {
            // one side closed or reset: the other goes too
        } finally {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    private static boolean contains(byte[] buffer, int length, byte[] marker) {
        for (int i = 0; i + marker.length <= length; i++) {
            if (java.util.Arrays.equals(buffer, i, i + marker.length, marker, 0, marker.length)) {
                return true;
            }
        }
        return false;
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        held.forEach(FaultyServerRelay::closeQuietly);
        threads.shutdownNow();
    }
}
