package io.sluice.tls;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import io.sluice.config.ConfigException;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.SslMode;
import io.sluice.config.TlsConfig;
import javax.net.ssl.SSLException;

/**
 * TLS towards one backend ({@code dataSources.<name>.sslMode}): the client {@link SslContext}, built once per data
 * source, and a handler for each connection that switches to TLS after its SSLRequest.
 */
public final class BackendTls {
    private final SslMode mode;
    private final SslContext context;

    private BackendTls(SslMode mode, SslContext context) {
        this.mode = mode;
        this.context = context;
    }

    /**
     * @return the context, or {@code null} when the data source's sslMode is DISABLED
     * @throws ConfigException when the CA file cannot be used
     */
    public static BackendTls create(DataSourceConfig dataSource) {
        SslMode mode = dataSource.sslMode();
        if (mode == SslMode.DISABLED) {
            return null;
        }
        SslContextBuilder builder = SslContextBuilder.forClient()
                .sslProvider(ServerTls.provider(TlsConfig.Provider.AUTO))
                .protocols(TlsConfig.SUPPORTED_PROTOCOLS)
                // Netty 4.2 checks the host name by default; only VERIFY_IDENTITY asks for that.
                .endpointIdentificationAlgorithm(mode == SslMode.VERIFY_IDENTITY ? "HTTPS" : null);
        if (!mode.verifiesCertificate()) {
            // PREFERRED and REQUIRED encrypt without checking who answers, as MySQL's client does in those modes.
            builder.trustManager(InsecureTrustManagerFactory.INSTANCE);
        } else if (dataSource.sslCa() != null) {
            builder.trustManager(dataSource.sslCa().toFile());
        } // else the JDK's trusted CAs
        try {
            return new BackendTls(mode, builder.build());
        } catch (SSLException | IllegalArgumentException e) {
            throw new ConfigException("dataSources." + dataSource.name() + ".sslCa: cannot be used: "
                    + ServerTls.rootMessage(e) + " (expected: PEM CA certificates)", e);
        }
    }

    public SslMode mode() {
        return mode;
    }

    /** A handler for one connection to {@code host:port} (the name VERIFY_IDENTITY checks the certificate for). */
    public SslHandler newHandler(ByteBufAllocator alloc, String host, int port) {
        SslHandler handler = context.newHandler(alloc, host, port);
        handler.setHandshakeTimeoutMillis(0); // the connection's login timeout covers the TLS handshake
        return handler;
    }
}
