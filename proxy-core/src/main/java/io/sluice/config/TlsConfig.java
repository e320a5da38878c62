package io.sluice.config;

import java.nio.file.Path;
import java.util.List;

/**
 * TLS towards clients ({@code server.tls}). Clients ask for it with MySQL's SSLRequest; a session that does not is
 * plain text unless {@code requireSecureTransport} refuses it.
 *
 * <p>Without {@code certFile} and {@code keyFile} Sluice uses a CA and a server certificate it generated itself, as
 * MySQL 8 does: in {@code generatedDirectory} (the conf dir when the configuration came from config.yaml), created
 * at the first start and reused afterwards, or kept in memory only when there is no such directory.
 *
 * @param enabled whether clients may switch to TLS at all
 * @param certFile the server certificate chain (PEM), or {@code null} to use generated ones
 * @param keyFile the server's private key (PEM, PKCS#8 or PKCS#1), or {@code null} to use generated ones
 * @param caFile the CA certificates (PEM) client certificates must chain to; {@code null} with generated
 *     certificates means the generated CA
 * @param verifyClient whether clients must present a certificate signed by {@code caFile}
 * @param requireSecureTransport refuse plain-text sessions with ERR 3159
 * @param provider the TLS implementation
 * @param protocols the protocol versions offered, a subset of TLSv1.2 and TLSv1.3
 * @param generatedDirectory where generated certificates are kept; {@code null}: in memory only
 */
public record TlsConfig(
        boolean enabled,
        Path certFile,
        Path keyFile,
        Path caFile,
        VerifyClient verifyClient,
        boolean requireSecureTransport,
        Provider provider,
        List<String> protocols,
        Path generatedDirectory) {

    /** The protocol versions Sluice can speak: TLS 1.0 and 1.1 are deprecated (RFC 8996) and never offered. */
    public static final List<String> SUPPORTED_PROTOCOLS = List.of("TLSv1.3", "TLSv1.2");

    /** Whether client certificates are asked for; the names are Netty's {@code ClientAuth}. */
    public enum VerifyClient {
        /** No client certificate is asked for. */
        NONE,
        /** A certificate is asked for and checked when sent, but a client without one is accepted. */
        OPTIONAL,
        /** A client without a certificate signed by the CA fails the TLS handshake. */
        REQUIRE
    }

    /** The TLS implementation behind Netty's SslHandler. */
    public enum Provider {
        /** OpenSSL (BoringSSL from netty-tcnative) when it loads on this machine, else the JDK's. */
        AUTO,
        /** BoringSSL from netty-tcnative; refused at start where it does not load. */
        OPENSSL,
        /** The JDK's SSLEngine. */
        JDK
    }

    public TlsConfig {
        verifyClient = verifyClient == null ? VerifyClient.NONE : verifyClient;
        provider = provider == null ? Provider.AUTO : provider;
        protocols = protocols == null || protocols.isEmpty() ? SUPPORTED_PROTOCOLS : List.copyOf(protocols);
        for (String protocol : protocols) {
            if (!SUPPORTED_PROTOCOLS.contains(protocol)) {
                throw new IllegalArgumentException("protocols: " + protocol + " (expected: "
                        + String.join(" or ", SUPPORTED_PROTOCOLS) + ")");
            }
        }
        if ((certFile == null) != (keyFile == null)) {
            throw new IllegalArgumentException((certFile == null ? "certFile" : "keyFile")
                    + ": missing (expected: certFile and keyFile together, or neither to use generated ones)");
        }
        if (requireSecureTransport && !enabled) {
            throw new IllegalArgumentException("requireSecureTransport: true (expected: false while enabled is false)");
        }
        if (verifyClient != VerifyClient.NONE && certFile != null && caFile == null) {
            throw new IllegalArgumentException("caFile: missing (expected: the CA that signs client certificates when"
                    + " verifyClient is " + verifyClient + ")");
        }
    }

    /**
     * TLS offered with generated certificates kept in memory, no client certificates, plain text allowed: what
     * a configuration built in code gets.
     */
    public static TlsConfig defaults() {
        return new TlsConfig(true, null, null, null, VerifyClient.NONE, false, Provider.AUTO, SUPPORTED_PROTOCOLS,
                null);
    }

    /** No TLS: an SSLRequest is refused and CLIENT_SSL is not offered. */
    public static TlsConfig disabled() {
        return new TlsConfig(false, null, null, null, VerifyClient.NONE, false, Provider.AUTO, SUPPORTED_PROTOCOLS,
                null);
    }

    /** Whether the certificates are Sluice's own rather than configured files. */
    public boolean usesGeneratedCertificates() {
        return certFile == null;
    }

    public TlsConfig withGeneratedDirectory(Path directory) {
        return new TlsConfig(enabled, certFile, keyFile, caFile, verifyClient, requireSecureTransport, provider,
                protocols, directory);
    }

    public TlsConfig withRequireSecureTransport(boolean require) {
        return new TlsConfig(enabled, certFile, keyFile, caFile, verifyClient, require, provider, protocols,
                generatedDirectory);
    }
}
