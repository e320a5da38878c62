package io.sluice.admin;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin port's HTTP/1.1 connections, read and written without blocking on one thread of their own, so that no
 * client, however slow, many or large, holds a thread that serves requests (decision 132). A request is handed to an
 * executor only once it has arrived whole: the probes ({@code /readyz}, {@code /health}) and {@code /metrics} to one
 * of their own, the rest to the API's, so a slow API call holds up no probe. {@code /livez}, whose answer is a
 * constant, is answered on the port's thread.
 *
 * <p>What a client may take: {@value #MAX_CONNECTIONS} connections in all, {@value #HEADER_BYTES} bytes of request
 * line and headers (431 beyond), {@link AdminServer#MAX_REQUEST_BYTES} of body (413, before it is read),
 * {@value #REQUEST_TIMEOUT_MILLIS} ms for a request's headers once its first byte came and as long for its body (then
 * the connection closes), {@value #IDLE_TIMEOUT_MILLIS} ms idle between requests, and {@value #WRITE_TIMEOUT_MILLIS}
 * ms to take a response. A connection over the limit takes the place of the oldest one that is idle, still sending
 * its request, or not reading its response (which is closed): so a flood of connections that send nothing, trickle
 * their headers or read nothing cannot keep a probe out; only requests being answered keep their place.
 *
 * <p>Bodies must come with a {@code Content-Length} (chunked ones get 411). Requests on a connection are answered
 * one at a time, in order.
 */
final class AdminPort implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AdminPort.class);

    static final int MAX_CONNECTIONS = 64;
    /** Connections the kernel queues before the port thread accepts them (capped by net.core.somaxconn). */
    static final int ACCEPT_BACKLOG = 1024;
    static final int HEADER_BYTES = 8 * 1024;
    static final long REQUEST_TIMEOUT_MILLIS = 5_000;
    static final long IDLE_TIMEOUT_MILLIS = 30_000;
    static final long WRITE_TIMEOUT_MILLIS = 10_000;
    /** How often deadlines are checked: the selector wakes at least this often. */
    private static final long TICK_MILLIS = 100;

    /** What answers a whole request; called on an executor thread. */
    interface Responder {
        /** The response, status line to body, for a request. */
        Response respond(String method, String target, String authorization, String body);
    }

    /** A response: status, content type, body, and the Allow or WWW-Authenticate header when it needs one. */
    record Response(int status, String contentType, byte[] body, String extraHeader) {
    }

    private final ServerSocketChannel server;
    private final Selector selector;
    private final Responder responder;
    private final ExecutorService probes;
    private final ExecutorService api;
    /** Connections in the order they came; the first idle or reading one gives way when the port is full. */
    private final Set<Connection> connections = new LinkedHashSet<>();
    /** Responses computed on executor threads, for the port's thread to write. */
    private final Queue<Runnable> done = new ConcurrentLinkedQueue<>();
    private final Thread thread;
    private volatile boolean closed;

    AdminPort(InetSocketAddress address, Responder responder, ExecutorService probes, ExecutorService api)
            throws IOException {
        this.responder = responder;
        this.probes = probes;
        this.api = api;
        this.selector = Selector.open();
        try {
            this.server = ServerSocketChannel.open();
            // A deep accept queue: under a flood of connections the port thread accepts them and closes the oldest
            // idle ones (makeRoom); a short queue would instead drop the SYNs of a liveness probe behind them, which
            // then times out before it is accepted (AdminPortUnderAttackTest failed so once in CI).
            server.bind(address, ACCEPT_BACKLOG);
            server.configureBlocking(false);
            server.register(selector, SelectionKey.OP_ACCEPT);
        } catch (IOException e) {
            selector.close();
            throw e;
        }
        this.thread = new Thread(this::run, "sluice-admin-port");
        thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    InetSocketAddress localAddress() {
        try {
            return (InetSocketAddress) server.getLocalAddress();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Connections open now, for tests. */
    int connectionCount() {
        return connections.size();
    }

    @Override
    public void close() {
        closed = true;
        selector.wakeup();
        try {
            thread.join(1_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void run() {
        try {
            while (!closed) {
                selector.select(TICK_MILLIS);
                Runnable task;
                while ((task = done.poll()) != null) {
                    task.run();
                }
                Iterator<SelectionKey> keys = selector.selectedKeys().iterator();
                while (keys.hasNext()) {
                    SelectionKey key = keys.next();
                    keys.remove();
                    if (!key.isValid()) {
                        continue;
                    }
                    if (key.isAcceptable()) {
                        accept();
                    } else {
                        Connection connection = (Connection) key.attachment();
                        if (key.isReadable()) {
                            connection.read();
                        }
                        if (key.isValid() && key.isWritable()) {
                            connection.write();
                        }
                    }
                }
                expire(System.nanoTime());
            }
        } catch (IOException | ClosedSelectorException e) {
            if (!closed) {
                log.warn("admin port stopped: {}", e.toString());
            }
        } finally {
            for (Connection connection : new ArrayList<>(connections)) {
                connection.close();
            }
            try {
                server.close();
                selector.close();
            } catch (IOException e) {
                log.debug("admin port close: {}", e.toString());
            }
        }
    }

    private void accept() throws IOException {
        SocketChannel channel;
        while ((channel = server.accept()) != null) {
            if (connections.size() >= MAX_CONNECTIONS && !makeRoom()) {
                channel.close(); // every place is taken by a request being answered
                continue;
            }
            channel.configureBlocking(false);
            channel.socket().setTcpNoDelay(true);
            Connection connection = new Connection(channel);
            connection.key = channel.register(selector, SelectionKey.OP_READ, connection);
            connections.add(connection);
        }
    }

    /**
     * Closes the oldest connection that is idle, or else the oldest still sending its request, or else the oldest
     * whose response waits for the client to read it. Only a request being answered keeps its place.
     */
    private boolean makeRoom() {
        Connection idle = null;
        Connection reading = null;
        Connection unread = null;
        for (Connection c : connections) {
            if (c.state == State.IDLE) {
                idle = c;
                break;
            }
            if (reading == null && c.state == State.READING) {
                reading = c;
            } else if (unread == null && c.state == State.SERVING && c.out != null && c.out.hasRemaining()) {
                unread = c;
            }
        }
        Connection victim = idle != null ? idle : reading != null ? reading : unread;
        if (victim == null) {
            return false;
        }
        log.debug("admin port full: closing {} ({})", victim.remote(), victim.state);
        victim.close();
        return true;
    }

    private void expire(long now) {
        List<Connection> late = null;
        for (Connection c : connections) {
            if (c.deadline != 0 && now - c.deadline > 0) {
                if (late == null) {
                    late = new ArrayList<>();
                }
                late.add(c);
            }
        }
        if (late != null) {
            for (Connection c : late) {
                log.debug("admin connection {}: {} timed out", c.remote(), c.state);
                c.close();
            }
        }
    }

    private enum State {
        /** Between requests: nothing of the next one has come. */
        IDLE,
        /** Part of a request has come. */
        READING,
        /** A whole request is being answered, or its response written. */
        SERVING
    }

    /** One client connection, on the port's thread only. */
    private final class Connection {
        private final SocketChannel channel;
        private SelectionKey key;
        private final ByteBuffer in = ByteBuffer.allocate(HEADER_BYTES + AdminServer.MAX_REQUEST_BYTES);
        private ByteBuffer out;
        private State state = State.IDLE;
        /** When the connection closes unless it moves on (System.nanoTime()), 0 for none. */
        private long deadline = after(IDLE_TIMEOUT_MILLIS);
        /** The request line and headers read, while its body comes: -1 before. */
        private int headerEnd = -1;
        private long bodyLength;
        private boolean closeAfterResponse;
        private String method;
        private String target;
        private String authorization;

        Connection(SocketChannel channel) {
            this.channel = channel;
        }

        String remote() {
            try {
                return String.valueOf(channel.getRemoteAddress());
            } catch (IOException e) {
                return "(closed)";
            }
        }

        void read() {
            int n;
            try {
                n = channel.read(in);
            } catch (IOException e) {
                close();
                return;
            }
            if (n < 0) {
                close();
                return;
            }
            if (n > 0 && state == State.IDLE) {
                state = State.READING;
                deadline = after(REQUEST_TIMEOUT_MILLIS);
            }
            if (state == State.READING) {
                parse();
            } else if (state == State.SERVING && !in.hasRemaining()) {
                key.interestOps(key.interestOps() & ~SelectionKey.OP_READ); // pipelined past what is kept
            }
        }

        /** Looks for a whole request in what has come; dispatches it when there is one. */
        private void parse() {
            if (headerEnd < 0) {
                int end = headersEnd();
                if (end < 0) {
                    if (in.position() >= HEADER_BYTES) {
                        fail(431, "request line and headers over " + HEADER_BYTES + " bytes");
                    }
                    return;
                }
                if (!readHead(end)) {
                    return;
                }
                headerEnd = end;
                deadline = after(REQUEST_TIMEOUT_MILLIS); // as long again for the body
            }
            if (in.position() - headerEnd < bodyLength) {
                return;
            }
            String body = new String(in.array(), headerEnd, (int) bodyLength, StandardCharsets.UTF_8);
            int consumed = headerEnd + (int) bodyLength;
            in.flip();
            in.position(consumed);
            in.compact();
            headerEnd = -1;
            dispatch(method, target, authorization, body);
        }

        /** The index after the blank line that ends the headers, or -1. */
        private int headersEnd() {
            byte[] b = in.array();
            int limit = Math.min(in.position(), HEADER_BYTES);
            for (int i = 0; i + 1 < limit; i++) {
                if (b[i] == '\n' && (b[i + 1] == '\n' || b[i + 1] == '\r' && i + 2 < limit && b[i + 2] == '\n')) {
                    return b[i + 1] == '\n' ? i + 2 : i + 3;
                }
            }
            return -1;
        }

        /** Reads the request line and headers; answers and returns false when they are unusable. */
        private boolean readHead(int end) {
            String head = new String(in.array(), 0, end, StandardCharsets.ISO_8859_1);
            String[] lines = head.split("\r?\n");
            int first = 0;
            while (first < lines.length && lines[first].isEmpty()) {
                first++; // blank lines before a request are allowed (RFC 9112, 2.2)
            }
            String[] parts = first < lines.length ? lines[first].split(" ") : new String[0];
            if (parts.length != 3 || !parts[2].startsWith("HTTP/1.") || !parts[1].startsWith("/")) {
                fail(400, "not an HTTP/1.1 request line");
                return false;
            }
            method = parts[0];
            target = parts[1];
            authorization = null;
            bodyLength = 0;
            closeAfterResponse = parts[2].equals("HTTP/1.0");
            boolean expectContinue = false;
            for (int i = first + 1; i < lines.length; i++) {
                String line = lines[i];
                int colon = line.indexOf(':');
                if (colon <= 0) {
                    continue;
                }
                String name = line.substring(0, colon).trim().toLowerCase(Locale.ROOT);
                String value = line.substring(colon + 1).trim();
                switch (name) {
                    case "content-length" -> {
                        try {
                            bodyLength = Long.parseLong(value);
                        } catch (NumberFormatException e) {
                            bodyLength = -1;
                        }
                        if (bodyLength < 0) {
                            fail(400, "Content-Length: not a length");
                            return false;
                        }
                    }
                    case "transfer-encoding" -> {
                        fail(411, "a body needs a Content-Length");
                        return false;
                    }
                    case "authorization" -> authorization = value;
                    case "connection" -> closeAfterResponse = value.equalsIgnoreCase("close")
                            || closeAfterResponse && !value.equalsIgnoreCase("keep-alive");
                    case "expect" -> expectContinue = value.equalsIgnoreCase("100-continue");
                    default -> {
                        // not used
                    }
                }
            }
            if (bodyLength > AdminServer.MAX_REQUEST_BYTES) {
                fail(413, "request body over " + AdminServer.MAX_REQUEST_BYTES + " bytes");
                return false;
            }
            if (expectContinue && bodyLength > in.position() - end) {
                send(ByteBuffer.wrap("HTTP/1.1 100 Continue\r\n\r\n".getBytes(StandardCharsets.US_ASCII)), false);
            }
            return true;
        }

        private void dispatch(String method, String target, String authorization, String body) {
            state = State.SERVING;
            deadline = 0; // the executor answers; the write has a deadline of its own
            if (method.equals("GET") && isLiveness(target)) {
                // A constant answer: given here, on this thread, it needs no other thread to be scheduled (under
                // load, each hand-off can cost a time slice), and it says what a liveness probe asks: this answers.
                respond(responder.respond(method, target, authorization, body));
                return;
            }
            boolean probe = method.equals("GET") && isProbe(target);
            try {
                (probe ? probes : api).execute(() -> {
                    Response response;
                    try {
                        response = responder.respond(method, target, authorization, body);
                    } catch (RuntimeException e) {
                        log.warn("admin {} {} failed", method, target, e);
                        response = new Response(500, AdminHandler.JSON, AdminHandler.error(e.toString())
                                .getBytes(StandardCharsets.UTF_8), null);
                    }
                    Response answer = response;
                    done.add(() -> respond(answer));
                    selector.wakeup();
                });
            } catch (RejectedExecutionException e) {
                close(); // shutting down
            }
        }

        private void respond(Response response) {
            if (!channel.isOpen()) {
                return;
            }
            send(encode(response, closeAfterResponse), closeAfterResponse);
        }

        /** An answer to a request that cannot be served; the connection closes after it. */
        private void fail(int status, String why) {
            state = State.SERVING;
            send(encode(new Response(status, AdminHandler.JSON, AdminHandler.error(why)
                    .getBytes(StandardCharsets.UTF_8), null), true), true);
        }

        private void send(ByteBuffer bytes, boolean thenClose) {
            out = out == null || !out.hasRemaining() ? bytes : concat(out, bytes);
            closeAfterResponse |= thenClose;
            deadline = after(WRITE_TIMEOUT_MILLIS);
            write();
        }

        void write() {
            try {
                channel.write(out);
            } catch (IOException e) {
                close();
                return;
            }
            if (out.hasRemaining()) {
                key.interestOps(key.interestOps() | SelectionKey.OP_WRITE);
                return;
            }
            key.interestOps(key.interestOps() & ~SelectionKey.OP_WRITE);
            if (state != State.SERVING || headerEnd >= 0) {
                return; // a 100 Continue: the body comes next
            }
            if (closeAfterResponse) {
                close();
                return;
            }
            state = State.IDLE;
            deadline = after(IDLE_TIMEOUT_MILLIS);
            key.interestOps(key.interestOps() | SelectionKey.OP_READ);
            if (in.position() > 0) { // pipelined: the next request is here already, or part of it
                state = State.READING;
                deadline = after(REQUEST_TIMEOUT_MILLIS);
                parse();
            }
        }

        void close() {
            connections.remove(this);
            state = State.SERVING; // nothing more is read or written
            deadline = 0;
            if (key != null) {
                key.cancel();
            }
            try {
                channel.close();
            } catch (IOException e) {
                log.debug("admin connection close: {}", e.toString());
            }
        }
    }

    /** {@code GET /livez}, answered on the port's thread. */
    static boolean isLiveness(String target) {
        return target.equals("/livez") || target.startsWith("/livez?");
    }

    /** The probes and the scrape, which get their own executor. */
    static boolean isProbe(String target) {
        int query = target.indexOf('?');
        String path = query < 0 ? target : target.substring(0, query);
        return path.equals("/livez") || path.equals("/readyz") || path.equals("/health") || path.equals("/metrics");
    }

    private static ByteBuffer encode(Response response, boolean close) {
        StringBuilder head = new StringBuilder(160).append("HTTP/1.1 ").append(response.status()).append(' ')
                .append(reason(response.status())).append("\r\n");
        head.append("Content-Type: ").append(response.contentType()).append("\r\n");
        head.append("Cache-Control: no-store\r\n");
        if (response.extraHeader() != null) {
            head.append(response.extraHeader()).append("\r\n");
        }
        head.append("Content-Length: ").append(response.body().length).append("\r\n");
        if (close) {
            head.append("Connection: close\r\n");
        }
        head.append("\r\n");
        byte[] headBytes = head.toString().getBytes(StandardCharsets.ISO_8859_1);
        ByteBuffer bytes = ByteBuffer.allocate(headBytes.length + response.body().length);
        bytes.put(headBytes).put(response.body()).flip();
        return bytes;
    }

    private static String reason(int status) {
        return switch (status) {
            case 200 -> "OK";
            case 202 -> "Accepted";
            case 204 -> "No Content";
            case 400 -> "Bad Request";
            case 401 -> "Unauthorized";
            case 403 -> "Forbidden";
            case 404 -> "Not Found";
            case 405 -> "Method Not Allowed";
            case 409 -> "Conflict";
            case 411 -> "Length Required";
            case 413 -> "Content Too Large";
            case 431 -> "Request Header Fields Too Large";
            case 500 -> "Internal Server Error";
            case 503 -> "Service Unavailable";
            case 507 -> "Insufficient Storage";
            default -> "Status";
        };
    }

    private static ByteBuffer concat(ByteBuffer a, ByteBuffer b) {
        ByteBuffer both = ByteBuffer.allocate(a.remaining() + b.remaining());
        both.put(a).put(b).flip();
        return both;
    }

    private static long after(long millis) {
        long at = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        return at == 0 ? 1 : at;
    }
}
