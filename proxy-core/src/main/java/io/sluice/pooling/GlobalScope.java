package io.sluice.pooling;

import io.netty.buffer.ByteBuf;
import io.sluice.protocol.Packets;

/**
 * Whether a SET names a server-wide scope ({@code GLOBAL}, {@code @@GLOBAL.}, {@code PERSIST}): such a SET must
 * never be answered by a replica in the primary's place (decision 103). A plain scan for the words, in any case,
 * literals included: a false match keeps the statement on the primary, which is always correct. Runs only while a
 * group's primary is down.
 */
final class GlobalScope {
    private static final byte[][] WORDS = {"GLOBAL".getBytes(java.nio.charset.StandardCharsets.US_ASCII),
        "PERSIST".getBytes(java.nio.charset.StandardCharsets.US_ASCII)};

    private GlobalScope() {
    }

    /** Whether the COM_QUERY {@code frame} (header and command byte first) mentions a server-wide scope. */
    static boolean named(ByteBuf frame) {
        int from = frame.readerIndex() + Packets.HEADER_SIZE + 1;
        int to = frame.writerIndex();
        for (byte[] word : WORDS) {
            for (int i = from; i + word.length <= to; i++) {
                if (matches(frame, i, word)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean matches(ByteBuf frame, int at, byte[] word) {
        for (int k = 0; k < word.length; k++) {
            int b = frame.getByte(at + k);
            if ((b & ~0x20) != word[k]) { // ASCII letters only: clearing bit 5 upper-cases them
                return false;
            }
        }
        return true;
    }
}
