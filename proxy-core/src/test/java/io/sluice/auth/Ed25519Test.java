package io.sluice.auth;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.security.KeyFactory;
import java.security.Signature;
import java.security.spec.EdECPrivateKeySpec;
import java.security.spec.NamedParameterSpec;
import java.util.Base64;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link Ed25519} against two independent implementations: Java's own Ed25519, for 32-byte secrets (RFC 8032's
 * seeds, the only ones it takes), and MariaDB's auth_ed25519, for a password (its stored public key).
 */
class Ed25519Test {

    @Test
    void signsAsJavasEd25519ForThirtyTwoByteSecrets() throws Exception {
        Random random = new Random(172);
        KeyFactory keys = KeyFactory.getInstance("Ed25519");
        for (int i = 0; i < 20; i++) {
            byte[] seed = new byte[32];
            random.nextBytes(seed);
            byte[] message = new byte[i * 7];
            random.nextBytes(message);
            Signature jdk = Signature.getInstance("Ed25519");
            jdk.initSign(keys.generatePrivate(new EdECPrivateKeySpec(NamedParameterSpec.ED25519, seed)));
            jdk.update(message);
            // Ed25519 is deterministic, and the public key is hashed into S: equal signatures, equal keys.
            assertThat(Ed25519.sign(seed, message)).isEqualTo(jdk.sign());
        }
    }

    /** RFC 8032 7.1, TEST 1: the empty message, its public key. */
    @Test
    void rfc8032TestVectorOne() {
        byte[] seed = hex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
        assertThat(Ed25519.publicKey(seed))
                .isEqualTo(hex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"));
        assertThat(Ed25519.sign(seed, new byte[0])).isEqualTo(hex("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e0"
                + "65224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"));
    }

    /** What MariaDB 10.11 stored for {@code IDENTIFIED VIA ed25519 USING PASSWORD('ed-pw')}. */
    @Test
    void derivesMariaDbsStoredKeyFromThePassword() {
        assertThat(Base64.getEncoder().withoutPadding().encodeToString(
                Ed25519.publicKey("ed-pw".getBytes(StandardCharsets.UTF_8))))
                .isEqualTo("24FjORYwAV6wiJLDpFI0doShISjOdPNUg1WR7eRAgqA");
    }

    private static byte[] hex(String s) {
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }
}
