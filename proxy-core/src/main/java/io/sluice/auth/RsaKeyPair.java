package io.sluice.auth;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyFactory;
import java.security.KeyPairGenerator;
import java.security.PublicKey;
import java.security.spec.InvalidKeySpecException;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;
import javax.crypto.BadPaddingException;
import javax.crypto.Cipher;

/**
 * The RSA key pair caching_sha2_password uses on plain-text connections: a client asks for the public key and
 * sends its password encrypted with it. Generated in memory on first use, as nothing outside this process needs
 * it (clients fetch it over the protocol), and kept for the life of the proxy.
 *
 * <p>The other side of the exchange, a client encrypting its password with a server's key, is
 * {@link #encryptPassword}: Sluice runs it towards backends and in replay, and the two sides share the padding.
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
     * What a client of caching_sha2_password sends in full authentication on a plain connection: the NUL-terminated
     * password XORed with the nonce (repeated), encrypted with the server's public key with OAEP (SHA-1, MGF1), as
     * MySQL 8.0.5+ and its clients do. MySQL reads it with the same padding; {@link #decrypt} also takes PKCS#1.
     *
     * @param password the password in clear
     * @param nonce the 20-byte nonce of the greeting or auth switch
     * @param publicKeyPem the server's key as it sends it: PEM, X.509 SubjectPublicKeyInfo
     * @throws GeneralSecurityException when the PEM holds no RSA public key, or the password is too long for it
     */
    public static byte[] encryptPassword(String password, byte[] nonce, String publicKeyPem)
            throws GeneralSecurityException {
        byte[] secret = (password + "\0").getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < secret.length; i++) {
            secret[i] ^= nonce[i % nonce.length];
        }
        Cipher cipher = Cipher.getInstance(OAEP);
        cipher.init(Cipher.ENCRYPT_MODE, publicKey(publicKeyPem));
        return cipher.doFinal(secret);
    }

    private static PublicKey publicKey(String pem) throws GeneralSecurityException {
        byte[] der;
        try {
            // The MIME decoder skips the line breaks between the PEM's lines of 64 characters.
            der = Base64.getMimeDecoder().decode(pem.replaceAll("-----[A-Z ]+-----", ""));
        } catch (IllegalArgumentException e) {
            throw new InvalidKeySpecException("the server's public key is not PEM: " + e.getMessage(), e);
        }
        return KeyFactory.getInstance("RSA").generatePublic(new X509EncodedKeySpec(der));
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
