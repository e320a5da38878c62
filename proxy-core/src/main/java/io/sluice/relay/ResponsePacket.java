package io.sluice.relay;

/**
 * What a {@link ResponseTracker} tells its {@link ResponseWatch watches} of the packet it just classified: its part
 * in the response and where it lies. One per tracker, reused for every packet: valid only during
 * {@link ResponseWatch#packet}.
 */
public final class ResponsePacket {

    /** The parts of a response the tracker tells watches about. */
    public enum Role {
        /** An OK packet answering a statement: a single answer, or the first packet of a result. */
        STATEMENT_OK,
        /** The column count that opens a result set ({@link #columns()}, {@link #metadataFollows()}). */
        COLUMN_COUNT,
        /** A column definition, of a result set or of a COM_STMT_PREPARE_OK. */
        COLUMN_DEFINITION,
        /** A row, told only while a watch {@link ResponseWatch#watchesRows() watches rows}. */
        ROW,
        /** The EOF, or with CLIENT_DEPRECATE_EOF the OK headed 0xFE, that ends a result set's rows. */
        END_OF_ROWS
    }

    /** The first bytes of the packet, read by the tracker. */
    final PacketHead head;
    final boolean deprecateEof;
    Role role;
    int payloadLength;
    int start;
    int serverStatus;
    long rows;
    long columns;
    boolean metadataFollows;

    ResponsePacket(PacketHead head, boolean deprecateEof) {
        this.head = head;
        this.deprecateEof = deprecateEof;
    }

    /** What the packet is. */
    public Role role() {
        return role;
    }

    /** Its payload length (of its first frame, for a packet of 16 MiB or more). */
    public int payloadLength() {
        return payloadLength;
    }

    /** Where it starts in the buffer being read, its header included; -1 when it began in an earlier buffer. */
    public int start() {
        return start;
    }

    /** The server status before this packet: that of the last OK or EOF seen. */
    public int serverStatus() {
        return serverStatus;
    }

    /** The rows of the response before this packet, over all its result sets. */
    public long rows() {
        return rows;
    }

    /** Of a {@link Role#COLUMN_COUNT}: the column count. */
    public long columns() {
        return columns;
    }

    /**
     * Of a {@link Role#COLUMN_COUNT}: whether the definitions follow (false only when MariaDB's metadata caching
     * leaves them out).
     */
    public boolean metadataFollows() {
        return metadataFollows;
    }

    /** Of an {@link Role#END_OF_ROWS}: whether it is an OK packet (CLIENT_DEPRECATE_EOF), not an EOF. */
    public boolean endsWithOk() {
        return deprecateEof;
    }
}
