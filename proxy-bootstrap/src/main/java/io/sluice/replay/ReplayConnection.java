package io.sluice.replay;

import io.sluice.auth.RsaKeyPair;
import io.sluice.protocol.Capabilities;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.protocol.Scramble;
import io.sluice.protocol.ServerStatus;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
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
 * (with the statement id mapped to the target's), and reads the response only as far as the comparison needs
 * (affected rows, rows, error code, the prepared statement id). One per replayed session, on its own thread.
 *
 * <p>It asks for no CLIENT_DEPRECATE_EOF, no compression and no TLS: the simplest response formats, since replay
 * measures the server, not the client.
 */
final class ReplayConnection implements Closeable {
    /** Response kinds: those of Sluice's relay ({@link io.sluice.relay.ResponseKind}), and none. */
    static final int EXPECT_NONE = 0;
    static final int EXPECT_RESULT = 1;
    static final int EXPECT_BINARY_RESULT = 2;
    static final int EXPECT_ROWS = 3;
    static final int EXPECT_PREPARE = 4;
    static final int EXPECT_FIELD_LIST = 5;
    static final int EXPECT_SINGLE = 6;

    /** Capabilities taken from the captured session when it had them: they change results or what a query may be. */
    static final int FROM_CAPTURE = Capabilities.CLIENT_FOUND_ROWS | Capabilities.CLIENT_MULTI_STATEMENTS
            | Capabilities.CLIENT_IGNORE_SPACE | Capabilities.CLIENT_LOCAL_FILES | Capabilities.CLIENT_NO_SCHEMA
            | Capabilities.CLIENT_ODBC | Capabilities.CLIENT_INTERACTIVE;

    private static final int BASE_CAPABILITIES = Capabilities.CLIENT_LONG_PASSWORD | Capabilities.CLIENT_LONG_FLAG
            | Capabilities.CLIENT_PROTOCOL_41 | Capabilities.CLIENT_TRANSACTIONS | Capabilities.CLIENT_SECURE_CONNECTION
            | Capabilities.CLIENT_MULTI_RESULTS | Capabilities.CLIENT_PS_MULTI_RESULTS | Capabilities.CLIENT_PLUGIN_AUTH
            | Capabilities.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA;

    /** What a command came to on the target. */
    record Result(int errorCode, String errorMessage, long affectedRows, long rows, long statementId) {
        boolean isError() {
            return errorCode != 0;
        }
    }

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    private byte[] packet = new byte[4096];
    private int packetLength;
    private int sequenceId;

    private ReplayConnection(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new BufferedInputStream(socket.getInputStream(), 64 * 1024);
        this.out = new BufferedOutputStream(socket.getOutputStream(), 64 * 1024);
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
        try {
            socket.connect(new InetSocketAddress(host, port), timeoutMillis);
            socket.setTcpNoDelay(true);
            socket.setSoTimeout(0);
            ReplayConnection connection = new ReplayConnection(socket);
            connection.login(user, password, schema, capturedCapabilities, collationId);
            return connection;
        } catch (IOException | RuntimeException e) {
            socket.close();
            throw e;
        }
    }

    private void login(String user, String password, String schema, int capturedCapabilities, int collationId)
            throws IOException {
        readPacket();
        if (u8(0) == Packets.ERR_HEADER) {
            throw new IOException("the server refused the connection: " + error().errorMessage());
        }
        // Protocol::HandshakeV10: version, NUL, thread id, nonce part 1, filler, capabilities low, charset, status,
        // capabilities high, nonce length, 10 reserved, nonce part 2, plugin name.
        int pos = 1;
        while (pos < packetLength && packet[pos] != 0) {
            pos++;
        }
        pos += 1 + 4;
        byte[] nonce = new byte[Scramble.NONCE_LENGTH];
        System.arraycopy(packet, pos, nonce, 0, 8);
        pos += 8 + 1;
        int serverCapabilities = u16(pos);
        pos += 2 + 1 + 2;
        serverCapabilities |= u16(pos) << 16;
        pos += 2 + 1 + 10;
        System.arraycopy(packet, pos, nonce, 8, 12);
        pos += 13;
        String plugin = Scramble.MYSQL_NATIVE_PASSWORD;
        if (pos < packetLength) {
            int end = pos;
            while (end < packetLength && packet[end] != 0) {
                end++;
            }
            plugin = new String(packet, pos, end - pos, StandardCharsets.US_ASCII);
        }
        int capabilities = (BASE_CAPABILITIES | (capturedCapabilities & FROM_CAPTURE)) & serverCapabilities;
        if (schema != null) {
            capabilities |= Capabilities.CLIENT_CONNECT_WITH_DB;
        }
        byte[] auth = scramble(plugin, password, nonce);
        ByteArrayOutputStream response = new ByteArrayOutputStream();
        writeInt(response, capabilities, 4);
        writeInt(response, Packets.MAX_PAYLOAD, 4);
        response.write(collationId > 0 && collationId < 256 ? collationId : 45); // utf8mb4_general_ci
        response.write(new byte[23], 0, 23);
        response.writeBytes(user.getBytes(StandardCharsets.UTF_8));
        response.write(0);
        response.write(auth.length);
        response.writeBytes(auth);
        if (schema != null) {
            response.writeBytes(schema.getBytes(StandardCharsets.UTF_8));
            response.write(0);
        }
        response.writeBytes(plugin.getBytes(StandardCharsets.US_ASCII));
        response.write(0);
        writePacket(response.toByteArray(), sequenceId + 1);
        finishLogin(password, nonce, plugin);
    }

    private void finishLogin(String password, byte[] nonce, String plugin) throws IOException {
        while (true) {
            readPacket();
            int first = u8(0);
            if (first == Packets.OK_HEADER) {
                return;
            }
            if (first == Packets.ERR_HEADER) {
                throw new IOException("login refused: " + error().errorMessage());
            }
            if (first == Packets.EOF_HEADER) { // AuthSwitchRequest: plugin name, NUL, new nonce
                int end = 1;
                while (end < packetLength && packet[end] != 0) {
                    end++;
                }
                plugin = new String(packet, 1, end - 1, StandardCharsets.US_ASCII);
                nonce = Arrays.copyOfRange(packet, end + 1, Math.min(end + 1 + Scramble.NONCE_LENGTH, packetLength));
                nonce = Arrays.copyOf(nonce, Scramble.NONCE_LENGTH);
                writePacket(scramble(plugin, password, nonce), sequenceId + 1);
            } else if (first == 0x01 && packetLength >= 2 && u8(1) == 0x03) {
                continue; // caching_sha2_password fast authentication succeeded; the OK follows
            } else if (first == 0x01 && packetLength >= 2 && u8(1) == 0x04) {
                writePacket(new byte[] {0x02}, sequenceId + 1); // full authentication: ask for the RSA public key
                readPacket();
                String pem = new String(packet, 1, packetLength - 1, StandardCharsets.US_ASCII);
                writePacket(rsaEncryptedPassword(password, nonce, pem), sequenceId + 1);
            } else {
                throw new IOException("login: unexpected packet 0x" + Integer.toHexString(first));
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
     * @param payload the bytes after the command byte
     * @param expect what the response is, one of the {@code EXPECT_} kinds; {@code EXPECT_NONE} reads nothing
     */
    Result execute(int command, byte[] payload, int expect) throws IOException {
        byte[] packetBytes = new byte[payload.length + 1];
        packetBytes[0] = (byte) command;
        System.arraycopy(payload, 0, packetBytes, 1, payload.length);
        writePacket(packetBytes, 0);
        if (expect == EXPECT_NONE) {
            return new Result(0, null, 0, 0, 0);
        }
        return readResponse(expect);
    }

    private Result readResponse(int expect) throws IOException {
        long affected = 0;
        long rows = 0;
        switch (expect) {
            case EXPECT_SINGLE -> {
                readPacket();
                if (u8(0) == Packets.ERR_HEADER) {
                    return error();
                }
                return new Result(0, null, u8(0) == Packets.OK_HEADER ? lenencAt(1) : 0, 0, 0);
            }
            case EXPECT_PREPARE -> {
                readPacket();
                if (u8(0) == Packets.ERR_HEADER) {
                    return error();
                }
                long id = u16(1) | (long) u16(3) << 16;
                int columns = u16(5);
                int params = u16(7);
                skipDefinitions(params);
                skipDefinitions(columns);
                return new Result(0, null, 0, 0, id);
            }
            case EXPECT_FIELD_LIST -> {
                while (true) {
                    readPacket();
                    if (u8(0) == Packets.ERR_HEADER) {
                        return error();
                    }
                    if (isEof()) {
                        return new Result(0, null, 0, 0, 0);
                    }
                }
            }
            case EXPECT_ROWS -> {
                while (true) {
                    readPacket();
                    if (u8(0) == Packets.ERR_HEADER) {
                        return withRows(error(), rows);
                    }
                    if (isEof()) {
                        return new Result(0, null, 0, rows, 0);
                    }
                    rows++;
                }
            }
            default -> {
                while (true) { // one result per round, while SERVER_MORE_RESULTS_EXISTS
                    readPacket();
                    int first = u8(0);
                    if (first == Packets.ERR_HEADER) {
                        return withRows(error(), rows);
                    }
                    int status;
                    if (first == Packets.OK_HEADER) {
                        affected += lenencAt(1);
                        status = okStatus();
                    } else if (first == Packets.LOCAL_INFILE_HEADER) {
                        writePacket(new byte[0], sequenceId + 1); // the file's data is not captured: send none
                        continue;
                    } else {
                        long columns = lenencAt(0);
                        for (long c = 0; c < columns; c++) {
                            readPacket();
                        }
                        readPacket(); // EOF after the column definitions
                        status = u16(3);
                        boolean cursor = expect == EXPECT_BINARY_RESULT
                                && (status & ServerStatus.SERVER_STATUS_CURSOR_EXISTS) != 0;
                        if (!cursor) {
                            while (true) {
                                readPacket();
                                if (u8(0) == Packets.ERR_HEADER) {
                                    return withRows(error(), rows);
                                }
                                if (isEof()) {
                                    status = u16(3);
                                    break;
                                }
                                rows++;
                            }
                        }
                    }
                    if ((status & ServerStatus.SERVER_MORE_RESULTS_EXISTS) == 0) {
                        return new Result(0, null, affected, rows, 0);
                    }
                }
            }
        }
    }

    private void skipDefinitions(int count) throws IOException {
        if (count > 0) {
            for (int i = 0; i <= count; i++) { // the definitions and their EOF
                readPacket();
            }
        }
    }

    private static Result withRows(Result error, long rows) {
        return new Result(error.errorCode(), error.errorMessage(), 0, rows, 0);
    }

    private boolean isEof() {
        return u8(0) == Packets.EOF_HEADER && packetLength < 9;
    }

    private Result error() {
        int code = u16(1);
        int messageStart = packetLength > 3 && packet[3] == '#' ? 9 : 3;
        String message = messageStart < packetLength
                ? new String(packet, messageStart, Math.min(packetLength - messageStart, 512), StandardCharsets.UTF_8)
                : "";
        return new Result(code, message, 0, 0, 0);
    }

    private int okStatus() {
        int pos = 1;
        pos += lenencSize(pos);
        pos += lenencSize(pos);
        return pos + 2 <= packetLength ? u16(pos) : 0;
    }

    private int lenencSize(int pos) {
        int b = u8(pos);
        return b < 0xFB ? 1 : b == 0xFC ? 3 : b == 0xFD ? 4 : 9;
    }

    private long lenencAt(int pos) {
        if (pos >= packetLength) {
            return 0;
        }
        int b = u8(pos);
        if (b < 0xFB) {
            return b;
        }
        int size = lenencSize(pos);
        long value = 0;
        for (int k = size - 1; k >= 1; k--) {
            value = value << 8 | u8(pos + k);
        }
        return value;
    }

    private int u8(int pos) {
        return packet[pos] & 0xFF;
    }

    private int u16(int pos) {
        return u8(pos) | u8(pos + 1) << 8;
    }

    /** Reads one logical packet (16 MiB continuations joined) into {@link #packet}. */
    private void readPacket() throws IOException {
        packetLength = 0;
        while (true) {
            int length = readByte() | readByte() << 8 | readByte() << 16;
            sequenceId = readByte();
            if (packet.length < packetLength + length) {
                packet = Arrays.copyOf(packet, Math.max(packet.length * 2, packetLength + length));
            }
            int read = in.readNBytes(packet, packetLength, length);
            if (read < length) {
                throw new EOFException("the server closed the connection");
            }
            packetLength += length;
            if (length < Packets.MAX_PAYLOAD) {
                return;
            }
        }
    }

    private int readByte() throws IOException {
        int b = in.read();
        if (b < 0) {
            throw new EOFException("the server closed the connection");
        }
        return b;
    }

    /** Writes a payload as one packet, or several frames when it is 16 MiB or more. */
    private void writePacket(byte[] payload, int firstSequenceId) throws IOException {
        int offset = 0;
        int seq = firstSequenceId;
        while (true) {
            int length = Math.min(Packets.MAX_PAYLOAD, payload.length - offset);
            out.write(length);
            out.write(length >>> 8);
            out.write(length >>> 16);
            out.write(seq++ & 0xFF);
            out.write(payload, offset, length);
            offset += length;
            if (length < Packets.MAX_PAYLOAD) {
                break;
            }
        }
        out.flush();
        sequenceId = seq - 1;
    }

    private static void writeInt(ByteArrayOutputStream out, int value, int bytes) {
        for (int i = 0; i < bytes; i++) {
            out.write(value >>> (8 * i));
        }
    }

    /** Says goodbye and closes. */
    @Override
    public void close() {
        try {
            writePacket(new byte[] {(byte) Command.COM_QUIT}, 0);
        } catch (IOException e) {
            // closing anyway
        }
        try {
            socket.close();
        } catch (IOException e) {
            // nothing left to do
        }
    }
}
