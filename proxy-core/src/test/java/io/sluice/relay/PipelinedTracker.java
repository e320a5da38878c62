package io.sluice.relay;

import java.util.ArrayDeque;

/**
 * A {@link ResponseTracker} with the in-flight queue its owner keeps in production (a backend connection's): the
 * kinds of pipelined commands, each begun when the one before completes. Events go on to {@code inner}.
 */
final class PipelinedTracker implements ResponseListener {
    final ResponseTracker tracker;
    private final ArrayDeque<ResponseKind> pending = new ArrayDeque<>();
    private final ResponseListener inner;

    PipelinedTracker(boolean deprecateEof, boolean cacheMetadata, ResponseListener inner) {
        this.tracker = new ResponseTracker(deprecateEof, cacheMetadata, this);
        this.inner = inner;
    }

    /** Whether commands wait behind the one followed now. */
    boolean hasPending() {
        return !pending.isEmpty();
    }

    /** A command of this kind was forwarded. */
    void expect(ResponseKind kind) {
        if (!tracker.isFollowing() && pending.isEmpty()) {
            tracker.begin(kind);
        } else {
            pending.add(kind);
        }
    }

    @Override
    public void onResponseComplete() {
        inner.onResponseComplete();
        ResponseKind next = pending.poll();
        if (next != null) {
            tracker.begin(next);
        }
    }

    @Override
    public void onLocalInfileRequest() {
        inner.onLocalInfileRequest();
    }

    @Override
    public void onOk(long affectedRows, long lastInsertId) {
        inner.onOk(affectedRows, lastInsertId);
    }

    @Override
    public void onSessionState(byte[] okPayload) {
        inner.onSessionState(okPayload);
    }

    @Override
    public void onUntrackedStateChange() {
        inner.onUntrackedStateChange();
    }
}
