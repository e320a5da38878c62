package io.sluice.auth;

import io.sluice.protocol.Scramble;
import java.io.BufferedReader;
import java.io.Console;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Locale;

/**
 * Produces the {@code passwordHash} values of config.yaml from a password, in the same forms MySQL stores:
 *
 * <pre>
 * java -cp 'lib/*' io.sluice.auth.PasswordHash          # asks for the password, prints both forms
 * echo -n secret | java -cp 'lib/*' io.sluice.auth.PasswordHash
 * </pre>
 */
public final class PasswordHash {

    /** MySQL's default: {@code caching_sha2_password_digest_rounds} = 5000, written as 005. */
    public static final int DEFAULT_ROUNDS = 5000;

    /** Salt characters: the crypt alphabet, so the hash is printable and needs no quoting beyond YAML's. */
    private static final char[] SALT_ALPHABET =
            "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".toCharArray();
    private static final SecureRandom RANDOM = new SecureRandom();

    private PasswordHash() {
    }

    /** mysql_native_password's stored form: {@code *} and SHA1(SHA1(password)) in upper-case hex. */
    public static String nativeHash(String password) {
        return "*" + HexFormat.of().formatHex(Scramble.nativeStage2(password.getBytes(StandardCharsets.UTF_8)))
                .toUpperCase(Locale.ROOT);
    }

    /** caching_sha2_password's stored form with a fresh salt and MySQL's default 5000 rounds. */
    public static String cachingSha2Hash(String password) {
        char[] salt = new char[20];
        for (int i = 0; i < salt.length; i++) {
            salt[i] = SALT_ALPHABET[RANDOM.nextInt(SALT_ALPHABET.length)];
        }
        return cachingSha2Hash(password, new String(salt), DEFAULT_ROUNDS);
    }

    /** caching_sha2_password's stored form for a given 20-character salt and a multiple of 1000 rounds. */
    public static String cachingSha2Hash(String password, String salt, int rounds) {
        if (salt.length() != 20 || salt.indexOf('$') >= 0) {
            throw new IllegalArgumentException("salt: " + salt.length() + " characters (expected: 20, no '$')");
        }
        if (rounds < 1000 || rounds % 1000 != 0 || rounds > 0xFFF * 1000) {
            throw new IllegalArgumentException("rounds: " + rounds + " (expected: a multiple of 1000)");
        }
        String digest = Sha256Crypt.digest(password.getBytes(StandardCharsets.UTF_8),
                salt.getBytes(StandardCharsets.ISO_8859_1), rounds);
        return String.format(Locale.ROOT, "$A$%03X$%s%s", rounds / 1000, salt, digest);
    }

    /** Reads a password (without echo on a terminal, else the first line of standard input) and prints both forms. */
    public static void main(String[] args) throws IOException {
        String password;
        Console console = System.console();
        if (console != null) {
            char[] typed = console.readPassword("Password: ");
            password = typed == null ? "" : new String(typed);
        } else {
            String line = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            password = line == null ? "" : line;
        }
        if (password.isEmpty()) {
            System.err.println("sluice: an empty password needs no hash: leave password and passwordHash unset");
            System.exit(2);
        }
        // Single quotes in YAML keep the $ and * characters literal.
        System.out.println("passwordHash: '" + cachingSha2Hash(password) + "'   # caching_sha2_password");
        System.out.println("passwordHash: '" + nativeHash(password) + "'   # mysql_native_password");
    }
}
