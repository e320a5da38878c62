package io.sluice.auth;

import io.sluice.protocol.Scramble;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Locale;

/**
 * What Sluice knows of a proxy user's password: the password itself, or one of MySQL's stored hashes, which let
 * Sluice check logins without the password being on disk.
 *
 * <ul>
 *   <li>{@link Plain}: both plugins, and caching_sha2_password's fast path from the first login.
 *   <li>{@link NativeHash} ({@code *HEX}, SHA1(SHA1(password))): mysql_native_password's scramble can be checked
 *       directly; a caching_sha2_password client is switched to mysql_native_password, as MySQL does for such an
 *       account.
 *   <li>{@link CachingSha2Hash} ({@code $A$005$...}): the digest cannot check a scramble, so the first login needs
 *       caching_sha2_password's full authentication (the password over TLS or RSA-encrypted), after which the fast
 *       path works from a cache in memory, as in MySQL.
 * </ul>
 */
public sealed interface Credential permits Credential.Plain, Credential.NativeHash, Credential.CachingSha2Hash {

    /** The plugin the account needs, or {@code null} when either of the two will do. */
    String plugin();

    /** Whether a mysql_native_password scramble over {@code nonce} proves the password. */
    boolean verifyNative(byte[] nonce, byte[] response);

    /** SHA256(SHA256(password)), what checks a caching_sha2_password scramble, or {@code null} when unknown. */
    byte[] sha2Stage2();

    /** Whether {@code password} (as the client sent it, without the trailing NUL) is the password. */
    boolean verifyCleartext(byte[] password);

    /** Whether the password is empty: proven by an empty auth response. */
    default boolean isEmpty() {
        return false;
    }

    /**
     * The credential of a config entry: {@code password} in plain text, or {@code passwordHash} in one of MySQL's
     * stored forms (exactly one of the two is non-null; a null pair means the empty password).
     *
     * @throws IllegalArgumentException when {@code passwordHash} is in no form Sluice can check
     */
    static Credential of(String password, String passwordHash) {
        if (passwordHash == null) {
            return new Plain(password == null ? "" : password);
        }
        String hash = passwordHash.trim();
        if (hash.startsWith("0x") || hash.startsWith("0X")) {
            // SHOW CREATE USER prints caching_sha2_password's binary salt this way (print_identified_with_as_hex)
            try {
                hash = new String(HexFormat.of().parseHex(hash.substring(2)), StandardCharsets.ISO_8859_1);
            } catch (IllegalArgumentException e) {
                throw invalidHash();
            }
        }
        if (hash.length() == 41 && hash.charAt(0) == '*') {
            try {
                return new NativeHash(HexFormat.of().parseHex(hash.substring(1).toLowerCase(Locale.ROOT)));
            } catch (IllegalArgumentException e) {
                throw invalidHash();
            }
        }
        return CachingSha2Hash.parse(hash);
    }

    private static IllegalArgumentException invalidHash() {
        return new IllegalArgumentException("passwordHash: not a MySQL password hash (expected: *<40 hex digits>"
                + " for mysql_native_password, $A$005$<salt><digest> for caching_sha2_password, or 0x<hex> of"
                + " either)");
    }

    /** A password in plain text. */
    record Plain(String password) implements Credential {
        @Override
        public String plugin() {
            return null;
        }

        @Override
        public boolean verifyNative(byte[] nonce, byte[] response) {
            return Scramble.verify(Scramble.MYSQL_NATIVE_PASSWORD, password, nonce, response);
        }

        @Override
        public byte[] sha2Stage2() {
            return password.isEmpty() ? null : Scramble.sha2Stage2(password.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public boolean verifyCleartext(byte[] candidate) {
            return MessageDigest.isEqual(password.getBytes(StandardCharsets.UTF_8), candidate);
        }

        @Override
        public boolean isEmpty() {
            return password.isEmpty();
        }

        @Override
        public String toString() {
            return "Plain[***]";
        }
    }

    /** mysql_native_password's stored hash: SHA1(SHA1(password)), 20 bytes. */
    record NativeHash(byte[] stage2) implements Credential {
        public NativeHash {
            if (stage2.length != 20) {
                throw invalidHash();
            }
        }

        @Override
        public String plugin() {
            return Scramble.MYSQL_NATIVE_PASSWORD;
        }

        @Override
        public boolean verifyNative(byte[] nonce, byte[] response) {
            return Scramble.checkNative(stage2, nonce, response);
        }

        @Override
        public byte[] sha2Stage2() {
            return null;
        }

        @Override
        public boolean verifyCleartext(byte[] candidate) {
            return MessageDigest.isEqual(stage2, Scramble.nativeStage2(candidate));
        }

        @Override
        public String toString() {
            return "NativeHash[***]";
        }
    }

    /**
     * caching_sha2_password's stored form: {@code $A$}, the rounds in thousands as three hex digits, {@code $}, a
     * 20-byte salt and the 43-character SHA-256 crypt digest.
     */
    record CachingSha2Hash(int rounds, byte[] salt, String digest) implements Credential {
        private static final int SALT_LENGTH = 20;
        private static final int DIGEST_LENGTH = 43;
        private static final String PREFIX = "$A$";

        static CachingSha2Hash parse(String hash) {
            // $A$ 005 $ <20 salt bytes> <43 digest characters>
            if (!hash.startsWith(PREFIX) || hash.length() != PREFIX.length() + 4 + SALT_LENGTH + DIGEST_LENGTH
                    || hash.charAt(6) != '$') {
                throw invalidHash();
            }
            int rounds;
            try {
                rounds = Integer.parseInt(hash.substring(3, 6), 16) * 1000;
            } catch (NumberFormatException e) {
                throw invalidHash();
            }
            byte[] salt = hash.substring(7, 7 + SALT_LENGTH).getBytes(StandardCharsets.ISO_8859_1);
            return new CachingSha2Hash(rounds, salt, hash.substring(7 + SALT_LENGTH));
        }

        @Override
        public String plugin() {
            return Scramble.CACHING_SHA2_PASSWORD;
        }

        @Override
        public boolean verifyNative(byte[] nonce, byte[] response) {
            return false; // the digest cannot check a SHA-1 scramble
        }

        @Override
        public byte[] sha2Stage2() {
            return null;
        }

        @Override
        public boolean verifyCleartext(byte[] candidate) {
            byte[] expected = digest.getBytes(StandardCharsets.US_ASCII);
            byte[] actual = Sha256Crypt.digest(candidate, salt, rounds).getBytes(StandardCharsets.US_ASCII);
            return MessageDigest.isEqual(expected, actual);
        }

        @Override
        public String toString() {
            return "CachingSha2Hash[***]";
        }
    }
}
