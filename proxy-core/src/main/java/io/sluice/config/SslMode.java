package io.sluice.config;

/**
 * How Sluice protects its connections to one backend ({@code dataSources.<name>.sslMode}), with the meanings of
 * MySQL's {@code --ssl-mode} and Connector/J's {@code sslMode}.
 */
public enum SslMode {
    /** Plain text. */
    DISABLED,
    /** TLS when the server offers it, plain text otherwise; the certificate is not checked. */
    PREFERRED,
    /** TLS or no connection; the certificate is not checked. */
    REQUIRED,
    /** TLS, and the server certificate must chain to {@code sslCa} (or the JDK's trusted CAs). */
    VERIFY_CA,
    /** As VERIFY_CA, and the certificate must name the host of the data source's URL. */
    VERIFY_IDENTITY;

    /** Whether the server's certificate is checked against a CA. */
    public boolean verifiesCertificate() {
        return this == VERIFY_CA || this == VERIFY_IDENTITY;
    }
}
