package io.sluice.protocol;

/**
 * A client packet larger than the limit in force: {@code server.maxPacketSize} once logged in (answered with
 * ER_NET_PACKET_TOO_LARGE, 1153), the login limit before (answered as a bad handshake, 1043).
 */
public final class PacketTooLargeException extends ProtocolException {
    private static final long serialVersionUID = 1L;

    public PacketTooLargeException(long size, int max) {
        this(size, max, "server.maxPacketSize");
    }

    /** @param limit what sets the limit, for the message */
    public PacketTooLargeException(long size, int max, String limit) {
        super("packet: " + size + " bytes (expected: <= " + max + ", " + limit + ")");
    }
}
