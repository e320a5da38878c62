package io.sluice.pooling;

import io.netty.buffer.ByteBuf;
import io.sluice.protocol.Packets;
import io.sluice.readwrite.StatementClassifier;
import io.sluice.sql.StatementScan;

/**
 * The one scan of a session's COM_QUERY (decision 136), shared by transaction pooling and a read/write split that
 * wraps it: when the split classified the statement to route it, the pooling reads the same scan's effects instead
 * of scanning it again.
 */
final class QueryScan {
    private final StatementScan scan;
    /** {@link #scan} holds the COM_QUERY about to be handled: the wrapping policy scanned it already. */
    private boolean scanned;
    /** The frame {@link #classify} read last, until {@link #scanned} (borrowed, never kept longer). */
    private ByteBuf scannedFrame;
    private int scannedFrom;
    private int scannedTo;

    /** Read for every statement of the session's, by this scan and its prepared statements' (decision 204). */
    private final ClientReading reading;

    /** @param port the session's: the tables and views whose code the text does not show, its text's reading */
    QueryScan(SessionPort port) {
        this.reading = new ClientReading(port);
        this.scan = new StatementScan(port.hiddenCode(), reading::unread);
    }

    ClientReading reading() {
        return reading;
    }

    /** Scans the COM_QUERY {@code frame} and classifies it for a read/write split; see {@link #scanned}. */
    int classify(ByteBuf frame) {
        scannedFrame = frame;
        scannedFrom = frame.readerIndex();
        scannedTo = frame.writerIndex();
        int statementClass = StatementClassifier.classify(scan, StatementClassifier.BYTES, frame,
                scannedFrom + Packets.HEADER_SIZE + 1, scannedTo);
        reading.statementSent(scan.assignments());
        return statementClass;
    }

    /**
     * The frame passed next to the policy is a COM_QUERY that {@link #classify} read: if it is the one read last,
     * unchanged, its scan stands for it, so a statement is read once. It holds for that one command.
     */
    void scanned(ByteBuf frame) {
        // the same buffer, unmoved, still in hand: no other statement was scanned since
        scanned = frame == scannedFrame && frame.readerIndex() == scannedFrom && frame.writerIndex() == scannedTo;
        scannedFrame = null;
    }

    /** Whether the scan stands for the command now being handled; it stands for that one only. */
    boolean take() {
        boolean was = scanned;
        scanned = false;
        return was;
    }

    /** The effects of the COM_QUERY {@code frame}'s text from {@code base + 1}, scanned unless it was. */
    int effects(ByteBuf frame, int base, int end, boolean wasScanned) {
        if (!wasScanned) {
            scan.scan(StatementClassifier.BYTES, frame, base + 1, end);
            reading.statementSent(scan.assignments());
        }
        return scan.effects();
    }
}
