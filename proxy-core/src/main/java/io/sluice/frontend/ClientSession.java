package io.sluice.frontend;

import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.handler.ssl.SslHandler;
import io.sluice.api.SessionSnapshot;
import io.sluice.backend.BackendConnection;
import io.sluice.backend.SessionKey;
import io.sluice.backend.pool.BackendPool;
import io.sluice.metrics.CommandObserver;
import io.sluice.pooling.PinReason;
import io.sluice.protocol.Capabilities;
import io.sluice.protocol.HandshakeResponse41;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;

/**
 * One client's session as Sluice knows it: who logged in, what it negotiated, which schema it uses, and which
 * pipeline stage serves it now. The login stage ({@link ClientHandshakeHandler}) fills it in and hands it to the
 * command stage ({@link CommandRelayHandler}); the session registry holds it for graceful shutdown and
 * {@code /api/sessions}. Fields change on the session's event loop only.
 */
public final class ClientSession {
    private final Channel channel;
    /** The client's address from a PROXY protocol header, or {@code null} (the socket's peer is the client). */
    private InetSocketAddress proxiedAddress;
    private final int connectionId;
    private final long connectedAtMillis = System.currentTimeMillis();

    /** When the client connected (the wall clock, for the connection log and {@code /api/sessions}). */
    long connectedAtMillis() {
        return connectedAtMillis;
    }
    /** The greeting's nonce: COM_CHANGE_USER authenticates over it again. */
    private final byte[] nonce;
    private final CommandObserver commands;

    private HandshakeResponse41 handshake;
    private String user;
    private String authPlugin;
    /** The account whose session count this session holds, once logged in. */
    private ProxyUsers.Account account;
    private SessionKey key;
    /** The schema the client asked for; {@link #schema} is what it resolves to on the assigned backend. */
    private String requestedSchema;
    private String schema;
    /** Statement statistics by digest, from the command stage on; {@code null} when off. */
    private DigestHook digests;
    private RuleHook rules;
    /** The command stage, once logged in; {@code null} during the login. */
    private volatile CommandRelayHandler relay;

    ClientSession(Channel channel, int connectionId, byte[] nonce, CommandObserver commands) {
        this.channel = channel;
        this.connectionId = connectionId;
        this.nonce = nonce;
        this.commands = commands;
    }

    public Channel channel() {
        return channel;
    }

    /** The event loop this session runs on, where {@link #snapshot()} must be called. */
    public EventLoop eventLoop() {
        return channel.eventLoop();
    }

    int connectionId() {
        return connectionId;
    }

    byte[] nonce() {
        return nonce;
    }

    /** Where the session's commands are counted and timed (metrics, slow-query log). */
    CommandObserver commands() {
        return commands;
    }

    /** Statement statistics by digest; {@code null} when off or before the command stage. */
    DigestHook digests() {
        return digests;
    }

    /** The command stage's query rules; {@code null} before the command stage. */
    RuleHook rules() {
        return rules;
    }

    /** The command stage's query-rule hook, returned. */
    RuleHook useRules(RuleHook hook) {
        rules = hook;
        return hook;
    }

    /** The command stage's statistics hook (or {@code null}), returned. */
    DigestHook useDigests(DigestHook hook) {
        digests = hook;
        return hook;
    }

    HandshakeResponse41 handshake() {
        return handshake;
    }

    void handshake(HandshakeResponse41 response) {
        this.handshake = response;
        this.user = response.user();
    }

    String user() {
        return user;
    }

    String authPlugin() {
        return authPlugin;
    }

    /** The user is logged in (again, after COM_CHANGE_USER) with this plugin. */
    void loggedIn(String name, String plugin) {
        this.user = name;
        this.authPlugin = plugin;
    }

    ProxyUsers.Account account() {
        return account;
    }

    /**
     * Counts the session for {@code next}, giving up the current account's count.
     *
     * @return false, and no change, when {@code next} already has its {@code maxConnections} sessions
     */
    boolean switchAccount(ProxyUsers.Account next) {
        if (next == account) {
            return true;
        }
        if (!next.admitSession()) {
            return false;
        }
        if (account != null) {
            account.sessionClosed();
        }
        account = next;
        return true;
    }

    /** The session ended: its account counts it no more. */
    void releaseAccount() {
        if (account != null) {
            account.sessionClosed();
            account = null;
        }
    }

    /** Whether the client negotiated CLIENT_SESSION_TRACK (its backend connections may have, for transaction pooling). */
    boolean tracksSessionState() {
        return Capabilities.has(handshake.capabilities(), Capabilities.CLIENT_SESSION_TRACK);
    }

    /** What a pooled backend connection must share with this client; set at login. */
    SessionKey key() {
        return key;
    }

    void key(SessionKey value) {
        this.key = value;
    }

    /** The server account of the session's own, or {@code null}: the data source's account (or not logged in). */
    String accountUser() {
        return key == null ? null : key.accountUser();
    }

    String requestedSchema() {
        return requestedSchema;
    }

    String schema() {
        return schema;
    }

    /** The schema the client asked for, and what it resolves to on the backend it is assigned to. */
    void schema(String requested, String resolved) {
        this.requestedSchema = requested;
        this.schema = resolved;
    }

    void relay(CommandRelayHandler handler) {
        this.relay = handler;
    }

    /** Whether the client switched to TLS (the SslHandler is only ever in the pipeline once it did). */
    boolean isSecure() {
        return channel.pipeline().get(SslHandler.class) != null;
    }

    InetAddress clientAddress() {
        return remoteAddress() instanceof InetSocketAddress isa ? isa.getAddress() : null;
    }

    /**
     * The client's address: the one a PROXY protocol header named (a load balancer in front, from a trusted network),
     * else the socket's. User {@code @host} rules, the login back-off, logs and {@code /api/sessions} use it.
     */
    SocketAddress remoteAddress() {
        return proxiedAddress != null ? proxiedAddress : channel.remoteAddress();
    }

    /** The PROXY protocol header named the client behind the load balancer. */
    void proxiedAddress(InetSocketAddress address) {
        proxiedAddress = address;
    }

    /** The session as a slow-query log line names it. */
    String describeForLog() {
        return "client=" + remoteAddress() + " id=" + connectionId + " user=" + user;
    }

    /**
     * Closes this session at its first idle moment outside a transaction: now if it is idle, else when a response
     * leaves it so. A session still logging in finishes its login (which then refuses with ERR 1053). Safe to call
     * from any thread, and more than once.
     */
    public void closeWhenIdle() {
        channel.eventLoop().execute(() -> {
            CommandRelayHandler handler = relay;
            if (handler != null) {
                handler.closeWhenIdle();
            }
        });
    }

    /**
     * The backend the session is assigned to, {@code null} before its login picked one. Any thread: a hint for
     * {@link SessionMoves}, which the move itself checks again on the session's loop.
     */
    String backendName() {
        CommandRelayHandler handler = relay;
        return handler == null ? null : handler.lease().dataSource();
    }

    /**
     * Whether the session can move at all: its state follows it between connections (transaction pooling), or can be
     * read from its server and set on another (session pooling on MariaDB).
     */
    boolean movable() {
        CommandRelayHandler handler = relay;
        return handler != null && handler.lease().moves().movable();
    }

    /** Whether a move asked for earlier waits for the session to let its connection go. Any thread. */
    boolean movePending() {
        CommandRelayHandler handler = relay;
        return handler != null && handler.lease().moves().movePending();
    }

    /**
     * Moves the session to another backend between transactions (see {@link LeaseMoves#move}). Any thread: runs
     * on the session's loop; a refusal is counted there.
     *
     * @param to the backend to move to, or {@code null} for the balancer's choice among the others
     */
    void move(SessionMove.Reason reason, String to) {
        channel.eventLoop().execute(() -> {
            CommandRelayHandler handler = relay;
            if (handler != null && handler.isCommandPhase()) {
                handler.lease().moves().move(reason, to);
            }
        });
    }

    /** This session as {@code /api/sessions?verbose} shows it. Call on the session's event loop. */
    public SessionSnapshot snapshot() {
        CommandRelayHandler handler = relay;
        String state = handler == null ? (channel.isActive() ? "login" : "closing") : state(handler);
        String backend = handler == null ? null : handler.lease().dataSource();
        PinReason pin = handler == null ? null : handler.policy().pinnedBy();
        if (pin == null && handler != null && handler.lease().moves().handover() != null) {
            pin = handler.lease().moves().handover().refusedFor(); // session pooling: its server said so last
        }
        int moves = handler == null ? 0 : handler.lease().moves().count();
        SessionMove.Reason waiting = handler == null ? null : handler.lease().moves().waiting();
        String account = key == null || key.account() != null || handler == null ? accountUser()
                : sharedAccount(handler.lease());
        return new SessionSnapshot(connectionId, user, String.valueOf(remoteAddress()), backend, schema,
                state, connectedAtMillis, pin == null ? null : pin.label(), moves,
                waiting == null ? null : waiting.label(), account);
    }

    /** The data source's own account, which the session shares; {@code null} while it has no backend. */
    private static String sharedAccount(BackendLease lease) {
        if (lease.dataSource() == null) {
            return null;
        }
        BackendPool pool = lease.backendPool();
        return pool == null ? null : pool.dataSource().username();
    }

    /** {@code closing}, {@code login}, {@code in_transaction}, {@code running} or {@code idle}. */
    private static String state(CommandRelayHandler handler) {
        BackendConnection connection = handler.lease().connection();
        if (handler.isClosed()) {
            return "closing";
        } else if (!handler.isCommandPhase()) {
            return "login";
        } else if (connection != null && connection.tracker().inTransaction()) {
            return "in_transaction";
        } else if (handler.lease().isAcquiring() || (connection != null && !connection.isBetweenCommands())) {
            return "running";
        }
        return "idle";
    }
}
