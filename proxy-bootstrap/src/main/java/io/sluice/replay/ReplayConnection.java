package io.sluice.replay;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.sluice.auth.RsaKeyPair;
import io.sluice.codec.FrameReader;
import io.sluice.protocol.Capabilities;
import io.sluice.protocol.Command;
import io.sluice.protocol.HandshakeResponse41;
import io.sluice.protocol.HandshakeV10;
import io.sluice.protocol.Packets;
import io.sluice.protocol.ProtocolException;
import io.sluice.protocol.Scramble;
import io.sluice.relay.ResponseKind;
import io.sluice.relay.ResponseListener;
import io.sluice.relay.ResponseOutcome;
import io.sluice.relay.ResponseTracker;
import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.Arrays;

/**
 * A blocking MySQL client connection for replay: logs in, sends a captured command's payload as it was captured
 * (with the statement id mapped to the target's), and reads the response to its end. One per replayed session, on its
 * own thread.
 *
 * <p>It reads with the proxy's own readers: {@link FrameReader} cuts the frames, and a {@link ResponseTracker}
 * follows each response and sums its outcome (affected rows, rows, error code, the prepared statement id). The
 * capture summed the source's outcomes with the same tracker, so both sides of a comparison are counted by one rule.
 *
 * <p>It asks for no CLIENT_DEPRECATE_EOF, no compression and no TLS: the simplest response formats, since replay
 * measures the server, not the client.
 */
final class ReplayConnection implements Closeable {
    /** Capabilities taken from the captured session when it had them: they change results or what a query may be. */
    static final int FROM_CAPTURE = Capabilities.CLIENT_FOUND_ROWS | Capabilities.CLIENT_MULTI_STATEMENTS
            | Capabilities.CLIENT_IGNORE_SPACE | Capabilities.CLIENT_LOCAL_FILES | Capabilities.CLIENT_NO_SCHEMA
            | Capabilities.CLIENT_ODBC | Capabilities.CLIENT_INTERACTIVE;

    private static final int BASE_CAPABILITIES = Capabilities.CLIENT_LONG_PASSWORD | Capabilities.CLIENT_LONG_FLAG
            | Capabilities.CLIENT_PROTOCOL_41 | Capabilities.CLIENT_TRANSACTIONS | Capabilities.CLIENT_SECURE_CONNECTION
            | Capabilities.CLIENT_MULTI_RESULTS | Capabilities.CLIENT_PS_MULTI_RESULTS | Capabilities.CLIENT_PLUGIN_AUTH
            | Capabilities.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA;

    private static final int UTF8MB4_GENERAL_CI = 45;
    /** MySQL's largest max_allowed_packet: no server sends a longer packet. */
    private static final int MAX_PACKET_SIZE = 1 << 30;
    /** What a socket read asks for at least, and the size of the write buffer. */
    private static final int BUFFER_SIZE = 64 * 1024;
    /** Frames are built on this blocking path only, once per command: pooling them would gain nothing. */
    private static final ByteBufAllocator ALLOC = UnpooledByteBufAllocator.DEFAULT;

    // The authentication exchange's packets after the HandshakeResponse41.
    private static final int AUTH_SWITCH_REQUEST = 0xFE;
    private static final int AUTH_MORE_DATA = 0x01;
    private static final int FAST_AUTH_SUCCESS = 0x03;
    private static final int PERFORM_FULL_AUTHENTICATION = 0x04;
    private static final byte[] REQUEST_PUBLIC_KEY = {0x02};

    /** What a command came to on the target. */
    record Result(int errorCode, String errorMessage, long affectedRows, long rows, long statementId) {
        private static final Result NO_RESPONSE = new Result(0, null, 0, 0, 0);

        boolean isError() {
            return errorCode != 0;
        }
    }

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    /** Bytes read and not yet cut into frames. */
    private final ByteBuf received = Unpooled.buffer(BUFFER_SIZE);
    private final FrameReader frames = new FrameReader(MAX_PACKET_SIZE);
    /** Replay asks for no CLIENT_DEPRECATE_EOF and no MariaDB metadata caching: results come whole, ended by EOF. */
    private final ResponseTracker tracker = new ResponseTracker(false, false, new ResponseListener() {
        @Override
        public void onLocalInfileRequest() {
            localInfileRequested = true;
        }

        @Override
        public void onResponseComplete() {
            responseComplete = true;
        }
    });
    private boolean localInfileRequested;
    private boolean responseComplete;
    /** The sequence id of the frame read last: a reply within the exchange takes the next one. */
    private int sequenceId;

    private ReplayConnection(Socket socket) throws IOException {
        this.socket = socket;
        this.in = socket.getInputStream();
        this.out = new BufferedOutputStream(socket.getOutputStream(), BUFFER_SIZE);
        tracker.summarize(true);
    }

    /**
     * Connects and logs in.
     *
     * @param capturedCapabilities the captured session's flags; those in {@link #FROM_CAPTURE} are asked for too
     * @param collationId the character set to ask for (the captured session's, or 0 for utf8mb4)
     * @throws IOException when the target cannot be reached or refuses the login (the message says which)
     */
    static ReplayConnection open(String host, int port, String user, String password, String schema,
            int capturedCapabilities, int collationId, int timeoutMillis) throws IOException {
        Socket socket = new Socket();
        ReplayConnection connection = null;
        try {
            socket.connect(new InetSocketAddress(host, port), timeoutMillis);
            socket.setTcpNoDelay(true);
            socket.setSoTimeout(0);
            connection = new ReplayConnection(socket);
            connection.login(user, password, schema, capturedCapabilities, collationId);
            return connection;
        } catch (IOException | RuntimeException e) {
            if (connection != null) {
                connection.disconnect();
            } else {
                socket.close();
            }
            throw e;
        }
    }

    private void login(String user, String password, String schema, int capturedCapabilities, int collationId)
            throws IOException {
        HandshakeV10 greeting;
        ByteBuf frame = readFrame();
        try {
            ByteBuf payload = Packets.payload(frame);
            if (Packets.isErr(payload)) {
                throw new IOException("the server refused the connection: " + Packets.parseErr(payload).message());
            }
            greeting = HandshakeV10.parse(payload);
        } catch (ProtocolException e) {
            throw new IOException("login: " + e.getMessage(), e);
        } finally {
            frame.release();
        }
        byte[] nonce = Arrays.copyOf(greeting.nonce(), Scramble.NONCE_LENGTH);
        String plugin = greeting.authPluginName() == null ? Scramble.MYSQL_NATIVE_PASSWORD : greeting.authPluginName();
        int capabilities = (BASE_CAPABILITIES | (capturedCapabilities & FROM_CAPTURE)) & greeting.capabilities();
        if (schema != null) {
            capabilities |= Capabilities.CLIENT_CONNECT_WITH_DB;
        }
        int collation = collationId > 0 && collationId < 256 ? collationId : UTF8MB4_GENERAL_CI;
        write(new HandshakeResponse41(capabilities, Packets.MAX_PAYLOAD, collation, user,
                scramble(plugin, password, nonce), schema, plugin).write(ALLOC, sequenceId + 1));
        while (true) {
            frame = readFrame();
            try {
                ByteBuf payload = Packets.payload(frame);
                int header = payload.isReadable() ? payload.getUnsignedByte(payload.readerIndex()) : -1;
                int status = payload.readableBytes() >= 2 ? payload.getUnsignedByte(payload.readerIndex() + 1) : -1;
                if (header == Packets.OK_HEADER) {
                    return;
                } else if (header == Packets.ERR_HEADER) {
                    throw new IOException("login refused: " + Packets.parseErr(payload).message());
                } else if (header == AUTH_SWITCH_REQUEST) { // plugin name, NUL, the new nonce
                    ByteBuf request = payload.skipBytes(1);
                    int nameLength = request.bytesBefore((byte) 0);
                    plugin = request.readCharSequence(nameLength < 0 ? request.readableBytes() : nameLength,
                            StandardCharsets.US_ASCII).toString();
                    byte[] data = new byte[Math.min(Math.max(0, request.readableBytes() - 1), Scramble.NONCE_LENGTH)];
                    request.skipBytes(Math.min(1, request.readableBytes())).readBytes(data);
                    nonce = Arrays.copyOf(data, Scramble.NONCE_LENGTH);
                    send(sequenceId + 1, scramble(plugin, password, nonce));
                } else if (header == AUTH_MORE_DATA && status == FAST_AUTH_SUCCESS) {
                    continue; // caching_sha2_password fast authentication succeeded; the OK follows
                } else if (header == AUTH_MORE_DATA && status == PERFORM_FULL_AUTHENTICATION) {
                    // No TLS: the password goes encrypted with the server's RSA key.
                    send(sequenceId + 1, REQUEST_PUBLIC_KEY);
                    ByteBuf key = readFrame(); // AuthMoreData: 0x01, then the key in PEM
                    String pem = Packets.payload(key).skipBytes(1).toString(StandardCharsets.US_ASCII);
                    key.release();
                    send(sequenceId + 1, rsaEncryptedPassword(password, nonce, pem));
                } else {
                    throw new IOException("login: unexpected packet 0x" + Integer.toHexString(header));
                }
            } finally {
                frame.release();
            }
        }
    }

    private static byte[] scramble(String plugin, String password, byte[] nonce) throws IOException {
        if (Scramble.MYSQL_NATIVE_PASSWORD.equals(plugin)) {
            return Scramble.nativePassword(password, nonce);
        }
        if (Scramble.CACHING_SHA2_PASSWORD.equals(plugin)) {
            return Scramble.cachingSha2Password(password, nonce);
        }
        throw new IOException("login: authentication plugin " + plugin
                + " (expected: mysql_native_password or caching_sha2_password)");
    }

    private static byte[] rsaEncryptedPassword(String password, byte[] nonce, String pem) throws IOException {
        try {
            return RsaKeyPair.encryptPassword(password, nonce, pem);
        } catch (GeneralSecurityException e) {
            throw new IOException("login: caching_sha2_password full authentication failed: " + e, e);
        }
    }

    /**
     * Sends one command and reads its whole response.
     *
     * @param payload the bytes after the command byte, shorter than a frame: a capture marks a command that took more
     *     than one frame truncated, and replay skips those
     * @param kind the response the command gets; {@link ResponseKind#NONE} reads nothing
     */
    Result execute(int command, byte[] payload, ResponseKind kind) throws IOException {
        ByteBuf frame = Packets.startFrame(ALLOC, 1 + payload.length).writeByte(command).writeBytes(payload);
        write(Packets.finishFrame(frame, 0));
        if (kind == ResponseKind.NONE) {
            return Result.NO_RESPONSE;
        }
        tracker.begin(kind);
        responseComplete = false;
        while (true) {
            frame = readFrame();
            try {
                tracker.scan(frame);
                if (localInfileRequested) {
                    localInfileRequested = false;
                    send(sequenceId + 1, new byte[0]); // the file's data is not captured: send none
                }
                if (responseComplete) {
                    // A failed response ends with its ERR packet: the frame just scanned.
                    String message = tracker.lastResponseFailed()
                            ? Packets.parseErr(Packets.payload(frame)).message() : null;
                    ResponseOutcome outcome = tracker.outcome();
                    return new Result(outcome.errorCode(), message, outcome.affectedRows(), outcome.rows(),
                            outcome.statementId());
                }
            } catch (ProtocolException e) {
                throw new IOException("unreadable response: " + e.getMessage(), e);
            } finally {
                frame.release();
            }
        }
    }

    /** The next whole frame, header included, which the caller releases before reading another. */
    private ByteBuf readFrame() throws IOException {
        while (true) {
            ByteBuf frame;
            try {
                frame = frames.next(received);
            } catch (ProtocolException e) {
                throw new IOException(e.getMessage(), e); // a packet over MAX_PACKET_SIZE: the stream is lost
            }
            if (frame != null) {
                sequenceId = Packets.sequenceId(frame, frame.readerIndex());
                return frame;
            }
            if (received.refCnt() == 1) {
                received.discardReadBytes(); // no frame cut from it is held (each holds a reference): none moves
            }
            received.ensureWritable(BUFFER_SIZE);
            if (received.writeBytes(in, received.writableBytes()) < 0) {
                throw new EOFException("the server closed the connection");
            }
        }
    }

    /** Sends {@code data} as one frame numbered {@code sequenceId}: a reply within the exchange the server leads. */
    private void send(int sequenceId, byte[] data) throws IOException {
        write(Packets.finishFrame(Packets.startFrame(ALLOC, data.length).writeBytes(data), sequenceId));
    }

    /** Writes a whole frame, which it releases, and flushes. */
    private void write(ByteBuf frame) throws IOException {
        try {
            frame.readBytes(out, frame.readableBytes());
            out.flush();
        } finally {
            frame.release();
        }
    }

    /** Says goodbye and closes. */
    @Override
    public void close() {
        try {
            write(Packets.command(ALLOC, Command.COM_QUIT, null));
        } catch (IOException e) {
            // closing anyway
        }
        disconnect();
    }

    private void disconnect() {
        try {
            socket.close();
        } catch (IOException e) {
            // nothing left to do
        }
        if (received.refCnt() > 0) {
            received.release();
        }
    }
}
