package io.sluice.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.protocol.Scramble;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class CredentialTest {

    private static final byte[] NONCE = Scramble.nonce();

    /** {@code SELECT PASSWORD('secret')} on MariaDB 10.11. */
    private static final String SECRET_NATIVE = "*14E65567ABDB5135D0CFD9A70B3032C179A49EE7";

    @Test
    void nativeHashIsWhatMariaDbStores() {
        assertThat(PasswordHash.nativeHash("secret")).isEqualTo(SECRET_NATIVE);
    }

    @Test
    void nativeHashChecksTheNativeScrambleAndTheCleartextButNoSha2Scramble() {
        Credential credential = Credential.of(null, SECRET_NATIVE.toLowerCase());
        assertThat(credential.plugin()).isEqualTo(Scramble.MYSQL_NATIVE_PASSWORD);
        assertThat(credential.verifyNative(NONCE, Scramble.nativePassword("secret", NONCE))).isTrue();
        assertThat(credential.verifyNative(NONCE, Scramble.nativePassword("Secret", NONCE))).isFalse();
        assertThat(credential.verifyNative(NONCE, new byte[0])).isFalse();
        assertThat(credential.verifyCleartext(bytes("secret"))).isTrue();
        assertThat(credential.verifyCleartext(bytes("secret "))).isFalse();
        assertThat(credential.sha2Stage2()).isNull();
    }

    @Test
    void cachingSha2HashChecksOnlyTheCleartext() {
        String hash = PasswordHash.cachingSha2Hash("secret");
        assertThat(hash).startsWith("$A$005$").hasSize(70);
        Credential credential = Credential.of(null, hash);
        assertThat(credential.plugin()).isEqualTo(Scramble.CACHING_SHA2_PASSWORD);
        assertThat(credential.verifyCleartext(bytes("secret"))).isTrue();
        assertThat(credential.verifyCleartext(bytes("secreT"))).isFalse();
        assertThat(credential.verifyNative(NONCE, Scramble.nativePassword("secret", NONCE))).isFalse();
        assertThat(credential.sha2Stage2()).isNull();
    }

    @Test
    void cachingSha2HashIsSha256CryptOfTheSaltAsMySqlLaysItOut() {
        String salt = "abcdefghijklmnopqrst";
        String hash = PasswordHash.cachingSha2Hash("secret", salt, 5000);
        assertThat(hash).isEqualTo("$A$005$" + salt + Sha256Crypt.digest(bytes("secret"), bytes(salt), 5000));
        assertThat(PasswordHash.cachingSha2Hash("secret", salt, 10_000)).startsWith("$A$00A$");
    }

    @Test
    void hexFormOfSha2HashAsShowCreateUserPrintsIt() {
        String hash = PasswordHash.cachingSha2Hash("secret");
        String hex = "0x" + HexFormat.of().formatHex(hash.getBytes(StandardCharsets.ISO_8859_1));
        assertThat(Credential.of(null, hex).verifyCleartext(bytes("secret"))).isTrue();
    }

    @Test
    void plainPasswordChecksEverything() {
        Credential credential = Credential.of("secret", null);
        assertThat(credential.plugin()).isNull();
        assertThat(credential.verifyNative(NONCE, Scramble.nativePassword("secret", NONCE))).isTrue();
        assertThat(Scramble.checkCachingSha2(credential.sha2Stage2(), NONCE,
                Scramble.cachingSha2Password("secret", NONCE))).isTrue();
        assertThat(Scramble.checkCachingSha2(credential.sha2Stage2(), NONCE,
                Scramble.cachingSha2Password("secrets", NONCE))).isFalse();
        assertThat(credential.verifyCleartext(bytes("secret"))).isTrue();
        assertThat(Credential.of("", null).isEmpty()).isTrue();
        assertThat(credential.toString()).doesNotContain("secret");
    }

    @Test
    void refusesWhatIsNoMySqlHashWithoutEchoingIt() {
        for (String bad : new String[] {"secret", "*14E65567", "*ZZE65567ABDB5135D0CFD9A70B3032C179A49EE7",
            "$A$005$tooshort", "$B$005$abcdefghijklmnopqrst0123456789012345678901234567890123456789012", "0xZZ"}) {
            assertThatThrownBy(() -> Credential.of(null, bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("passwordHash: not a MySQL password hash")
                    .message().doesNotContain(bad);
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
