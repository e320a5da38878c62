package io.sluice.codec;

/**
 * A client began a frame and did not finish sending it within {@code server.netReadTimeoutMilliseconds}, MySQL's
 * {@code net_read_timeout}: it stalled, or drips its bytes to hold a session open. Fired by
 * {@link PacketFrameDecoder}; the session answers ER_NET_READ_INTERRUPTED (1159) and closes.
 */
public final class NetReadTimeoutException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public NetReadTimeoutException(long timeoutMillis) {
        super("frame: not complete after " + timeoutMillis + " ms (expected: within server.netReadTimeoutMilliseconds)",
                null, false, false);
    }
}
