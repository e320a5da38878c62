package io.sluice.state;

import io.sluice.protocol.ServerStatus;
import java.nio.charset.StandardCharsets;

/**
 * Reads the session state information of an OK packet (CLIENT_SESSION_TRACK): the system variables, schema and
 * "state changed" flag that the server's {@code session_track_*} trackers report, the transaction characteristics,
 * and MySQL's GTIDs.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_basic_ok_packet.html">OK packet</a>
 */
public final class SessionTrackers {

    /** SESSION_TRACK_SYSTEM_VARIABLES: name and value of each variable that changed. */
    static final int SYSTEM_VARIABLES = 0;
    /** SESSION_TRACK_SCHEMA: the new current schema. */
    static final int SCHEMA = 1;
    /** SESSION_TRACK_STATE_CHANGE: "1" when any session state changed (variables, user variables, temp tables...). */
    static final int STATE_CHANGE = 2;
    /**
     * SESSION_TRACK_GTIDS (MySQL's {@code session_track_gtids}): the entry's data is an encoding specification byte
     * (0: the GTID set as text, the only one MySQL has) then the set as a length-encoded string, e.g.
     * {@code 03 29 00 27 "3e11fa47-71ca-11e1-9e33-c80aa9429562:23"}.
     */
    static final int GTIDS = 3;
    /** The only encoding of SESSION_TRACK_GTIDS: the set's text, {@code uuid:1-5,uuid2:7}. */
    static final int GTIDS_AS_TEXT = 0;
    /**
     * SESSION_TRACK_TRANSACTION_CHARACTERISTICS ({@code session_track_transaction_info = CHARACTERISTICS}): the
     * statements that would give a transaction the characteristics of the current one, or of the next one outside a
     * transaction ({@code SET TRANSACTION READ ONLY;}), a length-encoded string; empty when there are none.
     */
    static final int TRANSACTION_CHARACTERISTICS = 4;

    /** MariaDB's record of the connection's last write's GTID, reported as a system variable. */
    public static final String LAST_GTID = "last_gtid";

    /** What an OK packet reports. Called in packet order. */
    public interface Visitor {
        void onSystemVariable(String name, String value);

        void onSchema(String schema);

        /**
         * MySQL's GTID tracker reported the GTID set of the transactions the statement committed ({@code OWN_GTID}),
         * or the server's whole {@code gtid_executed} ({@code ALL_GTIDS}). Only called for an entry that holds one,
         * so an OK without it costs nothing more.
         */
        default void onGtids(String gtidSet) {
        }

        /**
         * The transaction characteristics changed ({@link #TRANSACTION_CHARACTERISTICS}).
         *
         * @param statements what the server reports, {@code ""} for none
         * @param inTransaction whether the packet's status has {@code SERVER_STATUS_IN_TRANS}: the characteristics
         *     are the current transaction's; else they are what {@code SET TRANSACTION} left for the next one
         */
        default void onTransactionCharacteristics(String statements, boolean inTransaction) {
        }

        /**
         * The packet is done.
         *
         * @param stateChanged whether it carried SESSION_TRACK_STATE_CHANGE
         * @param described whether it also said what changed (a variable other than {@code last_gtid}, or the
         *     schema)
         */
        void onEnd(boolean stateChanged, boolean described);
    }

    private final byte[] packet;
    private int pos;

    private SessionTrackers(byte[] packet) {
        this.packet = packet;
    }

    /**
     * Reads an OK packet's payload (header 0x00, or 0xFE for the OK that ends a result under CLIENT_DEPRECATE_EOF).
     * A packet cut short reports what it holds and ends; it never throws.
     */
    public static void read(byte[] okPayload, Visitor visitor) {
        new SessionTrackers(okPayload).read(visitor);
    }

    private void read(Visitor visitor) {
        boolean stateChanged = false;
        boolean described = false;
        try {
            pos = 1;
            lenenc(); // affected rows
            lenenc(); // last insert id
            int status = u16();
            u16(); // warnings
            if (pos < packet.length) {
                skip(lenenc()); // info
            }
            if ((status & ServerStatus.SERVER_SESSION_STATE_CHANGED) != 0 && pos < packet.length) {
                long total = lenenc(); // read before pos is used: lenenc() moves it
                int end = (int) Math.min(packet.length, pos + total);
                while (pos < end) {
                    int type = packet[pos++] & 0xFF;
                    long entryLength = lenenc();
                    int entryEnd = (int) Math.min(end, pos + entryLength);
                    switch (type) {
                        case SYSTEM_VARIABLES:
                            while (pos < entryEnd) { // MariaDB may put several pairs in one entry
                                String name = string();
                                String value = pos < entryEnd ? string() : "";
                                visitor.onSystemVariable(name, value);
                                // MariaDB's last_gtid, reported for every write with a binary log, is the server's
                                // record of the write, not a change of session state, and comes without a
                                // state-change entry of its own: it explains none (issue #38: a temporary table or
                                // user variable a trigger made on a primary was hidden behind it, and not pinned)
                                described |= !name.equalsIgnoreCase(LAST_GTID);
                            }
                            break;
                        case SCHEMA:
                            visitor.onSchema(string());
                            described = true;
                            break;
                        case STATE_CHANGE:
                            stateChanged = true;
                            break;
                        case GTIDS:
                            // Not "described": a commit's GTID is no session state to carry to another connection.
                            // An encoding other than text (none exists yet) is skipped, not misread.
                            if (pos < entryEnd && (packet[pos++] & 0xFF) == GTIDS_AS_TEXT && pos < entryEnd) {
                                String gtids = string();
                                if (!gtids.isEmpty()) {
                                    visitor.onGtids(gtids);
                                }
                            }
                            break;
                        case TRANSACTION_CHARACTERISTICS:
                            // Not "described": no state to carry, and reported without a state-change entry
                            visitor.onTransactionCharacteristics(pos < entryEnd ? string() : "",
                                    (status & ServerStatus.SERVER_STATUS_IN_TRANS) != 0);
                            break;
                        default:
                            break; // transaction state: not needed
                    }
                    pos = entryEnd;
                }
            }
        } catch (ArrayIndexOutOfBoundsException e) {
            // cut short: what was read stands
        }
        visitor.onEnd(stateChanged, described);
    }

    private int u16() {
        int value = (packet[pos] & 0xFF) | (packet[pos + 1] & 0xFF) << 8;
        pos += 2;
        return value;
    }

    private long lenenc() {
        int b = packet[pos++] & 0xFF;
        if (b < 0xFB) {
            return b;
        }
        int size = b == 0xFC ? 2 : b == 0xFD ? 3 : b == 0xFE ? 8 : 0;
        long value = 0;
        for (int k = 0; k < size; k++) {
            value |= (long) (packet[pos + k] & 0xFF) << (8 * k);
        }
        pos += size;
        return value;
    }

    private void skip(long n) {
        pos = (int) Math.min(packet.length, pos + n);
    }

    private String string() {
        int length = (int) lenenc();
        if (pos + length > packet.length) {
            throw new ArrayIndexOutOfBoundsException(pos + length);
        }
        String value = new String(packet, pos, length, StandardCharsets.UTF_8);
        pos += length;
        return value;
    }
}
