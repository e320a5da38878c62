package io.sluice.backend;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.sluice.auth.Ed25519;
import io.sluice.auth.RsaKeyPair;
import io.sluice.config.SslMode;
import io.sluice.protocol.Capabilities;
import io.sluice.protocol.ErrorCode;
import io.sluice.protocol.HandshakeResponse41;
import io.sluice.protocol.HandshakeV10;
import io.sluice.protocol.Packets;
import io.sluice.protocol.Packets.BackendError;
import io.sluice.protocol.ProtocolException;
import io.sluice.protocol.Scramble;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.Arrays;

/**
 * Sluice as a client logging in to a backend: greeting, HandshakeResponse41, then whatever the server's plugin asks
 * (auth switch, caching_sha2_password's fast path, or its full path with the server's RSA key, or MariaDB's
 * ed25519 with a password a client sent over TLS).
 *
 * <p>One instance per connection attempt. It reads whole packets (borrowed) and produces the replies to send.
 */
final class BackendAuthentication {

    /** What the connection does after a packet. */
    enum Step {
        /** Send the reply (if any) and wait for the next packet. */
        CONTINUE,
        /** Send the reply (the SSLRequest), switch to TLS, then send {@link #afterTls}'s response. */
        START_TLS,
        /** Logged in. */
        DONE
    }

    private enum State {
        AWAIT_GREETING,
        /** The SSLRequest went out; the TLS handshake runs. */
        AWAIT_TLS,
        AWAIT_RESULT,
        AWAIT_PUBLIC_KEY
    }

    private static final int AUTH_MORE_DATA = 0x01;
    private static final int AUTH_SWITCH_REQUEST = 0xFE;
    private static final int FAST_AUTH_SUCCESS = 0x03;
    private static final int PERFORM_FULL_AUTHENTICATION = 0x04;
    private static final int REQUEST_PUBLIC_KEY = 0x02;
    private static final int MAX_PACKET_SIZE = 1 << 30;
    /** MariaDB's ed25519 plugin, as the server names it in an auth switch. */
    static final String CLIENT_ED25519 = "client_ed25519";

    private final String username;
    /** The password, or {@code null} when only {@link #nativeStage1} is known. */
    private final String password;
    /** SHA1(password) learned from a client's login ({@code users: FROM_BACKEND}), or {@code null}. */
    private final byte[] nativeStage1;
    private final SessionKey key;
    private final String schema;
    private final SslMode sslMode;

    private State state = State.AWAIT_GREETING;
    /** Whether the connection is TLS, so the password may travel in clear for a full authentication. */
    private boolean secure;
    private HandshakeResponse41 deferredResponse;
    private byte[] nonce;
    private String plugin;
    private int sequenceId;
    private ByteBuf reply;
    private int serverConnectionId;
    /** The greeting was MySQL's, not MariaDB's: which GTID tracker and wait the connection uses. */
    private boolean mySql;

    BackendAuthentication(String username, String password, SessionKey key, String schema, SslMode sslMode) {
        this(username, password, null, key, schema, sslMode);
    }

    /**
     * @param password the password, or {@code null} when only {@code nativeStage1} is known (then only
     *     mysql_native_password can log in; any other plugin the server asks for fails the login with a clear error)
     */
    BackendAuthentication(String username, String password, byte[] nativeStage1, SessionKey key, String schema,
            SslMode sslMode) {
        this.username = username;
        this.password = password;
        this.nativeStage1 = nativeStage1;
        this.key = key;
        this.schema = schema;
        this.sslMode = sslMode;
    }

    /**
     * The login of a connection of {@code key}: as the session's own server account when the key names one (decision
     * 145), else as the data source's account, which Sluice's own work (health checks, replica watch) always uses.
     */
    static BackendAuthentication of(BackendEndpoint endpoint, SessionKey key, String schema) {
        BackendAccount account = key.account();
        return account == null
                ? new BackendAuthentication(endpoint.username(), endpoint.password(), null, key, schema,
                        endpoint.sslMode())
                : new BackendAuthentication(account.user(), account.password(), account.nativeStage1(), key, schema,
                        endpoint.sslMode());
    }

    /** The HandshakeResponse41 for after the TLS handshake; the caller owns the buffer. */
    ByteBuf afterTls(ByteBufAllocator alloc) {
        secure = true;
        state = State.AWAIT_RESULT;
        HandshakeResponse41 response = deferredResponse;
        deferredResponse = null;
        return response.write(alloc, ++sequenceId);
    }

    /** The reply produced by the last {@link #onPacket} call, handed over to the caller (may be {@code null}). */
    ByteBuf takeReply() {
        ByteBuf out = reply;
        reply = null;
        return out;
    }

    /** The server's id for this connection, as {@code CONNECTION_ID()} reports it. */
    int serverConnectionId() {
        return serverConnectionId;
    }

    /** Whether the greeting was MySQL's (valid once the greeting is read). */
    boolean serverIsMySql() {
        return mySql;
    }

    /**
     * Handles one whole packet (header included, borrowed).
     *
     * @throws BackendException when the server refuses the login
     */
    Step onPacket(ByteBuf frame, ByteBufAllocator alloc) throws BackendException {
        sequenceId = Packets.sequenceId(frame, frame.readerIndex());
        ByteBuf payload = Packets.payload(frame);
        if (Packets.isErr(payload)) {
            BackendError error = Packets.parseErr(payload);
            // An ERR in place of the greeting, or "Too many connections" after it (MariaDB checks max_connections
            // once it knows the account), says the server takes no connection now, whoever asks: another backend may.
            if (state == State.AWAIT_GREETING || error.code() == ErrorCode.ER_CON_COUNT_ERROR.code()
                    || error.code() == ErrorCode.ER_SERVER_SHUTDOWN.code()) {
                throw BackendException.serverUnavailable("connection refused", error);
            }
            throw new BackendException("login refused", error);
        }
        switch (state) {
            case AWAIT_GREETING:
                return onGreeting(payload, alloc);
            case AWAIT_RESULT:
                return onResult(payload, alloc);
            case AWAIT_PUBLIC_KEY:
                onPublicKey(payload, alloc);
                return Step.CONTINUE;
            default:
                throw new IllegalStateException(state.name());
        }
    }

    private Step onGreeting(ByteBuf payload, ByteBufAllocator alloc) throws BackendException {
        HandshakeV10 greeting;
        try {
            greeting = HandshakeV10.parse(payload);
        } catch (ProtocolException e) {
            throw new BackendException("unreadable greeting", e);
        }
        int serverCapabilities = greeting.capabilities();
        serverConnectionId = greeting.connectionId();
        // MariaDB 10.2+ leaves CLIENT_LONG_PASSWORD (its CLIENT_MYSQL) unset; older ones set it but name themselves
        // in the version string (5.5.5-10.1.48-MariaDB).
        mySql = Capabilities.has(serverCapabilities, Capabilities.CLIENT_LONG_PASSWORD)
                && !greeting.serverVersion().contains("MariaDB");
        nonce = Arrays.copyOf(greeting.nonce(), Scramble.NONCE_LENGTH);
        plugin = greeting.authPluginName();
        if (!Scramble.CACHING_SHA2_PASSWORD.equals(plugin) || password == null) {
            plugin = Scramble.MYSQL_NATIVE_PASSWORD; // the server switches us if the account needs another
        }
        int capabilities = (key.capabilities() & serverCapabilities) | Capabilities.CLIENT_PROTOCOL_41
                | Capabilities.CLIENT_SECURE_CONNECTION | Capabilities.CLIENT_PLUGIN_AUTH;
        if (schema != null) {
            capabilities |= Capabilities.CLIENT_CONNECT_WITH_DB;
        }
        int mariaDb = key.mariaDbCapabilities() & greeting.mariaDbCapabilities();
        int missing = key.mariaDbCapabilities() & ~mariaDb;
        if (missing != 0) {
            // The client was promised a result format this server cannot produce (a backend older than those Sluice
            // started with, added by a reload): relayed results would be misread, so this server gets no session.
            throw new BackendException("the server (" + greeting.serverVersion() + ") lacks MariaDB capabilities"
                    + " 0x" + Integer.toHexString(missing) + " that Sluice offers its clients (0x8 extended metadata needs"
                    + " MariaDB 10.5+, 0x10 metadata caching 10.6+): restart Sluice to offer only what every backend"
                    + " speaks");
        }
        boolean tls = sslMode != SslMode.DISABLED && Capabilities.has(serverCapabilities, Capabilities.CLIENT_SSL);
        if (!tls && sslMode != SslMode.DISABLED && sslMode != SslMode.PREFERRED) {
            throw new BackendException("sslMode " + sslMode + ", but the server does not offer TLS (have_ssl is not"
                    + " YES)");
        }
        if (tls) {
            capabilities |= Capabilities.CLIENT_SSL;
        }
        HandshakeResponse41 response = new HandshakeResponse41(capabilities, MAX_PACKET_SIZE, key.collationId(),
                username, scramble(plugin, nonce), schema, plugin, mariaDb);
        if (tls) {
            deferredResponse = response;
            reply = sslRequest(alloc, capabilities, mariaDb);
            state = State.AWAIT_TLS;
            return Step.START_TLS;
        }
        reply = response.write(alloc, ++sequenceId);
        state = State.AWAIT_RESULT;
        return Step.CONTINUE;
    }

    /** The first 32 bytes of the HandshakeResponse41, with CLIENT_SSL: asks the server to switch to TLS. */
    private ByteBuf sslRequest(ByteBufAllocator alloc, int capabilities, int mariaDb) {
        ByteBuf buf = Packets.startFrame(alloc, HandshakeResponse41.SSL_REQUEST_LENGTH);
        buf.writeIntLE(capabilities);
        buf.writeIntLE(MAX_PACKET_SIZE);
        buf.writeByte(key.collationId());
        buf.writeZero(19);
        buf.writeIntLE(mariaDb);
        return Packets.finishFrame(buf, ++sequenceId);
    }

    private Step onResult(ByteBuf payload, ByteBufAllocator alloc) throws BackendException {
        int header = payload.getUnsignedByte(payload.readerIndex());
        if (header == Packets.OK_HEADER) {
            return Step.DONE;
        }
        if (header == AUTH_SWITCH_REQUEST) {
            ByteBuf in = payload.duplicate().skipBytes(1);
            int nul = in.indexOf(in.readerIndex(), in.writerIndex(), (byte) 0);
            if (nul < 0) {
                throw new BackendException("unreadable auth switch request");
            }
            plugin = in.toString(in.readerIndex(), nul - in.readerIndex(), StandardCharsets.US_ASCII);
            in.readerIndex(nul + 1);
            boolean ed25519 = CLIENT_ED25519.equals(plugin);
            int nonceLength = ed25519 ? Ed25519.KEY_LENGTH : Scramble.NONCE_LENGTH; // MariaDB's ed25519: 32 bytes
            byte[] data = new byte[Math.min(in.readableBytes(), nonceLength)];
            in.readBytes(data);
            nonce = Arrays.copyOf(data, nonceLength);
            if (ed25519 && password == null) {
                throw cannotSpeak(plugin);
            }
            if (!ed25519 && !Scramble.MYSQL_NATIVE_PASSWORD.equals(plugin)
                    && !Scramble.CACHING_SHA2_PASSWORD.equals(plugin)) {
                throw new BackendException("the backend account uses the " + plugin
                        + " plugin (expected: mysql_native_password, caching_sha2_password or ed25519)");
            }
            reply = raw(alloc, scramble(plugin, nonce));
            return Step.CONTINUE;
        }
        if (header == AUTH_MORE_DATA && payload.readableBytes() >= 2) {
            int status = payload.getUnsignedByte(payload.readerIndex() + 1);
            if (status == FAST_AUTH_SUCCESS) {
                return Step.CONTINUE; // the OK follows
            }
            if (status == PERFORM_FULL_AUTHENTICATION && password == null) {
                throw cannotSpeak(Scramble.CACHING_SHA2_PASSWORD);
            }
            if (status == PERFORM_FULL_AUTHENTICATION && secure) {
                reply = raw(alloc, (password + "\0").getBytes(StandardCharsets.UTF_8)); // TLS protects it
                return Step.CONTINUE;
            }
            if (status == PERFORM_FULL_AUTHENTICATION) {
                // A plain connection: ask for the server's RSA key to send the password encrypted.
                reply = raw(alloc, new byte[] {REQUEST_PUBLIC_KEY});
                state = State.AWAIT_PUBLIC_KEY;
                return Step.CONTINUE;
            }
        }
        throw new ProtocolException("backend login packet: 0x" + Integer.toHexString(header)
                + " (expected: OK, auth switch or auth more data)");
    }

    private void onPublicKey(ByteBuf payload, ByteBufAllocator alloc) throws BackendException {
        String pem = payload.toString(payload.readerIndex() + 1, payload.readableBytes() - 1, StandardCharsets.US_ASCII);
        try {
            reply = raw(alloc, RsaKeyPair.encryptPassword(password, nonce, pem));
        } catch (GeneralSecurityException e) {
            throw new BackendException("could not encrypt the password with the server's RSA key", e);
        }
        state = State.AWAIT_RESULT;
    }

    private byte[] scramble(String pluginName, byte[] seed) throws BackendException {
        if (password == null) {
            // Only SHA1(password) is known: enough for mysql_native_password, nothing else.
            if (!Scramble.MYSQL_NATIVE_PASSWORD.equals(pluginName)) {
                throw cannotSpeak(pluginName);
            }
            return nativeStage1 == null ? new byte[0] : Scramble.nativeFromStage1(nativeStage1, seed);
        }
        if (CLIENT_ED25519.equals(pluginName)) {
            return Ed25519.sign(password.getBytes(StandardCharsets.UTF_8), seed); // MariaDB's: the signed nonce
        }
        return Scramble.CACHING_SHA2_PASSWORD.equals(pluginName)
                ? Scramble.cachingSha2Password(password, seed)
                : Scramble.nativePassword(password, seed);
    }

    /**
     * The server wants a plugin that SHA1(password) cannot answer: the client gets 1251 saying so, as from the server
     * (a refusal of this account, not a failure of the backend, so it neither fails over nor marks the server down).
     */
    private BackendException cannotSpeak(String pluginName) {
        return new BackendException("login refused", new BackendError(ErrorCode.ER_NOT_SUPPORTED_AUTH_MODE.code(),
                ErrorCode.ER_NOT_SUPPORTED_AUTH_MODE.sqlState(), "The server asks '" + username + "' to log in with "
                + pluginName + ", but Sluice knows that account's password only as mysql_native_password's hash"
                + " (users: FROM_BACKEND): use mysql_native_password for it"));
    }

    private ByteBuf raw(ByteBufAllocator alloc, byte[] data) {
        ByteBuf buf = Packets.startFrame(alloc, data.length);
        buf.writeBytes(data);
        return Packets.finishFrame(buf, ++sequenceId);
    }
}
