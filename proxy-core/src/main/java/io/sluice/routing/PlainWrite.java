package io.sluice.routing;

import io.netty.buffer.ByteBuf;
import io.sluice.protocol.Packets;

/**
 * Whether a COM_QUERY is a plain row write ({@code INSERT}, {@code UPDATE}, {@code DELETE}, {@code REPLACE}) by its
 * first word: what may run again on a new primary after the old one refused it as read-only (decision 178). A server
 * refuses such a statement before it changes anything, and it changes no session state; a {@code CALL} (a procedure
 * may have done part of its work), DDL or {@code LOAD DATA} never runs again. Leading spaces are skipped, a leading
 * comment is not: the statement then simply is not run again.
 */
final class PlainWrite {
    private static final String[] WORDS = {"INSERT", "UPDATE", "DELETE", "REPLACE"};

    private PlainWrite() {
    }

    /** Whether the COM_QUERY in {@code frame} (header included, indexes not moved) starts with one of the words. */
    static boolean startsWith(ByteBuf frame) {
        int at = frame.readerIndex() + Packets.HEADER_SIZE + 1; // past the header and the command byte
        int end = frame.writerIndex();
        while (at < end && Character.isWhitespace(frame.getByte(at))) {
            at++;
        }
        for (String word : WORDS) {
            if (matches(frame, at, end, word)) {
                return true;
            }
        }
        return false;
    }

    private static boolean matches(ByteBuf frame, int at, int end, String word) {
        if (end - at <= word.length()) {
            return false;
        }
        for (int i = 0; i < word.length(); i++) {
            if ((frame.getByte(at + i) & 0xDF) != word.charAt(i)) { // ASCII upper case
                return false;
            }
        }
        byte after = frame.getByte(at + word.length());
        return !Character.isLetterOrDigit(after) && after != '_';
    }
}
