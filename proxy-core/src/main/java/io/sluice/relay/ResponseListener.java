package io.sluice.relay;

/** What a {@link ResponseTracker}'s owner hears: the state reports, and the end of each response. On the event loop. */
public interface ResponseListener extends SessionStateListener {
    /** The server asked for a LOCAL INFILE upload: the client's next packets are file data. */
    void onLocalInfileRequest();

    /**
     * The response begun last is complete, its last byte passed. Its outcome is readable now
     * ({@link ResponseTracker#outcome()}); the owner may {@link ResponseTracker#begin begin} the next one.
     */
    void onResponseComplete();
}
