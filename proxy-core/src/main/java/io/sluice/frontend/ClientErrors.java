package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.sluice.backend.BackendConnection;
import io.sluice.backend.BackendException;
import io.sluice.backend.pool.PoolExhaustedException;
import io.sluice.pooling.PinReason;
import io.sluice.protocol.Command;
import io.sluice.protocol.ErrorCode;
import io.sluice.protocol.Packets;
import io.sluice.protocol.Packets.BackendError;
import java.net.InetAddress;
import java.util.List;

/**
 * Every ERR packet a client sees from Sluice itself, in one place (TiProxy's {@code ErrToClient}): the error code, its
 * SQLSTATE and the message, worded as MySQL words the same error where it has one. Errors that come from a backend
 * are relayed as the backend sent them ({@link #fromServer}).
 */
final class ClientErrors {

    private ClientErrors() {
    }

    /** Graceful shutdown refuses new connections, and logins that finish after it began. */
    static ByteBuf shuttingDown(ByteBufAllocator alloc, int sequenceId) {
        return Packets.err(alloc, sequenceId, ErrorCode.ER_SERVER_SHUTDOWN,
                "Server shutdown in progress: Sluice is draining, connect to another instance");
    }

    /** {@code server.maxConnections} reached. */
    static ByteBuf tooManyConnections(ByteBufAllocator alloc) {
        return Packets.err(alloc, 0, ErrorCode.ER_CON_COUNT_ERROR, "Too many connections");
    }

    /** Too little direct memory left for another session ({@link DirectMemoryHeadroom}): 1040, as a full server. */
    static ByteBuf outOfDirectMemory(ByteBufAllocator alloc, String inUse) {
        return Packets.err(alloc, 0, ErrorCode.ER_CON_COUNT_ERROR,
                "Too many connections: Sluice's direct memory is nearly exhausted (" + inUse + ")");
    }

    static ByteBuf badHandshake(ByteBufAllocator alloc, int sequenceId, String why) {
        return Packets.err(alloc, sequenceId, ErrorCode.ER_HANDSHAKE_ERROR, "Bad handshake: " + why);
    }

    /** A packet of the login larger than Sluice reads before a client is authenticated. */
    static ByteBuf loginPacketTooLarge(ByteBufAllocator alloc, int sequenceId, String detail) {
        return badHandshake(alloc, sequenceId, "too large before login (" + detail + ")");
    }

    /** A HandshakeResponse41 whose sequence id is not the one after the greeting (or after the SSLRequest). */
    static ByteBuf packetsOutOfOrder(ByteBufAllocator alloc, int sequenceId) {
        return Packets.err(alloc, sequenceId, ErrorCode.ER_NET_PACKETS_OUT_OF_ORDER, "Got packets out of order");
    }

    /**
     * A login (or COM_CHANGE_USER) from an address backing off after failed logins that cannot wait for its turn:
     * another attempt from the address already waits, or the turn comes after the handshake timeout. Its password
     * was not checked.
     */
    static ByteBuf loginThrottled(ByteBufAllocator alloc, int sequenceId, InetAddress address) {
        return Packets.err(alloc, sequenceId, ErrorCode.ER_HOST_IS_BLOCKED, "Host '"
                + (address == null ? "" : address.getHostAddress())
                + "' is blocked for a while because of many failed logins; try again later");
    }

    static ByteBuf badChangeUser(ByteBufAllocator alloc, int sequenceId, String why) {
        return Packets.err(alloc, sequenceId, ErrorCode.ER_HANDSHAKE_ERROR, "Bad COM_CHANGE_USER: " + why);
    }

    /** A plain-text login while {@code server.tls.requireSecureTransport} is on. */
    static ByteBuf secureTransportRequired(ByteBufAllocator alloc, int sequenceId) {
        return Packets.err(alloc, sequenceId, ErrorCode.ER_SECURE_TRANSPORT_REQUIRED,
                "Connections using insecure transport are prohibited while --require_secure_transport=ON.");
    }

    /** A failed login: the message MySQL gives for the code {@link ClientLogin} chose. */
    static ByteBuf loginFailed(ByteBufAllocator alloc, int sequenceId, ErrorCode code, String user,
            InetAddress address, boolean usedPassword) {
        if (code == ErrorCode.ER_NOT_SUPPORTED_AUTH_MODE) {
            return Packets.err(alloc, sequenceId, code,
                    "Client does not support authentication protocol requested by server");
        }
        return Packets.err(alloc, sequenceId, code, "Access denied for user '" + user + "'@'"
                + (address == null ? "" : address.getHostAddress()) + "' (using password: "
                + (usedPassword ? "YES" : "NO") + ")");
    }

    /**
     * A failed login (or COM_CHANGE_USER): access denied, a client that cannot switch plugins, or a server account
     * ({@code users: FROM_BACKEND}) whose plugin Sluice cannot speak, named so that its owner knows why.
     */
    static ByteBuf loginFailed(ByteBufAllocator alloc, ClientLogin login, String user, InetAddress address) {
        ProxyUsers.Account account = login.checkedAccount();
        if (login.failure() == ErrorCode.ER_NOT_SUPPORTED_AUTH_MODE && account != null
                && account.unsupportedPlugin() != null) {
            return Packets.err(alloc, login.resultSequenceId(), ErrorCode.ER_NOT_SUPPORTED_AUTH_MODE, "Sluice cannot"
                    + " log in to the server as '" + user + "': the account uses " + account.unsupportedPlugin()
                    + ", and users: FROM_BACKEND speaks mysql_native_password only" + whyNot(account.unsupportedPlugin())
                    + "; give the account mysql_native_password, or map a Sluice user to it (backendUser)");
        }
        if (login.failure() == ErrorCode.ER_NOT_SUPPORTED_AUTH_MODE && account != null
                && account.ed25519Key() != null) {
            return Packets.err(alloc, login.resultSequenceId(), ErrorCode.ER_NOT_SUPPORTED_AUTH_MODE, "'" + user
                    + "' uses ed25519: through Sluice it logs in over TLS only, sending its password in clear"
                    + " (mysql_clear_password) under TLS, since Sluice needs the password to log in to the server as"
                    + " the account; connect with TLS and a client that allows mysql_clear_password");
        }
        return loginFailed(alloc, login.resultSequenceId(), login.failure(), user, address, login.usedPassword());
    }

    /**
     * Why a plugin cannot be spoken for the client (decision 172): what the server stores of such an account lets
     * Sluice check a client's proof, but not log in to the server later as the account.
     */
    private static String whyNot(String plugin) {
        if (plugin.startsWith("ed25519")) {
            return " (the server holds no ed25519 public key for it)";
        }
        if (plugin.startsWith("caching_sha2_password") || plugin.startsWith("sha256_password")) {
            return " (the server stores a salted SHA-256 crypt of the password, from which no login to the server"
                    + " can be made)";
        }
        return "";
    }

    /** An account already has {@code maxConnections} sessions. */
    static ByteBuf userLimitReached(ByteBufAllocator alloc, int sequenceId, ProxyUsers.Account account) {
        return Packets.err(alloc, sequenceId, ErrorCode.ER_USER_LIMIT_REACHED, "User '" + account.user()
                + "' has exceeded the 'max_user_connections' resource (current value: " + account.maxConnections()
                + ")");
    }

    /** No backend of the group takes sessions. */
    static ByteBuf noBackend(ByteBufAllocator alloc, int sequenceId, String why) {
        return Packets.err(alloc, sequenceId, ErrorCode.CR_CONN_HOST_ERROR, "No backend is available: " + why);
    }

    static ByteBuf emptyPacket(ByteBufAllocator alloc, int sequenceId) {
        return Packets.err(alloc, sequenceId, ErrorCode.ER_UNKNOWN_COM_ERROR, "Unknown command: empty packet");
    }

    /** A command Sluice does not relay (replication, binlog, the obsolete ones). */
    static ByteBuf unknownCommand(ByteBufAllocator alloc, int sequenceId, int command) {
        return Packets.err(alloc, sequenceId, ErrorCode.ER_UNKNOWN_COM_ERROR,
                "Unknown command: " + Command.name(command) + " is not relayed by Sluice");
    }

    /** A command too short to be what its first byte says. */
    static ByteBuf malformed(ByteBufAllocator alloc, int sequenceId, int command) {
        return Packets.err(alloc, sequenceId, ErrorCode.ER_UNKNOWN_COM_ERROR, "Malformed " + Command.name(command));
    }

    /** A prepared-statement command named a statement the session never prepared, or closed. */
    static ByteBuf unknownStatement(ByteBufAllocator alloc, int sequenceId, long clientId, int command) {
        return Packets.err(alloc, sequenceId, ErrorCode.ER_UNKNOWN_STMT_HANDLER,
                "Unknown prepared statement handler (" + clientId + ") given to " + Command.name(command));
    }

    /** A command larger than {@code server.maxPacketSize}. */
    static ByteBuf packetTooLarge(ByteBufAllocator alloc, int sequenceId, String detail) {
        return Packets.err(alloc, sequenceId, ErrorCode.ER_NET_PACKET_TOO_LARGE,
                "Got a packet bigger than 'max_allowed_packet' bytes (" + detail + ")");
    }

    /** A client silent for longer than {@code server.idleTimeoutMilliseconds}, as MySQL 8.0.24+ says it. */
    static ByteBuf idleTimeout(ByteBufAllocator alloc) {
        return Packets.err(alloc, 0, ErrorCode.ER_CLIENT_INTERACTION_TIMEOUT,
                "The client was disconnected by the server because of inactivity.");
    }

    /**
     * A command whose frame did not arrive whole within {@code server.netReadTimeoutMilliseconds}, as MySQL words its
     * {@code net_read_timeout}.
     */
    static ByteBuf netReadTimeout(ByteBufAllocator alloc, int sequenceId) {
        return Packets.err(alloc, sequenceId, ErrorCode.ER_NET_READ_INTERRUPTED,
                "Got timeout reading communication packets");
    }

    /** What a session says in its log line and error when its backend connection is gone. */
    static String lostBackendMessage(BackendConnection lost) {
        return "Lost connection to backend '" + lost.dataSourceName() + "' (" + lost.address() + ")";
    }

    /**
     * The backend connection broke: at once while a command waits for its answer ({@code duringQuery}), else at the
     * session's next command, as a server's death would be.
     */
    static ByteBuf lostBackend(ByteBufAllocator alloc, int sequenceId, String message, boolean duringQuery) {
        return Packets.err(alloc, sequenceId, ErrorCode.CR_SERVER_LOST, duringQuery ? message + " during query"
                : message);
    }

    /** An error a backend answered with, passed on as it is. */
    static ByteBuf fromServer(ByteBufAllocator alloc, int sequenceId, BackendError error) {
        return Packets.err(alloc, sequenceId, error.code(), error.sqlState(), error.message());
    }

    /**
     * No backend connection could be had for the session: the server's own refusal (unknown database, access
     * denied) as it is; a full pool as MySQL's "Too many connections"; anything else as "Can't connect".
     *
     * @param tried the backends tried, the last one first failed over from included
     */
    /**
     * A read/write split session's statement needs the group's primary, which cannot be reached (decision 103): the
     * session stays, its reads go on from the replicas, and its writes work again once the primary is back.
     */
    static ByteBuf primaryDown(ByteBufAllocator alloc, int sequenceId, String group, String primary, String address,
            String why) {
        return Packets.err(alloc, sequenceId, ErrorCode.ER_OPTION_PREVENTS_STATEMENT, "The primary of read/write "
                + "group '" + group + "' is down ('" + primary + "' at " + address + ": " + why + "): this statement "
                + "needs it and did not run; reads go on from the replicas, writes work again once it is back");
    }

    /**
     * A read/write split session's statement needs the group's primary, and for {@code primaryWaitMilliseconds} the
     * group had none that takes writes (issue #40): none writable, or a split brain (naming both), or a switchover
     * that held writes too long. Nothing ran; the session goes on.
     */
    static ByteBuf noPrimary(ByteBufAllocator alloc, int sequenceId, String group, NoPrimary why) {
        String state = switch (why.roles().state()) {
            case SPLIT_BRAIN -> "is in a split brain: " + String.join(" and ", why.roles().writable())
                    + " are all writable, and Sluice writes to neither";
            case SWITCHING -> "is switching over its primary";
            default -> "has no writable server";
        };
        return Packets.err(alloc, sequenceId, ErrorCode.ER_OPTION_PREVENTS_STATEMENT, "Read/write group '" + group
                + "' " + state + " (" + why.getMessage() + "): this statement needs the primary and did not run;"
                + " reads go on from the replicas");
    }

    /**
     * A statement of a read/write split session that would make its replica's connection writable (START TRANSACTION
     * READ WRITE, a SET of the access mode) where it must run on that replica: inside a read-only transaction, or
     * while the session keeps the connection (decision 110), for {@code pinnedBy} if not {@code null}. Nothing ran.
     */
    static ByteBuf accessModeOnReplica(ByteBufAllocator alloc, int sequenceId, String group, String replica,
            PinReason pinnedBy) {
        return Packets.err(alloc, sequenceId, ErrorCode.ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION, "Read/write group '"
                + group + "': this statement would make the connection to replica '" + replica + "' read-write, and "
                + "a replica is never written through Sluice; it did not run. " + (pinnedBy == null
                ? "End the read-only transaction (COMMIT) first: the statement then runs on the primary"
                : "The session keeps that connection (" + pinnedBy.label() + ": what it did there may still be there)"
                + " until it ends or resets (COM_RESET_CONNECTION); a new session runs it on the primary"));
    }

    static ByteBuf acquireFailed(ByteBufAllocator alloc, int sequenceId, Throwable cause, String dataSource,
            String address, List<String> tried, PoolExhaustion exhaustion) {
        if (cause instanceof BackendException be && be.serverError() != null) {
            return fromServer(alloc, sequenceId, be.serverError());
        }
        if (cause instanceof PoolExhaustedException exhausted) {
            return Packets.err(alloc, sequenceId, ErrorCode.ER_CON_COUNT_ERROR,
                    "Too many connections: " + exhaustion.explain(exhausted));
        }
        String triedNote = tried.size() > 1 ? " (tried backends " + String.join(", ", tried) + ")" : "";
        return Packets.err(alloc, sequenceId, ErrorCode.CR_CONN_HOST_ERROR, "Can't connect to backend '"
                + dataSource + "' (" + address + "): " + cause.getMessage() + triedNote);
    }
}
