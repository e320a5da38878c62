package io.sluice.tls;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A CA and a server certificate signed by it, made by Sluice when TLS is on and no certificate is configured, as
 * MySQL 8 does ({@code auto_generate_certs}). Clients that verify the server ({@code sslMode=VERIFY_CA}) trust
 * {@code ca.pem}.
 *
 * <p>Keys are ECDSA P-256: generated in milliseconds (RSA 2048 takes a hundred times longer, at every start of an
 * embedded proxy), and cheaper to sign with during every TLS handshake. The files carry MySQL's names.
 *
 * @param ca the CA certificate
 * @param caKey the CA's private key, written to {@code ca-key.pem} so an operator can sign client certificates
 * @param serverCertificate the server certificate, signed by {@code ca}
 * @param serverKey the server certificate's private key
 */
public record GeneratedCertificates(X509Certificate ca, PrivateKey caKey, X509Certificate serverCertificate,
        PrivateKey serverKey) {

    public static final String CA_FILE = "ca.pem";
    public static final String CA_KEY_FILE = "ca-key.pem";
    public static final String SERVER_CERT_FILE = "server-cert.pem";
    public static final String SERVER_KEY_FILE = "server-key.pem";

    private static final List<String> FILES = List.of(CA_FILE, CA_KEY_FILE, SERVER_CERT_FILE, SERVER_KEY_FILE);
    private static final Duration VALIDITY = Duration.ofDays(3650); // MySQL's auto-generated certificates: 10 years
    private static final String SIGNATURE = "SHA256withECDSA";

    /** A fresh CA and server certificate, in memory. */
    public static GeneratedCertificates generate() {
        try {
            KeyPair caKeys = ecKeyPair();
            KeyPair serverKeys = ecKeyPair();
            X500Name caName = new X500Name("CN=Sluice_Auto_Generated_CA_Certificate");
            Instant now = Instant.now();
            JcaX509ExtensionUtils extensions = new JcaX509ExtensionUtils();

            X509v3CertificateBuilder caBuilder = new JcaX509v3CertificateBuilder(caName, serial(),
                    Date.from(now.minus(Duration.ofDays(1))), Date.from(now.plus(VALIDITY)), caName,
                    caKeys.getPublic())
                    .addExtension(Extension.basicConstraints, true, new BasicConstraints(0))
                    .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign))
                    .addExtension(Extension.subjectKeyIdentifier, false,
                            extensions.createSubjectKeyIdentifier(caKeys.getPublic()));
            X509Certificate ca = sign(caBuilder, caKeys.getPrivate());

            // localhost and the loopback addresses, so VERIFY_IDENTITY works for local clients; anything else needs
            // a certificate of the operator's own.
            GeneralNames names = new GeneralNames(new GeneralName[] {
                new GeneralName(GeneralName.dNSName, "localhost"),
                new GeneralName(GeneralName.iPAddress, "127.0.0.1"),
                new GeneralName(GeneralName.iPAddress, "::1"),
            });
            X509v3CertificateBuilder serverBuilder = new JcaX509v3CertificateBuilder(ca, serial(),
                    Date.from(now.minus(Duration.ofDays(1))), Date.from(now.plus(VALIDITY)),
                    new X500Name("CN=Sluice_Auto_Generated_Server_Certificate"), serverKeys.getPublic())
                    .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
                    .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature))
                    .addExtension(Extension.extendedKeyUsage, false,
                            new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth))
                    .addExtension(Extension.subjectAlternativeName, false, names)
                    .addExtension(Extension.authorityKeyIdentifier, false,
                            extensions.createAuthorityKeyIdentifier(ca));
            X509Certificate server = sign(serverBuilder, caKeys.getPrivate());
            return new GeneratedCertificates(ca, caKeys.getPrivate(), server, serverKeys.getPrivate());
        } catch (GeneralSecurityException | OperatorCreationException | IOException e) {
            throw new IllegalStateException("cannot generate TLS certificates: " + e.getMessage(), e);
        }
    }

    /**
     * Makes sure {@code directory} holds generated certificates: reuses them when all four files are there, writes
     * new ones when none is. Some but not all of them is refused rather than overwritten.
     *
     * @return the paths of {@code server-cert.pem}, {@code server-key.pem} and {@code ca.pem}
     * @throws IOException when the files cannot be written, or only some of them exist
     */
    public static Paths ensureIn(Path directory) throws IOException {
        Paths paths = new Paths(directory.resolve(SERVER_CERT_FILE), directory.resolve(SERVER_KEY_FILE),
                directory.resolve(CA_FILE));
        List<String> present = new ArrayList<>();
        for (String file : FILES) {
            if (Files.exists(directory.resolve(file))) {
                present.add(file);
            }
        }
        if (present.size() == FILES.size()) {
            return paths;
        }
        if (!present.isEmpty()) {
            throw new IOException(directory + " has " + String.join(", ", present) + " but not all of "
                    + String.join(", ", FILES) + ": remove them to have new ones generated, or configure"
                    + " server.tls.certFile and keyFile");
        }
        GeneratedCertificates generated = generate();
        Files.createDirectories(directory);
        write(directory.resolve(CA_KEY_FILE), pem("PRIVATE KEY", generated.caKey().getEncoded()), true);
        write(directory.resolve(SERVER_KEY_FILE), pem("PRIVATE KEY", generated.serverKey().getEncoded()), true);
        try {
            write(directory.resolve(CA_FILE), pem("CERTIFICATE", generated.ca().getEncoded()), false);
            write(directory.resolve(SERVER_CERT_FILE), pem("CERTIFICATE", generated.serverCertificate().getEncoded()),
                    false);
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot encode the generated certificates", e);
        }
        return paths;
    }

    /**
     * Whether {@code directory} is an existing directory that holds none of the generated files and cannot take them:
     * a read-only conf dir, such as a Kubernetes ConfigMap or a read-only image. Certificates are then kept in memory
     * rather than refused, since nothing in such a directory could ever be generated.
     */
    public static boolean cannotBeKeptIn(Path directory) {
        return Files.isDirectory(directory) && !Files.isWritable(directory)
                && FILES.stream().noneMatch(file -> Files.exists(directory.resolve(file)));
    }

    /** Where generated certificates are on disk. */
    public record Paths(Path certFile, Path keyFile, Path caFile) {
    }

    /** The CA certificate in PEM, for clients to trust. */
    public String caPem() {
        try {
            return pem("CERTIFICATE", ca.getEncoded());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    static String pem(String type, byte[] der) {
        String base64 = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der);
        return "-----BEGIN " + type + "-----\n" + base64 + "\n-----END " + type + "-----\n";
    }

    private static void write(Path file, String content, boolean secret) throws IOException {
        // CREATE_NEW: never replace a file another process (a second Sluice on the same conf dir) just wrote.
        try {
            Files.writeString(file, content, StandardCharsets.US_ASCII, StandardOpenOption.CREATE_NEW,
                    StandardOpenOption.WRITE);
        } catch (FileAlreadyExistsException e) {
            throw new IOException(file + " appeared while Sluice was generating it: start again", e);
        }
        if (secret) {
            try {
                Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
            } catch (UnsupportedOperationException e) {
                // not a POSIX file system: its own access rules apply
            }
        }
    }

    private static KeyPair ecKeyPair() throws GeneralSecurityException {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
        generator.initialize(new ECGenParameterSpec("secp256r1"));
        return generator.generateKeyPair();
    }

    private static BigInteger serial() {
        return new BigInteger(64, new SecureRandom()).abs().add(BigInteger.ONE);
    }

    private static X509Certificate sign(X509v3CertificateBuilder builder, PrivateKey key)
            throws OperatorCreationException, GeneralSecurityException {
        ContentSigner signer = new JcaContentSignerBuilder(SIGNATURE).build(key);
        return new JcaX509CertificateConverter().getCertificate(builder.build(signer));
    }
}
