package io.sluice.backend;

import io.sluice.relay.OkRewriter;
import io.sluice.relay.ResponseTracker;
import io.sluice.relay.SessionStateFilter;
import io.sluice.relay.SessionStateListener;

/**
 * What a lent backend connection tells its session about session state: the reports of the connection's
 * {@link ResponseTracker} go to the session's follower (transaction pooling), and the OK packets that carry state are
 * shown to the client in its own format through an {@link OkRewriter}. Reports that answer Sluice's own commands go
 * nowhere: those change nothing the session set. One per connection, on its event loop.
 */
final class StateReports implements SessionStateListener {

    private final BackendConnection connection;
    /** Who follows the session state the server reports; {@code null} in session pooling or while not lent. */
    private SessionStateListener follower;
    /** Rewrites OK packets that carry session state for the session's client; {@code null}: bytes pass as read. */
    private OkRewriter rewriter;
    /** Kept from one lending to the next: transaction pooling lends a connection once per transaction. */
    private OkRewriter spare;

    StateReports(BackendConnection connection) {
        this.connection = connection;
    }

    /** The connection is lent: see {@link BackendConnection#bind}. */
    void lend(ResponseTracker tracker, SessionStateListener stateFollower, boolean tracksState,
            SessionStateFilter shown) {
        follower = stateFollower;
        tracker.sessionState().follow(stateFollower != null && tracksState);
        if (shown != null) {
            if (spare == null) {
                spare = new OkRewriter();
            }
            rewriter = spare;
            rewriter.use(shown);
            tracker.sessionState().rewriteOks(rewriter);
        }
    }

    /** The connection is taken back from its session. */
    void takeBack(ResponseTracker tracker) {
        follower = null;
        tracker.sessionState().follow(false);
        tracker.sessionState().rewriteOks(null);
        release();
    }

    /** What rewrites OK packets for the client, {@code null} when they pass as read. */
    OkRewriter rewriter() {
        return rewriter;
    }

    /** Lets go of what the rewriter holds (the connection closed, or was taken back). */
    void release() {
        if (rewriter != null) {
            rewriter.release();
            rewriter = null;
        }
    }

    @Override
    public void onOk(long affectedRows, long lastInsertId) {
        if (follower != null && !connection.runsOwnCommand()) {
            follower.onOk(affectedRows, lastInsertId);
        }
    }

    @Override
    public void onSessionState(byte[] okPayload) {
        if (follower != null && !connection.runsOwnCommand()) {
            follower.onSessionState(okPayload);
        }
    }

    @Override
    public void onUntrackedStateChange() {
        if (follower != null && !connection.runsOwnCommand()) {
            follower.onUntrackedStateChange();
        }
    }

    @Override
    public void onResultSetEnd(long rows) {
        if (follower != null && !connection.runsOwnCommand()) {
            follower.onResultSetEnd(rows);
        }
    }
}
