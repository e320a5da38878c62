package io.sluice.protocol;

import static io.sluice.protocol.Scramble.CACHING_SHA2_PASSWORD;
import static io.sluice.protocol.Scramble.MYSQL_NATIVE_PASSWORD;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ScrambleTest {
    /** The nonce 0x01..0x14. */
    private static final byte[] NONCE = new byte[20];

    static {
        for (int i = 0; i < NONCE.length; i++) {
            NONCE[i] = (byte) (i + 1);
        }
    }

    private static byte[] sha(String algorithm, byte[]... parts) throws Exception {
        MessageDigest md = MessageDigest.getInstance(algorithm);
        for (byte[] part : parts) {
            md.update(part);
        }
        return md.digest();
    }

    private static byte[] xor(byte[] a, byte[] b) {
        byte[] out = new byte[a.length];
        for (int i = 0; i < a.length; i++) {
            out[i] = (byte) (a[i] ^ b[i]);
        }
        return out;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** From the docs: SHA1(password) XOR SHA1(nonce + SHA1(SHA1(password))). */
    private static byte[] nativeByDefinition(String password, byte[] nonce) throws Exception {
        byte[] stage1 = sha("SHA-1", utf8(password));
        return xor(stage1, sha("SHA-1", nonce, sha("SHA-1", stage1)));
    }

    /** From the docs: SHA256(password) XOR SHA256(SHA256(SHA256(password)) + nonce). */
    private static byte[] sha2ByDefinition(String password, byte[] nonce) throws Exception {
        byte[] stage1 = sha("SHA-256", utf8(password));
        return xor(stage1, sha("SHA-256", sha("SHA-256", stage1), nonce));
    }

    @Test
    void nativePasswordMatchesAFixedVector() throws Exception {
        // SHA1(SHA1("password")) is the well-known mysql.user hash *2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19:
        // a check that the digest steps below are the server's.
        assertThat(HexFormat.of().formatHex(sha("SHA-1", sha("SHA-1", utf8("password")))))
                .isEqualTo("2470c0c06dee42fd1618bb99005adca2ec9d1e19");
        // Worked by hand for "secret" and nonce 01..14, step by step.
        byte[] stage1 = MessageDigest.getInstance("SHA-1").digest(utf8("secret"));
        byte[] stage2 = MessageDigest.getInstance("SHA-1").digest(stage1);
        MessageDigest md = MessageDigest.getInstance("SHA-1");
        md.update(NONCE);
        md.update(stage2);
        byte[] expected = xor(stage1, md.digest());

        assertThat(Scramble.nativePassword("secret", NONCE)).isEqualTo(expected)
                .isEqualTo(HexFormat.of().parseHex("b32bb3a583e1340c0a1108d58b1be49781ad8c2f"));
    }

    @Test
    void cachingSha2PasswordMatchesAFixedVector() throws Exception {
        byte[] stage1 = MessageDigest.getInstance("SHA-256").digest(utf8("secret"));
        byte[] stage2 = MessageDigest.getInstance("SHA-256").digest(stage1);
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        md.update(stage2);
        md.update(NONCE);
        byte[] expected = xor(stage1, md.digest());

        assertThat(Scramble.cachingSha2Password("secret", NONCE)).isEqualTo(expected).isEqualTo(HexFormat.of()
                .parseHex("746ebe205d56a0707acb3e796e834e0dd7b1d61743b26bd5202c7a623230c7c9"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"a", "secret", "p@ss w0rd!", "pässwörd ∑", "a-very-long-password-that-goes-on-and-on-and-on"})
    void bothScramblesFollowTheirDefinitions(String password) throws Exception {
        byte[] nonce = Scramble.nonce();

        assertThat(Scramble.nativePassword(password, nonce)).hasSize(20)
                .isEqualTo(nativeByDefinition(password, nonce));
        assertThat(Scramble.cachingSha2Password(password, nonce)).hasSize(32)
                .isEqualTo(sha2ByDefinition(password, nonce));
    }

    @Test
    void aNonceWithTheGreetingsTrailingNulScramblesLikeTheTwentyBytes() {
        // Some servers send auth-plugin-data as 21 bytes, the last a NUL; only the first 20 count.
        byte[] withNul = Arrays.copyOf(NONCE, 21);

        assertThat(Scramble.nativePassword("secret", withNul)).isEqualTo(Scramble.nativePassword("secret", NONCE));
        assertThat(Scramble.cachingSha2Password("secret", withNul))
                .isEqualTo(Scramble.cachingSha2Password("secret", NONCE));
    }

    @Test
    void anEmptyPasswordScramblesToNothing() {
        assertThat(Scramble.nativePassword("", NONCE)).isEmpty();
        assertThat(Scramble.nativePassword(null, NONCE)).isEmpty();
        assertThat(Scramble.cachingSha2Password("", NONCE)).isEmpty();
        assertThat(Scramble.cachingSha2Password(null, NONCE)).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {MYSQL_NATIVE_PASSWORD, CACHING_SHA2_PASSWORD})
    void verifyAcceptsTheRightPasswordOnly(String plugin) throws Exception {
        byte[] right = plugin.equals(MYSQL_NATIVE_PASSWORD)
                ? nativeByDefinition("secret", NONCE) : sha2ByDefinition("secret", NONCE);
        byte[] wrong = plugin.equals(MYSQL_NATIVE_PASSWORD)
                ? nativeByDefinition("Secret", NONCE) : sha2ByDefinition("Secret", NONCE);
        byte[] otherNonce = NONCE.clone();
        otherNonce[0] = 99;

        assertThat(Scramble.verify(plugin, "secret", NONCE, right)).isTrue();
        assertThat(Scramble.verify(plugin, "secret", NONCE, wrong)).isFalse();
        assertThat(Scramble.verify(plugin, "secret", otherNonce, right)).as("replayed on another nonce").isFalse();
        assertThat(Scramble.verify(plugin, "secret", NONCE, new byte[0])).as("no password sent").isFalse();
        assertThat(Scramble.verify(plugin, "secret", NONCE, new byte[] {0})).isFalse();
        assertThat(Scramble.verify(plugin, "secret", NONCE, Arrays.copyOf(right, right.length - 1))).isFalse();
    }

    @Test
    void verifyRejectsAScrambleMadeForTheOtherPlugin() throws Exception {
        assertThat(Scramble.verify(MYSQL_NATIVE_PASSWORD, "secret", NONCE, sha2ByDefinition("secret", NONCE)))
                .isFalse();
        assertThat(Scramble.verify(CACHING_SHA2_PASSWORD, "secret", NONCE, nativeByDefinition("secret", NONCE)))
                .isFalse();
    }

    @Test
    void verifyRejectsAnUnknownPlugin() throws Exception {
        assertThat(Scramble.verify("sha256_password", "secret", NONCE, nativeByDefinition("secret", NONCE)))
                .isFalse();
        assertThat(Scramble.verify("mysql_clear_password", "secret", NONCE, utf8("secret"))).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {MYSQL_NATIVE_PASSWORD, CACHING_SHA2_PASSWORD})
    void anEmptyPasswordIsProvenByAnEmptyResponseOrASingleNul(String plugin) throws Exception {
        assertThat(Scramble.verify(plugin, "", NONCE, new byte[0])).isTrue();
        assertThat(Scramble.verify(plugin, "", NONCE, new byte[] {0})).isTrue();
        assertThat(Scramble.verify(plugin, "", NONCE, new byte[] {1})).isFalse();
        assertThat(Scramble.verify(plugin, "", NONCE, new byte[] {0, 0})).isFalse();
        assertThat(Scramble.verify(plugin, "", NONCE, nativeByDefinition("x", NONCE))).isFalse();
    }

    @Test
    void noncesAreTwentyBytesFrom1To127AndFresh() {
        Set<String> seen = new HashSet<>();
        boolean[] valueSeen = new boolean[128];
        for (int n = 0; n < 2000; n++) {
            byte[] nonce = Scramble.nonce();
            assertThat(nonce).hasSize(Scramble.NONCE_LENGTH).hasSize(20);
            for (byte b : nonce) {
                assertThat((int) b).isBetween(1, 127);
                valueSeen[b] = true;
            }
            assertThat(seen.add(HexFormat.of().formatHex(nonce))).as("nonce repeated").isTrue();
        }
        for (int v = 1; v <= 127; v++) {
            assertThat(valueSeen[v]).as("byte %d never drawn in 40,000", v).isTrue();
        }
    }

    /** Issue #39: the holder of SHA1(SHA1(pw)) recovers SHA1(pw) from a scramble, and it logs in like the password. */
    @Test
    void theStoredHashRecoversTheStageOneHashThatLogsInLikeThePassword() {
        byte[] nonce = Scramble.nonce();
        byte[] response = Scramble.nativePassword("s3cret", nonce);
        byte[] stage2 = Scramble.nativeStage2("s3cret".getBytes(StandardCharsets.UTF_8));
        byte[] stage1 = Scramble.recoverNativeStage1(stage2, nonce, response);
        assertThat(stage1).isNotNull();
        byte[] otherNonce = Scramble.nonce();
        assertThat(Scramble.nativeFromStage1(stage1, otherNonce))
                .isEqualTo(Scramble.nativePassword("s3cret", otherNonce));
        assertThat(Scramble.recoverNativeStage1(stage2, nonce,
                Scramble.nativePassword("wrong", nonce))).isNull();
    }
}
