package io.sluice.backend;

import io.netty.channel.Channel;
import io.sluice.relay.OkRewriter;
import io.sluice.relay.ResponseTracker;
import io.sluice.relay.RowLimit;
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
    /** Cuts a row limit's rows when {@link #rewriter} does not (session pooling), or {@code null}. */
    private OkRewriter rowCuts;
    /** The row limit {@link #limitRowsNext} set for the next client command, or {@code null}. */
    private RowLimit nextRows;
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
        nextRows = null; // a limit whose statement waited and went elsewhere must not reach the next session's
        tracker.sessionState().follow(false);
        tracker.sessionState().rewriteOks(null);
        release();
    }

    /** What rewrites OK packets for the client, {@code null} when they pass as read. */
    OkRewriter rewriter() {
        return rewriter;
    }

    /** What writes relayed bytes other than as read: the rewriter, else the cutter of rows (decision 191), or null. */
    OkRewriter relayRewriter() {
        return rewriter != null ? rewriter : rowCuts;
    }

    /**
     * The next client command gets at most {@code max} rows (decision 191), cut by the rewriter, else by one that cuts
     * rows only, made the first time.
     */
    void limitRowsNext(long max, String rule, Runnable onCut, Channel client, Channel backend) {
        if (rewriter == null && rowCuts == null) {
            rowCuts = new OkRewriter();
        }
        nextRows = new RowLimit(max, rule, onCut, rewriter != null ? rewriter : rowCuts, client, backend);
    }

    /** The row limit of the client command being forwarded, or {@code null}; forgotten once taken. */
    RowLimit takeRowLimit() {
        RowLimit rows = nextRows;
        nextRows = null;
        return rows;
    }

    /** Lets go of what the rewriters hold (the connection closed, or was taken back). */
    void release() {
        if (rowCuts != null) {
            rowCuts.release();
        }
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
