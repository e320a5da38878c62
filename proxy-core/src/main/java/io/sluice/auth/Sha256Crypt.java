package io.sluice.auth;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * SHA-256 crypt (Ulrich Drepper's {@code $5$} scheme), the digest inside caching_sha2_password's stored form
 * {@code $A$005$<20-byte salt><43-char digest>}. MySQL runs it with a 20-byte salt, where glibc's {@code crypt(3)}
 * cuts salts at 16 bytes, so the salt is used here at whatever length it is given.
 *
 * @see <a href="https://www.akkadia.org/drepper/SHA-crypt.txt">Unix crypt using SHA-256 and SHA-512</a>
 */
public final class Sha256Crypt {

    private static final char[] ALPHABET =
            "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".toCharArray();

    /** The byte triples of the final encoding, as the specification lists them. */
    private static final int[][] ORDER = {
        {0, 10, 20}, {21, 1, 11}, {12, 22, 2}, {3, 13, 23}, {24, 4, 14},
        {15, 25, 5}, {6, 16, 26}, {27, 7, 17}, {18, 28, 8}, {9, 19, 29},
    };

    private Sha256Crypt() {
    }

    /** The 43-character digest of {@code password} with {@code salt} after {@code rounds} rounds. */
    public static String digest(byte[] password, byte[] salt, int rounds) {
        MessageDigest sha = sha256();
        sha.update(password);
        sha.update(salt);
        sha.update(password);
        byte[] b = sha.digest();

        sha.update(password);
        sha.update(salt);
        repeat(sha, b, password.length);
        for (int n = password.length; n > 0; n >>>= 1) {
            if ((n & 1) != 0) {
                sha.update(b);
            } else {
                sha.update(password);
            }
        }
        byte[] a = sha.digest();

        for (int i = 0; i < password.length; i++) {
            sha.update(password);
        }
        byte[] p = fill(sha.digest(), password.length);

        for (int i = 0; i < 16 + (a[0] & 0xFF); i++) {
            sha.update(salt);
        }
        byte[] s = fill(sha.digest(), salt.length);

        byte[] c = a;
        for (int i = 0; i < rounds; i++) {
            sha.update((i & 1) != 0 ? p : c);
            if (i % 3 != 0) {
                sha.update(s);
            }
            if (i % 7 != 0) {
                sha.update(p);
            }
            sha.update((i & 1) != 0 ? c : p);
            c = sha.digest();
        }
        return encode(c);
    }

    /** Adds {@code block} to the digest {@code length / 32} whole times, then its first {@code length % 32} bytes. */
    private static void repeat(MessageDigest sha, byte[] block, int length) {
        int n = length;
        for (; n > block.length; n -= block.length) {
            sha.update(block);
        }
        sha.update(block, 0, n);
    }

    /** {@code block} repeated to {@code length} bytes. */
    private static byte[] fill(byte[] block, int length) {
        byte[] out = new byte[length];
        for (int i = 0; i < length; i++) {
            out[i] = block[i % block.length];
        }
        return out;
    }

    private static String encode(byte[] c) {
        StringBuilder out = new StringBuilder(43);
        for (int[] triple : ORDER) {
            append(out, c[triple[0]] & 0xFF, c[triple[1]] & 0xFF, c[triple[2]] & 0xFF, 4);
        }
        append(out, 0, c[31] & 0xFF, c[30] & 0xFF, 3);
        return out.toString();
    }

    private static void append(StringBuilder out, int b2, int b1, int b0, int chars) {
        int w = b2 << 16 | b1 << 8 | b0;
        for (int i = 0; i < chars; i++) {
            out.append(ALPHABET[w & 0x3F]);
            w >>>= 6;
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by the MySQL protocol", e);
        }
    }
}
