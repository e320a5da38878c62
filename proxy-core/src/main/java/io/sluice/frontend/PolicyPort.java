package io.sluice.frontend;

import io.netty.channel.Channel;
import io.sluice.backend.BackendConnection;
import io.sluice.backend.pool.BackendPool;
import io.sluice.pooling.PinReason;
import io.sluice.pooling.SessionPort;
import io.sluice.protocol.Packets.BackendError;
import io.sluice.protocol.Packets;
import io.sluice.relay.ResponseKind;
import io.sluice.routing.ReadWriteGroup;
import io.sluice.sql.HiddenCodeNames;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link SessionPort} of one session: what its pooling policy may ask of the command relay, the lease and the
 * session record. Every ERR it sends comes from {@link ClientErrors}. On the session's event loop.
 */
final class PolicyPort implements SessionPort {
    private static final Logger log = LoggerFactory.getLogger(PolicyPort.class);
    /** A login value with both modes that make the server read text otherwise (decision 204). */
    private static final String BOTH_MODES = "NO_BACKSLASH_ESCAPES,ANSI_QUOTES";

    private final CommandRelayHandler relay;
    private final BackendLease lease;
    private final ClientSession session;
    private final FrontendContext context;

    PolicyPort(CommandRelayHandler relay, BackendLease lease, ClientSession session, FrontendContext context) {
        this.relay = relay;
        this.lease = lease;
        this.session = session;
        this.context = context;
    }

    @Override
    public Channel clientChannel() {
        return session.channel();
    }

    @Override
    public int clientCollationId() {
        return session.key().collationId();
    }

    /**
     * In a read/write split, the group's servers' login value, whether or not the session holds a connection (the
     * statement is routed after it is read); one with both modes that change the reading where the servers differ
     * (set up with different global modes); none while Sluice has not logged in yet to the primary, or to a replica
     * that may take reads. Else the login value of the connection the session holds, or of its data source's (its
     * latest login: {@code EventLoopPool.loginSqlMode}), which changes when the session moves.
     */
    @Override
    public String loginSqlMode() {
        ReadWriteGroup group = lease.readWriteGroup();
        if (group != null) {
            String value = loginSqlMode(group.primary());
            List<String> replicas = group.replicas();
            for (int i = 0; value != null && i < replicas.size(); i++) {
                String other = loginSqlMode(replicas.get(i));
                if (other == null) {
                    value = group.usableNow(replicas.get(i)) ? null : value; // a read may go there: unknown
                } else if (!other.equals(value)) {
                    return BOTH_MODES;
                }
            }
            return value;
        }
        BackendConnection held = lease.connection();
        if (held != null) {
            String value = held.state().loginValues().get("sql_mode");
            return value == null ? "" : value;
        }
        return lease.dataSource() == null ? null : loginSqlMode(lease.dataSource());
    }

    private String loginSqlMode(String dataSource) {
        BackendPool pool = context.pool(dataSource);
        return pool == null ? null : pool.forLoop(session.channel().eventLoop()).loginSqlMode();
    }

    @Override
    public Supplier<HiddenCodeNames> hiddenCode() {
        return context.hiddenCode();
    }

    @Override
    public void hiddenCodeDefining(String sql) {
        context.hiddenCode().defining(sql);
    }

    @Override
    public void hiddenCodeDefined(String sql) {
        context.hiddenCode().defined(sql);
    }

    @Override
    public BackendConnection connection() {
        return lease.connection();
    }

    @Override
    public int replySequenceId() {
        return relay.replySequenceId();
    }

    @Override
    public boolean isQuiet() {
        return relay.isQuiet();
    }

    @Override
    public void replyOk(int sequenceId, int statusFlags) {
        relay.reply(Packets.ok(session.channel().alloc(), sequenceId, statusFlags));
    }

    @Override
    public void replyUnknownStatement(long clientId, int command, int sequenceId) {
        relay.reply(ClientErrors.unknownStatement(session.channel().alloc(), sequenceId, clientId, command));
    }

    @Override
    public void failMalformed(int command, int sequenceId) {
        relay.failAndClose(ClientErrors.malformed(session.channel().alloc(), sequenceId, command));
    }

    @Override
    public void failHeldCommand(BackendError error) {
        HeldCommands.Held waiting = relay.held().poll();
        int sequenceId = waiting.replySequenceId(); // read from the frame, which drop releases
        waiting.drop();
        if (waiting.kind() != ResponseKind.NONE) {
            relay.reply(ClientErrors.fromServer(session.channel().alloc(), sequenceId, error));
        }
    }

    @Override
    public void lostBackend(BackendConnection on, Throwable cause) {
        if (relay.isClosed()) {
            return;
        }
        lease.forget(on);
        String message = ClientErrors.lostBackendMessage(on);
        log.warn("client {}: {}: {}", session.remoteAddress(), message,
                cause == null ? "" : cause.toString());
        relay.failAndClose(ClientErrors.lostBackend(session.channel().alloc(), relay.replySequenceId(), message, true));
    }

    @Override
    public void resume() {
        relay.sendHeld();
    }

    @Override
    public void giveBack() {
        lease.giveBack();
    }

    @Override
    public boolean visiting() {
        return lease.visiting();
    }

    @Override
    public void resetConnection() {
        lease.release();
    }

    @Override
    public void schemaChanged(String schema) {
        session.schema(schema, schema);
    }

    @Override
    public void pinChanged(PinReason before, PinReason now) {
        context.registry().pinChanged(before, now);
    }

    @Override
    public void pinned(PinReason reason) {
        context.registry().pinned(reason);
        if (session.digests() != null) {
            session.digests().pinned(reason);
        }
        log.debug("client {} #{}: pinned to its backend connection: {}", session.remoteAddress(),
                session.connectionId(), reason.label());
    }
}
