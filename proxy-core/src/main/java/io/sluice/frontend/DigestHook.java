package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.sluice.backend.BackendConnection;
import io.sluice.pooling.PinReason;
import io.sluice.routing.ReadWriteGroup;
import io.sluice.statistics.DigestStatistics;
import io.sluice.statistics.SessionDigests;
import io.sluice.statistics.StatementRecord;

/**
 * Where a session meets statement statistics by digest: just before a client command is written to the backend
 * connection, the connection is told which entry counts its outcome; the connection's in-flight entry carries it to
 * the end of the response. Made only while statistics are on: with them off the relay holds no hook, and a command
 * costs one null test.
 */
final class DigestHook {
    private final SessionDigests digests;
    private final ClientSession session;
    private final BackendLease lease;
    /** The session's read/write split group, or {@code null}: its group is then the data source it is on. */
    private final String splitGroup;

    private DigestHook(SessionDigests digests, ClientSession session, BackendLease lease, String splitGroup) {
        this.digests = digests;
        this.session = session;
        this.lease = lease;
        this.splitGroup = splitGroup;
    }

    /** The hook of a session that logged in, or {@code null} with statistics off. */
    static DigestHook of(FrontendContext context, ClientSession session, BackendLease lease) {
        DigestStatistics statistics = context.statistics();
        if (statistics == null) {
            return null;
        }
        ReadWriteGroup split = context.readWriteGroup(session.requestedSchema());
        return new DigestHook(statistics.forSession(session.eventLoop()), session, lease,
                split == null ? null : split.name());
    }

    /**
     * A client command (borrowed frame, as the client sent it) is about to be forwarded: the record its outcome
     * counts in, or {@code null}, for the connection's {@link BackendConnection#recordNext}.
     */
    StatementRecord beforeSend(ByteBuf frame, int command) {
        return digests.onCommand(command, frame, session.user(), session.schema(),
                splitGroup != null ? splitGroup : lease.dataSource());
    }

    /** A client command arrived (borrowed frame), before the session's policy sees it. */
    void onArrival(int command, ByteBuf frame) {
        digests.onArrival(command, frame);
    }

    /** What the session's statistics know of the statements the client prepared: see {@link SessionDigests}. */
    SessionDigests statements() {
        return digests;
    }

    /** The session got pinned: a response's warnings pin for the statement answered, anything else for the next. */
    void pinned(PinReason reason) {
        digests.pinned(reason == PinReason.DIAGNOSTICS);
    }
}
