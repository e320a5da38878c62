package io.sluice.pooling;

import io.sluice.protocol.Lenenc;
import io.sluice.relay.SessionStateFilter;
import io.sluice.state.TrackerDefaults;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;

/**
 * The session trackers a client that negotiated CLIENT_SESSION_TRACK would have on a connection of its own, and the
 * filter that shows it only what they report. Transaction pooling turns every tracker on (all system variables, the
 * schema, state changes, the transaction characteristics and state, and on MySQL the session's GTIDs); the client
 * started with the server's defaults ({@link TrackerDefaults}) and may change them. A client that sets
 * {@code session_track_system_variables} itself is shown every variable from then on: Sluice keeps the server
 * reporting all of them, and the value the client chose is not reported back.
 *
 * <p>Reports the client would not have seen are removed from the OK packet; when none is left, the packet is the one
 * the server writes when nothing changed (see {@link SessionStateFilter#WITHOUT_SESSION_TRACK}).
 */
final class ClientTrackers implements SessionStateFilter {
    private static final int SYSTEM_VARIABLES = 0;
    private static final int SCHEMA = 1;
    private static final int STATE_CHANGE = 2;
    private static final int GTIDS = 3;
    private static final int TRANSACTION_CHARACTERISTICS = 4;
    private static final int TRANSACTION_STATE = 5;

    /** Whether a connection has said what the defaults are; until then packets are shown as reported. */
    private boolean known;
    /** The system variables whose changes the client is shown; {@code null} for all. */
    private Set<String> variables;
    private boolean schema = true;
    private boolean stateChange;
    /** Whether the client's own connection would report GTIDs (MySQL's {@code session_track_gtids}). */
    private boolean gtids = true;
    /**
     * The client's {@code session_track_transaction_info}: 0 OFF, 1 STATE, 2 CHARACTERISTICS. Sluice turns it to
     * CHARACTERISTICS; a client is taken to start with OFF, the servers' default (the global value is not read).
     */
    private int transactionInfo;

    /** Takes the defaults read by a connection's login, the first time there are any. */
    void defaults(TrackerDefaults defaults) {
        if (known || defaults == null) {
            return;
        }
        known = true;
        variables = names(defaults.systemVariables());
        schema = defaults.schema();
        stateChange = defaults.stateChange();
        gtids = defaults.gtids();
    }

    /** The client's statement changed one of its {@code session_track_*} settings, as the server reports it. */
    void changed(String name, String value) {
        boolean on = "ON".equalsIgnoreCase(value) || "1".equals(value);
        switch (name.toLowerCase(Locale.ROOT)) {
            case "session_track_system_variables":
                variables = null; // Sluice made it '*' again; the client is shown every variable
                break;
            case "session_track_schema":
                schema = on;
                break;
            case "session_track_state_change":
                stateChange = on;
                break;
            case "session_track_gtids":
                gtids = TrackerDefaults.gtidsOn(value); // the client's choice, which Sluice keeps (or pins on OFF)
                break;
            case "session_track_transaction_info":
                transactionInfo = value.equalsIgnoreCase("CHARACTERISTICS") || value.equals("2") ? 2
                        : value.equalsIgnoreCase("STATE") || value.equals("1") ? 1 : 0;
                break;
            default:
                break;
        }
    }

    /**
     * COM_RESET_CONNECTION or COM_CHANGE_USER: the client's trackers are the server's defaults again, taken from the
     * next connection lent.
     */
    void forget() {
        known = false;
        transactionInfo = 0;
    }

    @Override
    public byte[] filter(byte[] ok) {
        if (!known) {
            return ok; // no connection told the defaults yet: shown as reported
        }
        try {
            return filtered(ok);
        } catch (ArrayIndexOutOfBoundsException e) {
            return ok; // cut short: not a packet Sluice can read, so shown as the server sent it
        }
    }

    private byte[] filtered(byte[] ok) {
        Reader in = new Reader(ok);
        in.pos = 1;
        in.skipLenenc(); // affected rows
        in.skipLenenc(); // last insert id
        in.pos += 4; // status flags, warnings
        in.skip(in.lenenc()); // info
        int stateStart = in.pos;
        long total = in.lenenc();
        int end = (int) Math.min(ok.length, in.pos + total);
        ByteArrayOutputStream kept = new ByteArrayOutputStream(ok.length);
        while (in.pos < end) {
            int entryStart = in.pos;
            int type = ok[in.pos++] & 0xFF;
            int dataLength = (int) in.lenenc();
            int dataStart = in.pos;
            int dataEnd = Math.min(end, dataStart + dataLength);
            in.pos = dataEnd;
            if (type == SYSTEM_VARIABLES) {
                byte[] pairs = keptVariables(ok, dataStart, dataEnd);
                if (pairs.length > 0) {
                    kept.write(type);
                    Lenenc.write(kept, pairs.length);
                    kept.writeBytes(pairs);
                }
            } else if ((type == SCHEMA && schema) || (type == STATE_CHANGE && stateChange) || (type == GTIDS && gtids)
                    || (type == TRANSACTION_STATE && transactionInfo >= 1)
                    || (type == TRANSACTION_CHARACTERISTICS && transactionInfo == 2) || type > TRANSACTION_STATE) {
                kept.write(ok, entryStart, dataEnd - entryStart);
            }
        }
        if (kept.size() == 0) {
            return SessionStateFilter.WITHOUT_SESSION_TRACK.filter(ok);
        }
        if (kept.size() == total) {
            return ok; // nothing removed
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(ok.length);
        out.write(ok, 0, stateStart); // up to and with the info
        Lenenc.write(out, kept.size());
        out.writeBytes(kept.toByteArray());
        return out.toByteArray();
    }

    /** The name/value pairs of a SYSTEM_VARIABLES entry the client would see (MariaDB may put several in one). */
    private byte[] keptVariables(byte[] ok, int from, int to) {
        ByteArrayOutputStream kept = new ByteArrayOutputStream(to - from);
        Reader in = new Reader(ok);
        in.pos = from;
        while (in.pos < to) {
            int pairStart = in.pos;
            int nameLength = (int) in.lenenc();
            String name = new String(ok, in.pos, nameLength, StandardCharsets.UTF_8);
            in.skip(nameLength);
            if (in.pos < to) {
                in.skip(in.lenenc()); // the value
            }
            if (variables == null || variables.contains(name.toLowerCase(Locale.ROOT))) {
                kept.write(ok, pairStart, Math.min(to, in.pos) - pairStart);
            }
        }
        return kept.toByteArray();
    }

    private static Set<String> names(String list) {
        if (list.trim().equals("*")) {
            return null;
        }
        Set<String> names = new HashSet<>();
        for (String name : list.split(",")) {
            if (!name.isBlank()) {
                names.add(name.trim().toLowerCase(Locale.ROOT));
            }
        }
        return names;
    }

    /** A position in a payload and the length-encoded reads that move it. */
    private static final class Reader {
        final byte[] bytes;
        int pos;

        Reader(byte[] bytes) {
            this.bytes = bytes;
        }

        long lenenc() {
            long value = Lenenc.value(bytes, pos);
            pos += Lenenc.size(bytes, pos);
            return value;
        }

        void skipLenenc() {
            pos += Lenenc.size(bytes, pos);
        }

        void skip(long n) {
            pos = (int) Math.min(bytes.length, pos + n);
        }
    }
}
