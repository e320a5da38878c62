package io.sluice.testing;

import java.io.Closeable;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

/**
 * A deliberately tiny MySQL client on a plain socket, for tests that must put exact bytes on the wire: it reads
 * HandshakeV10, logs in with mysql_native_password (HandshakeResponse41), sends commands and reads raw packets.
 * See <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_connection_phase.html">the
 * connection phase</a>.
 */
public final class RawMySqlClient implements Closeable {

    public static final int CLIENT_LONG_PASSWORD = 0x1;
    public static final int CLIENT_LONG_FLAG = 0x4;
    public static final int CLIENT_CONNECT_WITH_DB = 0x8;
    public static final int CLIENT_PROTOCOL_41 = 0x200;
    public static final int CLIENT_TRANSACTIONS = 0x2000;
    public static final int CLIENT_SECURE_CONNECTION = 0x8000;
    public static final int CLIENT_MULTI_RESULTS = 0x20000;
    public static final int CLIENT_PLUGIN_AUTH = 0x80000;
    public static final int CLIENT_SESSION_TRACK = 0x800000;

    public static final int MAX_FRAME = MySqlWire.MAX_PAYLOAD;

    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;
    private int sequence;
    private Handshake handshake;

    private RawMySqlClient(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new DataInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
    }

    /** Opens a socket and reads the server's greeting, nothing more. */
    public static RawMySqlClient connect(String host, int port) throws IOException {
        return connect(host, port, null);
    }

    /** Opens a socket from {@code localAddress} (e.g. 127.0.0.2; {@code null}: any) and reads the greeting. */
    public static RawMySqlClient connect(String host, int port, String localAddress) throws IOException {
        Socket socket = new Socket();
        if (localAddress != null) {
            socket.bind(new InetSocketAddress(localAddress, 0));
        }
        socket.connect(new InetSocketAddress(host, port), 5000);
        socket.setSoTimeout(15_000);
        RawMySqlClient client = new RawMySqlClient(socket);
        Packet greeting = client.readPacket();
        if (greeting == null) {
            client.close();
            throw new EOFException("closed before the greeting");
        }
        if (greeting.isErr()) {
            client.close();
            throw new IOException("greeting was " + greeting);
        }
        client.handshake = Handshake.parse(greeting.payload());
        return client;
    }

    /** Connects and logs in; throws when the server does not answer OK. */
    public static RawMySqlClient login(String host, int port, String user, String password, String db)
            throws IOException {
        RawMySqlClient client = connect(host, port);
        Packet reply = client.authenticate(user, password, db);
        if (!reply.isOk()) {
            client.close();
            throw new IOException("login as " + user + " answered " + reply);
        }
        return client;
    }

    public Handshake handshake() {
        return handshake;
    }

    /** Sends HandshakeResponse41 and returns the server's final answer (OK or ERR), following an auth switch. */
    public Packet authenticate(String user, String password, String db) throws IOException {
        return authenticate(user, password, db, 0);
    }

    /**
     * As {@link #authenticate(String, String, String)}, asking for {@code extraCapabilities} as well (for example
     * {@link #CLIENT_SESSION_TRACK}, which lets a transaction-pooling Sluice multiplex the session).
     */
    public Packet authenticate(String user, String password, String db, int extraCapabilities) throws IOException {
        writePacket(handshakeResponse(user, password, db, extraCapabilities));

        Packet reply = readPacket();
        if (reply != null && reply.firstByte() == 0xFE && reply.payload().length > 1) { // AuthSwitchRequest
            byte[] p = reply.payload();
            int nul = indexOf(p, 1, (byte) 0);
            String plugin = new String(p, 1, nul - 1, StandardCharsets.US_ASCII);
            if (!plugin.equals("mysql_native_password")) {
                throw new IOException("auth switch to " + plugin + " (expected: mysql_native_password)");
            }
            byte[] seed = Arrays.copyOfRange(p, nul + 1, Math.min(p.length, nul + 21));
            writePacket(nativePassword(password, seed));
            reply = readPacket();
        }
        if (reply == null) {
            throw new EOFException("closed during authentication");
        }
        return reply;
    }

    /**
     * The HandshakeResponse41 {@link #authenticate} sends (mysql_native_password over the greeting's seed), to be
     * sent some other way: without waiting for the answer, or with another sequence id.
     */
    public byte[] handshakeResponse(String user, String password, String db, int extraCapabilities) {
        int capabilities = CLIENT_LONG_PASSWORD | CLIENT_LONG_FLAG | CLIENT_PROTOCOL_41 | CLIENT_TRANSACTIONS
                | CLIENT_SECURE_CONNECTION | CLIENT_MULTI_RESULTS | CLIENT_PLUGIN_AUTH
                | (db != null ? CLIENT_CONNECT_WITH_DB : 0) | extraCapabilities;
        return MySqlWire.handshakeResponse41(capabilities, MAX_FRAME, MySqlWire.UTF8MB4_GENERAL_CI, user,
                nativePassword(password, handshake.seed()), db, "mysql_native_password");
    }

    /** Starts a command: resets the sequence id and sends {@code command} followed by {@code argument}. */
    public void sendCommand(int command, byte[] argument) throws IOException {
        sequence = 0;
        writePacket(MySqlWire.command(command, argument));
    }

    public void sendQuery(String sql) throws IOException {
        sendCommand(MySqlWire.COM_QUERY, sql.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Sends COM_QUERY and reads the whole response of a single result: OK, ERR, or a text result set whose rows are
     * returned as lists of nullable strings.
     */
    public QueryResult query(String sql) throws IOException {
        sendQuery(sql);
        return readResult();
    }

    /**
     * Reads the whole response of a single result to a command sent before (a pipelining client reads its answers
     * in the order it sent the commands).
     */
    public QueryResult readResult() throws IOException {
        Packet first = readRequired();
        if (first.isOk() || first.isErr()) {
            return new QueryResult(first, java.util.List.of());
        }
        int columns = (int) first.readLengthEncoded(0)[0];
        for (int i = 0; i < columns; i++) {
            readRequired(); // column definition
        }
        readRequired(); // EOF after the definitions (no CLIENT_DEPRECATE_EOF)
        java.util.List<java.util.List<String>> rows = new java.util.ArrayList<>();
        while (true) {
            Packet row = readRequired();
            if (row.isEof() || row.isErr()) {
                return new QueryResult(row, rows);
            }
            java.util.List<String> values = new java.util.ArrayList<>();
            int pos = 0;
            for (int i = 0; i < columns; i++) {
                if ((row.payload()[pos] & 0xFF) == 0xFB) {
                    values.add(null);
                    pos++;
                } else {
                    long[] lengthAndNext = row.readLengthEncoded(pos);
                    int start = (int) lengthAndNext[1];
                    values.add(new String(row.payload(), start, (int) lengthAndNext[0], StandardCharsets.UTF_8));
                    pos = start + (int) lengthAndNext[0];
                }
            }
            rows.add(values);
        }
    }

    /** Writes one packet (split into frames of at most 16 MiB - 1 as the protocol requires) and flushes. */
    public void writePacket(byte[] payload) throws IOException {
        int offset = 0;
        while (true) {
            int length = Math.min(MAX_FRAME, payload.length - offset);
            writeFrameHeader(length, sequence++);
            out.write(payload, offset, length);
            offset += length;
            if (length < MAX_FRAME) {
                break;
            }
        }
        out.flush();
    }

    /** Writes a frame header only: a 3-byte little-endian length and a sequence id. */
    public void writeFrameHeader(int length, int seq) throws IOException {
        out.write(new byte[] {(byte) length, (byte) (length >>> 8), (byte) (length >>> 16), (byte) seq});
    }

    /** Writes bytes as they are, no framing. */
    public void writeRaw(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    /** Reads one frame; {@code null} when the server closed the connection (or reset it) before a full frame. */
    public Packet readPacket() throws IOException {
        byte[] header = new byte[4];
        try {
            in.readFully(header);
            int length = (header[0] & 0xFF) | (header[1] & 0xFF) << 8 | (header[2] & 0xFF) << 16;
            byte[] payload = new byte[length];
            in.readFully(payload);
            sequence = (header[3] & 0xFF) + 1;
            return new Packet(header[3] & 0xFF, payload);
        } catch (EOFException | java.net.SocketException e) {
            return null;
        }
    }

    private Packet readRequired() throws IOException {
        Packet packet = readPacket();
        if (packet == null) {
            throw new EOFException("connection closed in the middle of a response");
        }
        return packet;
    }

    /** Reads until the server closes; returns the packets seen, or throws when it stays open past the timeout. */
    public java.util.List<Packet> readUntilClosed() throws IOException {
        java.util.List<Packet> packets = new java.util.ArrayList<>();
        for (Packet p; (p = readPacket()) != null; ) {
            packets.add(p);
        }
        return packets;
    }

    /** Closes with SO_LINGER 0, so the server sees a reset rather than an orderly FIN: a client that vanished. */
    public void abort() throws IOException {
        socket.setSoLinger(true, 0);
        socket.close();
    }

    public Socket socket() {
        return socket;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }

    /** SHA1(pw) XOR SHA1(seed + SHA1(SHA1(pw))); empty for an empty password. */
    public static byte[] nativePassword(String password, byte[] seed) {
        if (password == null || password.isEmpty()) {
            return new byte[0];
        }
        try {
            MessageDigest sha1 = MessageDigest.getInstance("SHA-1");
            byte[] stage1 = sha1.digest(password.getBytes(StandardCharsets.UTF_8));
            byte[] stage2 = sha1.digest(stage1);
            sha1.update(seed);
            sha1.update(stage2);
            byte[] scramble = sha1.digest();
            for (int i = 0; i < scramble.length; i++) {
                scramble[i] ^= stage1[i];
            }
            return scramble;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static int indexOf(byte[] bytes, int from, byte value) {
        for (int i = from; i < bytes.length; i++) {
            if (bytes[i] == value) {
                return i;
            }
        }
        return bytes.length;
    }

    /** One frame as read: its sequence id and payload. */
    public record Packet(int sequence, byte[] payload) {
        public int firstByte() {
            return payload.length == 0 ? -1 : payload[0] & 0xFF;
        }

        public boolean isOk() {
            return firstByte() == 0x00;
        }

        public boolean isErr() {
            return firstByte() == 0xFF;
        }

        public boolean isEof() {
            return firstByte() == 0xFE && payload.length < 9;
        }

        /** The ERR packet's error code. */
        public int errorCode() {
            requireErr();
            return (payload[1] & 0xFF) | (payload[2] & 0xFF) << 8;
        }

        /** The ERR packet's SQLSTATE, or {@code null} when it carries none (errors before the handshake). */
        public String sqlState() {
            requireErr();
            return payload.length > 8 && payload[3] == '#' ? new String(payload, 4, 5, StandardCharsets.US_ASCII) : null;
        }

        public String errorMessage() {
            requireErr();
            int start = payload.length > 8 && payload[3] == '#' ? 9 : 3;
            return new String(payload, start, payload.length - start, StandardCharsets.UTF_8);
        }

        /** A length-encoded integer at {@code pos}: {value, position after it}. */
        long[] readLengthEncoded(int pos) {
            int first = payload[pos] & 0xFF;
            if (first < 0xFB) {
                return new long[] {first, pos + 1};
            }
            int size = first == 0xFC ? 2 : first == 0xFD ? 3 : 8;
            long value = 0;
            for (int i = 0; i < size; i++) {
                value |= (long) (payload[pos + 1 + i] & 0xFF) << (8 * i);
            }
            return new long[] {value, pos + 1 + size};
        }

        private void requireErr() {
            if (!isErr()) {
                throw new IllegalStateException("not an ERR packet: " + this);
            }
        }

        @Override
        public String toString() {
            if (isErr()) {
                return "ERR " + errorCode() + " (" + sqlState() + ") " + errorMessage();
            }
            return (isOk() ? "OK" : isEof() ? "EOF" : "packet") + "[seq=" + sequence + ", " + payload.length + " bytes]";
        }
    }

    /**
     * The part of HandshakeV10 a client needs.
     *
     * @param mariaDbCapabilities MariaDB's extended capabilities (the last 4 reserved bytes), 0 when the greeting
     *     sets CLIENT_LONG_PASSWORD ("CLIENT_MYSQL": a MySQL server, or a proxy posing as one)
     */
    public record Handshake(int protocolVersion, String serverVersion, long connectionId, byte[] seed,
                            int capabilities, String authPlugin, int mariaDbCapabilities) {
        static Handshake parse(byte[] p) {
            int pos = 0;
            int protocol = p[pos++] & 0xFF;
            int nul = indexOf(p, pos, (byte) 0);
            String version = new String(p, pos, nul - pos, StandardCharsets.US_ASCII);
            pos = nul + 1;
            long id = (p[pos] & 0xFFL) | (p[pos + 1] & 0xFFL) << 8 | (p[pos + 2] & 0xFFL) << 16 | (p[pos + 3] & 0xFFL) << 24;
            pos += 4;
            byte[] seed1 = Arrays.copyOfRange(p, pos, pos + 8);
            pos += 8 + 1; // auth-plugin-data-part-1, filler
            int capabilities = (p[pos] & 0xFF) | (p[pos + 1] & 0xFF) << 8;
            pos += 2 + 1 + 2; // capability flags (lower), character set, status flags
            capabilities |= ((p[pos] & 0xFF) | (p[pos + 1] & 0xFF) << 8) << 16;
            pos += 2;
            int authDataLength = p[pos++] & 0xFF;
            int mariaDb = (capabilities & CLIENT_LONG_PASSWORD) != 0 ? 0 : (p[pos + 6] & 0xFF)
                    | (p[pos + 7] & 0xFF) << 8 | (p[pos + 8] & 0xFF) << 16 | (p[pos + 9] & 0xFF) << 24;
            pos += 10; // reserved (MariaDB keeps extended capabilities in the last four)
            int part2Length = Math.max(13, authDataLength - 8);
            byte[] seed2 = Arrays.copyOfRange(p, pos, pos + Math.min(12, part2Length - 1));
            pos += part2Length;
            String plugin = "";
            if (pos < p.length) {
                int end = indexOf(p, pos, (byte) 0);
                plugin = new String(p, pos, end - pos, StandardCharsets.US_ASCII);
            }
            byte[] seed = new byte[seed1.length + seed2.length];
            System.arraycopy(seed1, 0, seed, 0, seed1.length);
            System.arraycopy(seed2, 0, seed, seed1.length, seed2.length);
            return new Handshake(protocol, version, id, seed, capabilities, plugin, mariaDb);
        }
    }

    /** The final packet (OK, ERR or EOF) of a single-result response and the text rows before it. */
    public record QueryResult(Packet end, java.util.List<java.util.List<String>> rows) {
    }
}
