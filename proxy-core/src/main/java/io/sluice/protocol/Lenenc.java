package io.sluice.protocol;

import java.io.ByteArrayOutputStream;

/**
 * Length-encoded integers in payloads held as byte arrays (OK packets copied for their session state).
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_basic_dt_integers.html">Integer
 *     types</a>
 */
public final class Lenenc {
    private Lenenc() {
    }

    /** How many bytes the integer at {@code pos} takes: 1, 3, 4 or 9. */
    public static int size(byte[] b, int pos) {
        int first = b[pos] & 0xFF;
        return first < 0xFB ? 1 : first == 0xFC ? 3 : first == 0xFD ? 4 : first == 0xFE ? 9 : 1;
    }

    /** The integer at {@code pos} (0 for the NULL marker 0xFB). */
    public static long value(byte[] b, int pos) {
        int size = size(b, pos);
        if (size == 1) {
            int first = b[pos] & 0xFF;
            return first < 0xFB ? first : 0;
        }
        long value = 0;
        for (int k = size - 1; k >= 1; k--) {
            value = value << 8 | (b[pos + k] & 0xFF);
        }
        return value;
    }

    /** Appends {@code value} length-encoded. */
    public static void write(ByteArrayOutputStream out, long value) {
        if (value < 0xFB) {
            out.write((int) value);
            return;
        }
        int size = value < 0x10000 ? 2 : value < 0x1000000 ? 3 : 8;
        out.write(size == 2 ? 0xFC : size == 3 ? 0xFD : 0xFE);
        for (int k = 0; k < size; k++) {
            out.write((int) (value >>> (8 * k)));
        }
    }
}
