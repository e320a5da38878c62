package io.sluice.relay;

import io.sluice.protocol.Lenenc;
import java.util.Arrays;

/**
 * What a client is shown of an OK packet that carries session state ({@code SERVER_SESSION_STATE_CHANGED}), when
 * its backend connection tracks more than the client would see on a connection of its own (see {@link OkRewriter}).
 */
@FunctionalInterface
public interface SessionStateFilter {

    /**
     * For a client that did not negotiate CLIENT_SESSION_TRACK: the OK packet as the server writes it for such a
     * client. The flag is cleared, the session state information is left out, and so is the info string's length
     * byte when the string is empty (the server writes the info, length-encoded, only when it has one).
     */
    SessionStateFilter WITHOUT_SESSION_TRACK = SessionStateFilter::withoutSessionState;

    /**
     * @param okPayload the whole payload of the OK packet (header 0x00, or 0xFE at the end of rows); not modified
     * @return the payload the client is to see
     */
    byte[] filter(byte[] okPayload);

    private static byte[] withoutSessionState(byte[] ok) {
        try {
            return plainOk(ok);
        } catch (ArrayIndexOutOfBoundsException e) {
            return ok; // cut short: not an OK packet Sluice can read, so shown as the server sent it
        }
    }

    private static byte[] plainOk(byte[] ok) {
        int pos = 1;
        pos += Lenenc.size(ok, pos); // affected rows
        pos += Lenenc.size(ok, pos); // last insert id
        int status = pos;
        pos += 4; // status flags, warnings
        if (pos >= ok.length) {
            return ok; // nothing after the warnings: no state to leave out
        }
        int infoLengthSize = Lenenc.size(ok, pos);
        long infoLength = Lenenc.value(ok, pos);
        int keep = infoLength == 0 ? pos : (int) Math.min(ok.length, pos + infoLengthSize + infoLength);
        byte[] plain = Arrays.copyOf(ok, keep);
        plain[status + 1] &= ~(byte) 0x40; // SERVER_SESSION_STATE_CHANGED is 0x4000: bit 6 of the high byte
        return plain;
    }
}
