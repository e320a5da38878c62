package io.sluice.protocol;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;

/**
 * The password scrambles of MySQL's two common authentication plugins. Sluice computes them as a client (towards
 * backends) and checks them as a server (for its own users, whose passwords it holds).
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_connection_phase_authentication_methods_native_password_authentication.html">mysql_native_password</a>
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_caching_sha2_authentication_exchanges.html">caching_sha2_password</a>
 */
public final class Scramble {
    public static final String MYSQL_NATIVE_PASSWORD = "mysql_native_password";
    public static final String CACHING_SHA2_PASSWORD = "caching_sha2_password";
    /** Bytes of the nonce (auth-plugin-data) both plugins use. */
    public static final int NONCE_LENGTH = 20;

    private static final SecureRandom RANDOM = new SecureRandom();

    private Scramble() {
    }

    /**
     * A fresh 20-byte nonce. Bytes are 1..127 and never '\0', because the greeting's second part is
     * NUL-terminated and some clients read it as a C string.
     */
    public static byte[] nonce() {
        byte[] bytes = new byte[NONCE_LENGTH];
        RANDOM.nextBytes(bytes); // one call: a nonce per client connection is on the connection-churn path
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) (1 + (bytes[i] & 0xFF) % 127); // 1..127: never NUL, always ASCII
        }
        return bytes;
    }

    /** SHA1(password) XOR SHA1(nonce + SHA1(SHA1(password))); empty for an empty password. */
    public static byte[] nativePassword(String password, byte[] nonce) {
        if (password == null || password.isEmpty()) {
            return new byte[0];
        }
        MessageDigest sha1 = digest("SHA-1");
        byte[] stage1 = sha1.digest(password.getBytes(StandardCharsets.UTF_8));
        byte[] stage2 = sha1.digest(stage1);
        sha1.update(nonce, 0, NONCE_LENGTH);
        sha1.update(stage2);
        return xor(stage1, sha1.digest());
    }

    /**
     * mysql_native_password's scramble from SHA1(password) alone (the "stage one" hash): SHA1(password) XOR
     * SHA1(nonce + SHA1(SHA1(password))). A proxy that learned the stage-one hash from a client's login can log in to
     * the server with it, without ever holding the password.
     */
    public static byte[] nativeFromStage1(byte[] stage1, byte[] nonce) {
        MessageDigest sha1 = digest("SHA-1");
        byte[] stage2 = sha1.digest(stage1);
        sha1.update(nonce, 0, NONCE_LENGTH);
        sha1.update(stage2);
        return xor(stage1, sha1.digest());
    }

    /**
     * SHA1(password) recovered from a client's mysql_native_password scramble by whoever holds the stored hash
     * SHA1(SHA1(password)): the scramble XOR SHA1(nonce + stage2); {@code null} when the scramble does not prove the
     * password (the recovered value's SHA1 is not {@code stage2}).
     */
    public static byte[] recoverNativeStage1(byte[] stage2, byte[] nonce, byte[] response) {
        if (response.length != 20) {
            return null;
        }
        MessageDigest sha1 = digest("SHA-1");
        sha1.update(nonce, 0, NONCE_LENGTH);
        sha1.update(stage2);
        byte[] stage1 = xor(response, sha1.digest());
        return MessageDigest.isEqual(stage2, sha1.digest(stage1)) ? stage1 : null;
    }

    /** SHA256(password) XOR SHA256(SHA256(SHA256(password)) + nonce); empty for an empty password. */
    public static byte[] cachingSha2Password(String password, byte[] nonce) {
        if (password == null || password.isEmpty()) {
            return new byte[0];
        }
        MessageDigest sha256 = digest("SHA-256");
        byte[] stage1 = sha256.digest(password.getBytes(StandardCharsets.UTF_8));
        byte[] stage2 = sha256.digest(stage1);
        sha256.update(stage2);
        sha256.update(nonce, 0, NONCE_LENGTH);
        return xor(stage1, sha256.digest());
    }

    /**
     * Whether a client's auth response proves it knows {@code password}, for the plugin it used.
     * An empty password is proven by an empty response (some clients send a single NUL instead).
     */
    public static boolean verify(String plugin, String password, byte[] nonce, byte[] response) {
        if (password == null || password.isEmpty()) {
            return response.length == 0 || (response.length == 1 && response[0] == 0);
        }
        byte[] expected;
        if (MYSQL_NATIVE_PASSWORD.equals(plugin)) {
            expected = nativePassword(password, nonce);
        } else if (CACHING_SHA2_PASSWORD.equals(plugin)) {
            expected = cachingSha2Password(password, nonce);
        } else {
            return false;
        }
        return MessageDigest.isEqual(expected, response);
    }

    /** SHA1(SHA1(password)): what mysql_native_password stores (the {@code *HEX} hash, unhexed). */
    public static byte[] nativeStage2(byte[] password) {
        MessageDigest sha1 = digest("SHA-1");
        return sha1.digest(sha1.digest(password));
    }

    /** SHA256(SHA256(password)): what caching_sha2_password's fast path checks against (its cache entry). */
    public static byte[] sha2Stage2(byte[] password) {
        MessageDigest sha256 = digest("SHA-256");
        return sha256.digest(sha256.digest(password));
    }

    /**
     * Checks a mysql_native_password scramble knowing only SHA1(SHA1(password)): the scramble XOR
     * SHA1(nonce + stage2) must be a stage1 whose SHA1 is stage2.
     */
    public static boolean checkNative(byte[] stage2, byte[] nonce, byte[] response) {
        if (response.length != 20) {
            return false;
        }
        MessageDigest sha1 = digest("SHA-1");
        sha1.update(nonce, 0, NONCE_LENGTH);
        sha1.update(stage2);
        byte[] stage1 = xor(response, sha1.digest());
        return MessageDigest.isEqual(stage2, sha1.digest(stage1));
    }

    /**
     * Checks a caching_sha2_password scramble knowing only SHA256(SHA256(password)): the scramble XOR
     * SHA256(stage2 + nonce) must be a stage1 whose SHA256 is stage2.
     */
    public static boolean checkCachingSha2(byte[] stage2, byte[] nonce, byte[] response) {
        if (response.length != 32) {
            return false;
        }
        MessageDigest sha256 = digest("SHA-256");
        sha256.update(stage2);
        sha256.update(nonce, 0, NONCE_LENGTH);
        byte[] stage1 = xor(response, sha256.digest());
        return MessageDigest.isEqual(stage2, sha256.digest(stage1));
    }

    private static byte[] xor(byte[] a, byte[] b) {
        byte[] out = new byte[a.length];
        for (int i = 0; i < a.length; i++) {
            out[i] = (byte) (a[i] ^ b[i]);
        }
        return out;
    }

    private static MessageDigest digest(String algorithm) {
        try {
            return MessageDigest.getInstance(algorithm);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(algorithm + " is required by the MySQL protocol", e);
        }
    }
}
