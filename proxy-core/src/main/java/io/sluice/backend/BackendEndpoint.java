package io.sluice.backend;

import io.sluice.config.SslMode;
import io.sluice.tls.BackendTls;

/**
 * Where and as whom a backend connection logs in: what its pool knows of the data source when it opens the
 * connection. A config reload that changes credentials gives new connections a new endpoint; open ones keep theirs.
 *
 * @param dataSource the data source's name in config.yaml
 * @param tls TLS to the server, or {@code null} for sslMode DISABLED
 */
public record BackendEndpoint(String dataSource, String host, int port, String username, String password,
        SslMode sslMode, BackendTls tls) {

    /** {@code host:port}, for messages. */
    public String address() {
        return host + ":" + port;
    }

    @Override
    public String toString() {
        return dataSource + " (" + address() + ")"; // never the password
    }
}
