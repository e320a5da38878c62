package io.sluice.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.protocol.Scramble;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.util.Base64;
import javax.crypto.Cipher;
import org.junit.jupiter.api.Test;

class RsaKeyPairTest {

    private final RsaKeyPair server = new RsaKeyPair();

    @Test
    void anEncryptedPasswordDecryptsToThePasswordAndItsNulXoredWithTheNonce() throws Exception {
        byte[] nonce = Scramble.nonce();
        String pem = new String(server.publicKeyPem(), StandardCharsets.US_ASCII);

        byte[] encrypted = RsaKeyPair.encryptPassword("sécret", nonce, pem);

        assertThat(encrypted).hasSize(server.encryptedLength());
        byte[] secret = server.decrypt(encrypted);
        for (int i = 0; i < secret.length; i++) {
            secret[i] ^= nonce[i % nonce.length];
        }
        assertThat(secret).isEqualTo("sécret\0".getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void thePaddingIsOaepWithSha1AsMySqlReadsIt() throws Exception {
        // The proxy's own key pair would also take PKCS#1; a key of the test's own, read with OAEP alone, tells.
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        KeyPair mysql = generator.generateKeyPair();
        String pem = "-----BEGIN PUBLIC KEY-----\n"
                + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(mysql.getPublic().getEncoded())
                + "\n-----END PUBLIC KEY-----\n";
        byte[] nonce = Scramble.nonce();

        byte[] encrypted = RsaKeyPair.encryptPassword("secret", nonce, pem);

        Cipher oaep = Cipher.getInstance("RSA/ECB/OAEPWithSHA-1AndMGF1Padding");
        oaep.init(Cipher.DECRYPT_MODE, mysql.getPrivate());
        byte[] secret = oaep.doFinal(encrypted);
        assertThat(secret).hasSize("secret\0".length());
        assertThat(secret[6] ^ nonce[6]).as("the NUL that ends the password").isZero();
    }

    @Test
    void aKeyThatIsNotPemIsRefused() {
        assertThatThrownBy(() -> RsaKeyPair.encryptPassword("secret", Scramble.nonce(),
                "-----BEGIN PUBLIC KEY-----\n%%%\n-----END PUBLIC KEY-----\n"))
                .isInstanceOf(GeneralSecurityException.class);
        assertThatThrownBy(() -> RsaKeyPair.encryptPassword("secret", Scramble.nonce(), "bm90IGEga2V5"))
                .isInstanceOf(GeneralSecurityException.class);
    }
}
