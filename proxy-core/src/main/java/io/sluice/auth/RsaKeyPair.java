package io.sluice.auth;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.util.Base64;
import javax.crypto.BadPaddingException;
import javax.crypto.Cipher;

/**
 * The RSA key pair caching_sha2_password uses on plain-text connections: a client asks for the public key and
 * sends its password encrypted with it. Generated in memory on first use, as nothing outside this process needs
 * it (clients fetch it over the protocol), and kept for the life of the proxy.
 */
public final class RsaKeyPair {
    private static final int KEY_BITS = 2048;
    /** What MySQL 8.0.5+ and its clients use for the password: OAEP with SHA-1 and MGF1. */
    private static final String OAEP = "RSA/ECB/OAEPWithSHA-1AndMGF1Padding";
    /** What Connector/J uses towards a server whose version is below 8.0.5 (Sluice in front of MariaDB says 5.5.5). */
    private static final String PKCS1 = "RSA/ECB/PKCS1Padding";

    private volatile KeyPair keyPair;
    private volatile byte[] publicKeyPem;

    /**
     * The key pair; the first call generates it (some tens of milliseconds, once per proxy, on whichever thread
     * first needs it).
     */
    private KeyPair keyPair() {
        KeyPair result = keyPair;
        if (result == null) {
            synchronized (this) {
                result = keyPair;
                if (result == null) {
                    try {
                        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
                        generator.initialize(KEY_BITS);
                        result = generator.generateKeyPair();
                    } catch (GeneralSecurityException e) {
                        throw new IllegalStateException("RSA is required by caching_sha2_password", e);
                    }
                    String base64 = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                            .encodeToString(result.getPublic().getEncoded());
                    publicKeyPem = ("-----BEGIN PUBLIC KEY-----\n" + base64 + "\n-----END PUBLIC KEY-----\n")
                            .getBytes(StandardCharsets.US_ASCII);
                    keyPair = result;
                }
            }
        }
        return result;
    }

    /** The public key in PEM (X.509 SubjectPublicKeyInfo), as MySQL sends it. */
    public byte[] publicKeyPem() {
        keyPair();
        return publicKeyPem.clone();
    }

    /** The size of one encrypted block: what an encrypted password's length must be. */
    public int encryptedLength() {
        return KEY_BITS / 8;
    }

    /**
     * Decrypts what a client encrypted with the public key, with OAEP padding or, failing that, PKCS#1 v1.5. Whether
     * the padding was right is never told to the client: either way a wrong password gets the same access denied.
     *
     * @throws GeneralSecurityException when it was not encrypted with this key
     */
    public byte[] decrypt(byte[] encrypted) throws GeneralSecurityException {
        try {
            return decrypt(OAEP, encrypted);
        } catch (BadPaddingException e) {
            return decrypt(PKCS1, encrypted);
        }
    }

    private byte[] decrypt(String transformation, byte[] encrypted) throws GeneralSecurityException {
        Cipher cipher = Cipher.getInstance(transformation);
        cipher.init(Cipher.DECRYPT_MODE, keyPair().getPrivate());
        return cipher.doFinal(encrypted);
    }
}
