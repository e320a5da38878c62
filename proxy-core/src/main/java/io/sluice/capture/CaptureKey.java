package io.sluice.capture;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HexFormat;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The AES key that encrypts capture blocks with AES-GCM (the JDK's {@code AES/GCM/NoPadding}): a 96-bit random
 * nonce per block, a 128-bit tag, and the file header plus the block's index as associated data, so a block cannot
 * be moved to another place or file unnoticed.
 */
public final class CaptureKey {
    static final int NONCE_LENGTH = 12;
    static final int TAG_BITS = 128;
    /** Bytes of the key check written in each file's header. */
    static final int CHECK_LENGTH = 8;

    private static final SecureRandom RANDOM = new SecureRandom();

    private final SecretKeySpec key;
    private final byte[] check;

    private CaptureKey(byte[] raw) {
        this.key = new SecretKeySpec(raw, "AES");
        this.check = checkOf(raw);
    }

    /**
     * Reads a key file: 16, 24 or 32 raw bytes, or 32, 48 or 64 hexadecimal digits (as {@code openssl rand -hex 32}
     * writes them; surrounding white space ignored).
     *
     * @throws CaptureException of kind INVALID when the file cannot be read or holds no key of those sizes
     */
    public static CaptureKey load(Path file) {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (IOException e) {
            throw new CaptureException(CaptureException.Kind.INVALID, "keyFile: " + file + ": cannot be read ("
                    + e.getMessage() + ")", e);
        }
        try {
            return of(bytes);
        } catch (IllegalArgumentException e) {
            throw new CaptureException(CaptureException.Kind.INVALID, "keyFile: " + file + ": " + e.getMessage());
        } finally {
            Arrays.fill(bytes, (byte) 0);
        }
    }

    /** A key from raw bytes or hex text, as {@link #load} reads them. */
    public static CaptureKey of(byte[] bytes) {
        if (isAesLength(bytes.length)) {
            return new CaptureKey(bytes.clone());
        }
        String text = new String(bytes, StandardCharsets.US_ASCII).trim();
        if (isAesLength(text.length() / 2) && text.length() % 2 == 0) {
            try {
                return new CaptureKey(HexFormat.of().parseHex(text));
            } catch (IllegalArgumentException e) {
                // fall through to the message below
            }
        }
        throw new IllegalArgumentException("holds " + bytes.length
                + " bytes (expected: a 128, 192 or 256-bit AES key as 16, 24 or 32 raw bytes or 32, 48 or 64 hex digits)");
    }

    private static boolean isAesLength(int n) {
        return n == 16 || n == 24 || n == 32;
    }

    /** A short one-way fingerprint of the key, kept in file headers so that a wrong key is told apart from damage. */
    byte[] check() {
        return check.clone();
    }

    private static byte[] checkOf(byte[] raw) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update("sluice capture key check".getBytes(StandardCharsets.US_ASCII));
            return Arrays.copyOf(sha.digest(raw), CHECK_LENGTH);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 is required", e);
        }
    }

    /** Encrypts {@code plain}; returns nonce followed by ciphertext and tag. */
    byte[] seal(byte[] plain, int length, byte[] associatedData) {
        byte[] nonce = new byte[NONCE_LENGTH];
        RANDOM.nextBytes(nonce);
        try {
            Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
            cipher.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, nonce));
            cipher.updateAAD(associatedData);
            byte[] out = new byte[NONCE_LENGTH + cipher.getOutputSize(length)];
            System.arraycopy(nonce, 0, out, 0, NONCE_LENGTH);
            cipher.doFinal(plain, 0, length, out, NONCE_LENGTH);
            return out;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM encryption failed", e);
        }
    }

    /**
     * Decrypts what {@link #seal} wrote.
     *
     * @throws GeneralSecurityException when the tag does not match: the block was altered or belongs elsewhere
     */
    byte[] open(byte[] sealed, byte[] associatedData) throws GeneralSecurityException {
        if (sealed.length < NONCE_LENGTH + TAG_BITS / 8) {
            throw new GeneralSecurityException("sealed block too short");
        }
        Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
        cipher.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, sealed, 0, NONCE_LENGTH));
        cipher.updateAAD(associatedData);
        return cipher.doFinal(sealed, NONCE_LENGTH, sealed.length - NONCE_LENGTH);
    }
}
