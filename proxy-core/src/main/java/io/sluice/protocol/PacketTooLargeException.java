package io.sluice.protocol;

/** A client command larger than {@code server.maxPacketSize}. Answered with ER_NET_PACKET_TOO_LARGE (1153). */
public final class PacketTooLargeException extends ProtocolException {
    private static final long serialVersionUID = 1L;

    public PacketTooLargeException(long size, int max) {
        super("packet: " + size + " bytes (expected: <= " + max + ", server.maxPacketSize)");
    }
}
