package io.sluice.backend;

import io.netty.channel.Channel;

/** The frontend session a connection is lent to. */
public interface BorrowingSession {
    /** The client channel that relayed bytes are written to. */
    Channel clientChannel();

    /** The server asked for a LOCAL INFILE upload: the client's next packets are file data. */
    void onLocalInfileRequest();

    /**
     * One or more relayed responses ended in the read just written (not yet flushed) to the client channel.
     * Called outside the tracker's scan, once per such read: the session may run Sluice's own commands, send
     * what it held back, or let the connection go.
     */
    void onResponsesRelayed();

    /**
     * The connection closed or broke while lent.
     *
     * @param responseStarted whether bytes of an unfinished response have already reached the client
     */
    void onBackendLost(BackendConnection backend, boolean responseStarted);

    /** The backend socket drained what the client sent: read the client again. */
    void onBackendWritable();

    /** The session as a slow-query log line names it (client, id, user). */
    String describeForLog();
}
