package io.sluice.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;

/** What JDBC drivers need to verify a server against a CA in PEM: a PKCS#12 trust store, and their URL options. */
public final class TlsFiles {
    public static final String STORE_PASSWORD = "changeit";

    private TlsFiles() {
    }

    /** Writes a PKCS#12 trust store holding the certificate of {@code caPem} next to it; returns its path. */
    public static Path truststore(Path caPem) {
        Path store = caPem.resolveSibling(caPem.getFileName() + ".p12");
        try (InputStream in = Files.newInputStream(caPem); OutputStream out = Files.newOutputStream(store)) {
            X509Certificate ca = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
            KeyStore keyStore = KeyStore.getInstance("PKCS12");
            keyStore.load(null, null);
            keyStore.setCertificateEntry("ca", ca);
            keyStore.store(out, STORE_PASSWORD.toCharArray());
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException("trust store for " + caPem, e);
        }
        return store;
    }

    /** MySQL Connector/J options for TLS that verifies the server's certificate against {@code caPem}. */
    public static String mysqlVerifyCa(Path caPem) {
        return "sslMode=VERIFY_CA&trustCertificateKeyStoreUrl=" + truststore(caPem).toUri()
                + "&trustCertificateKeyStoreType=PKCS12&trustCertificateKeyStorePassword=" + STORE_PASSWORD;
    }

    /** MariaDB Connector/J options for TLS that verifies the server's certificate against {@code caPem}. */
    public static String mariaDbVerifyCa(Path caPem) {
        return "sslMode=verify-ca&serverSslCert=" + caPem.toAbsolutePath();
    }
}
