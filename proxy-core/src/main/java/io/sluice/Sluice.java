package io.sluice;

import io.sluice.config.ProxyConfig;
import java.net.InetSocketAddress;

/**
 * A running Sluice proxy. The embedding entry point:
 *
 * <pre>{@code
 * ProxyConfig config = ProxyConfig.builder()
 *         .dataSource("ds_0", "jdbc:mysql://127.0.0.1:3306/test", "root", "")
 *         .user("app", "secret")
 *         .port(0)
 *         .build();
 * try (Sluice sluice = Sluice.start(config)) {
 *     int port = sluice.port(); // clients connect here
 * }
 * }</pre>
 */
public final class Sluice implements AutoCloseable {

    private Sluice() {
    }

    /**
     * Starts a proxy and returns once it accepts connections.
     *
     * @throws io.sluice.config.ConfigException when the configuration cannot be served (port taken, no backend
     *     reachable)
     */
    public static Sluice start(ProxyConfig config) {
        throw new UnsupportedOperationException("being written");
    }

    /** The port clients connect to. */
    public int port() {
        throw new UnsupportedOperationException("being written");
    }

    /** The address the listener is bound to. */
    public InetSocketAddress localAddress() {
        throw new UnsupportedOperationException("being written");
    }

    /** Closes the listener, every client session and every backend connection. */
    @Override
    public void close() {
    }
}
