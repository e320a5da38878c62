package io.sluice.config;

/**
 * The client-facing side of Sluice.
 *
 * @param address the address to listen on
 * @param port the port to listen on; 0 picks a free port (useful when embedding)
 * @param workerThreads event-loop threads shared by client and backend sockets; 0 means one per CPU core
 * @param connBufferSize bytes that may queue towards a slow client before Sluice stops reading from its backend
 * @param maxConnections the most client connections at once; further ones get ERR 1040; 0 means no limit
 * @param serverVersion the version string clients see; {@code null} uses the backend's own
 * @param maxPacketSize the largest command a client may send, in bytes, across split frames
 * @param transport the Netty transport
 * @param tls TLS towards clients
 * @param handshakeTimeoutMilliseconds how long a client may take from connecting to logged in; 0 means no limit
 * @param idleTimeoutMilliseconds how long a logged-in client may stay silent between commands before it is
 *     disconnected (ERR 4031); 0 means no limit
 * @param loginBackoff how repeated failed logins from one address are slowed down
 * @param netReadTimeoutMilliseconds how long a logged-in client may take to send one frame of a command, from its
 *     first byte to its last, before it is disconnected (ERR 1159); MySQL's {@code net_read_timeout}. 0 means no
 *     limit
 * @param proxyProtocol which load balancers may name the client with a PROXY protocol header
 */
public record ServerConfig(
        String address,
        int port,
        int workerThreads,
        int connBufferSize,
        int maxConnections,
        String serverVersion,
        int maxPacketSize,
        Transport transport,
        TlsConfig tls,
        long handshakeTimeoutMilliseconds,
        long idleTimeoutMilliseconds,
        LoginBackoff loginBackoff,
        long netReadTimeoutMilliseconds,
        ProxyProtocol proxyProtocol) {

    public static final String DEFAULT_ADDRESS = "0.0.0.0";
    public static final int DEFAULT_PORT = 3307;
    public static final int DEFAULT_CONN_BUFFER_SIZE = 32 * 1024;
    public static final int DEFAULT_MAX_CONNECTIONS = 0;
    /**
     * 1 GiB, MySQL's own ceiling for max_allowed_packet: Sluice never buffers a whole command, so the backend's
     * max_allowed_packet is the limit that normally applies, and this one only bounds what a client may stream.
     */
    public static final int DEFAULT_MAX_PACKET_SIZE = 1024 * 1024 * 1024;
    /** MySQL's {@code connect_timeout} default: long enough for a TLS handshake over a slow link. */
    public static final long DEFAULT_HANDSHAKE_TIMEOUT_MILLISECONDS = 10_000;
    /**
     * Off: the backend's own {@code wait_timeout} already ends an idle session's backend connection, and the check
     * costs a handler in every client pipeline.
     */
    public static final long DEFAULT_IDLE_TIMEOUT_MILLISECONDS = 0;
    /**
     * MySQL's {@code net_read_timeout} default, 30 s: a client that has begun a command finishes sending a frame of
     * it (16 MiB at most) within that, unless it stalls or drips it byte by byte to hold the session.
     */
    public static final long DEFAULT_NET_READ_TIMEOUT_MILLISECONDS = 30_000;

    public ServerConfig {
        address = address == null ? DEFAULT_ADDRESS : address;
        transport = transport == null ? Transport.AUTO : transport;
        tls = tls == null ? TlsConfig.defaults() : tls;
        loginBackoff = loginBackoff == null ? LoginBackoff.defaults() : loginBackoff;
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port: " + port + " (expected: 0..65535)");
        }
        if (workerThreads < 0) {
            throw new IllegalArgumentException("workerThreads: " + workerThreads + " (expected: >= 0)");
        }
        if (connBufferSize < 1024) {
            throw new IllegalArgumentException("connBufferSize: " + connBufferSize + " (expected: >= 1024)");
        }
        if (maxConnections < 0) {
            throw new IllegalArgumentException("maxConnections: " + maxConnections + " (expected: >= 0)");
        }
        if (maxPacketSize < 1024) {
            throw new IllegalArgumentException("maxPacketSize: " + maxPacketSize + " (expected: >= 1024)");
        }
        if (handshakeTimeoutMilliseconds < 0) {
            throw new IllegalArgumentException("handshakeTimeoutMilliseconds: " + handshakeTimeoutMilliseconds
                    + " (expected: >= 0)");
        }
        if (idleTimeoutMilliseconds < 0) {
            throw new IllegalArgumentException("idleTimeoutMilliseconds: " + idleTimeoutMilliseconds
                    + " (expected: >= 0)");
        }
        if (netReadTimeoutMilliseconds < 0) {
            throw new IllegalArgumentException("netReadTimeoutMilliseconds: " + netReadTimeoutMilliseconds
                    + " (expected: >= 0)");
        }
        if (proxyProtocol == null) {
            proxyProtocol = ProxyProtocol.off();
        }
    }

    /** Without PROXY protocol. */
    public ServerConfig(String address, int port, int workerThreads, int connBufferSize, int maxConnections,
            String serverVersion, int maxPacketSize, Transport transport, TlsConfig tls,
            long handshakeTimeoutMilliseconds, long idleTimeoutMilliseconds, LoginBackoff loginBackoff,
            long netReadTimeoutMilliseconds) {
        this(address, port, workerThreads, connBufferSize, maxConnections, serverVersion, maxPacketSize, transport,
                tls, handshakeTimeoutMilliseconds, idleTimeoutMilliseconds, loginBackoff, netReadTimeoutMilliseconds,
                ProxyProtocol.off());
    }

    /** Every setting but the net read timeout, which is at its default, and PROXY protocol, off. */
    public ServerConfig(String address, int port, int workerThreads, int connBufferSize, int maxConnections,
            String serverVersion, int maxPacketSize, Transport transport, TlsConfig tls,
            long handshakeTimeoutMilliseconds, long idleTimeoutMilliseconds, LoginBackoff loginBackoff) {
        this(address, port, workerThreads, connBufferSize, maxConnections, serverVersion, maxPacketSize, transport,
                tls, handshakeTimeoutMilliseconds, idleTimeoutMilliseconds, loginBackoff,
                DEFAULT_NET_READ_TIMEOUT_MILLISECONDS);
    }

    /** The listener settings of the first version, every security setting at its default. */
    public ServerConfig(String address, int port, int workerThreads, int connBufferSize, int maxConnections,
            String serverVersion, int maxPacketSize, Transport transport) {
        this(address, port, workerThreads, connBufferSize, maxConnections, serverVersion, maxPacketSize, transport,
                TlsConfig.defaults(), DEFAULT_HANDSHAKE_TIMEOUT_MILLISECONDS, DEFAULT_IDLE_TIMEOUT_MILLISECONDS,
                LoginBackoff.defaults());
    }

    /** Every key at its default. */
    public static ServerConfig defaults() {
        return new ServerConfig(DEFAULT_ADDRESS, DEFAULT_PORT, 0, DEFAULT_CONN_BUFFER_SIZE, DEFAULT_MAX_CONNECTIONS,
                null, DEFAULT_MAX_PACKET_SIZE, Transport.AUTO);
    }

    public ServerConfig withPort(int newPort) {
        return new ServerConfig(address, newPort, workerThreads, connBufferSize, maxConnections, serverVersion,
                maxPacketSize, transport, tls, handshakeTimeoutMilliseconds, idleTimeoutMilliseconds, loginBackoff,
                netReadTimeoutMilliseconds, proxyProtocol);
    }

    public ServerConfig withAddress(String newAddress) {
        return new ServerConfig(newAddress, port, workerThreads, connBufferSize, maxConnections, serverVersion,
                maxPacketSize, transport, tls, handshakeTimeoutMilliseconds, idleTimeoutMilliseconds, loginBackoff,
                netReadTimeoutMilliseconds, proxyProtocol);
    }

    public ServerConfig withTls(TlsConfig newTls) {
        return new ServerConfig(address, port, workerThreads, connBufferSize, maxConnections, serverVersion,
                maxPacketSize, transport, newTls, handshakeTimeoutMilliseconds, idleTimeoutMilliseconds, loginBackoff,
                netReadTimeoutMilliseconds, proxyProtocol);
    }

    public ServerConfig withServerVersion(String newServerVersion) {
        return new ServerConfig(address, port, workerThreads, connBufferSize, maxConnections, newServerVersion,
                maxPacketSize, transport, tls, handshakeTimeoutMilliseconds, idleTimeoutMilliseconds, loginBackoff,
                netReadTimeoutMilliseconds, proxyProtocol);
    }

    /** The same listener with other timeouts and login back-off. */
    public ServerConfig withHardening(long newHandshakeTimeoutMilliseconds, long newIdleTimeoutMilliseconds,
            LoginBackoff newLoginBackoff) {
        return new ServerConfig(address, port, workerThreads, connBufferSize, maxConnections, serverVersion,
                maxPacketSize, transport, tls, newHandshakeTimeoutMilliseconds, newIdleTimeoutMilliseconds,
                newLoginBackoff, netReadTimeoutMilliseconds, proxyProtocol);
    }

    /** The same listener with another net read timeout (0: none). */
    public ServerConfig withNetReadTimeout(long newNetReadTimeoutMilliseconds) {
        return new ServerConfig(address, port, workerThreads, connBufferSize, maxConnections, serverVersion,
                maxPacketSize, transport, tls, handshakeTimeoutMilliseconds, idleTimeoutMilliseconds, loginBackoff,
                newNetReadTimeoutMilliseconds, proxyProtocol);
    }

    /** The same listener taking PROXY protocol headers from {@code newProxyProtocol}'s trusted networks. */
    public ServerConfig withProxyProtocol(ProxyProtocol newProxyProtocol) {
        return new ServerConfig(address, port, workerThreads, connBufferSize, maxConnections, serverVersion,
                maxPacketSize, transport, tls, handshakeTimeoutMilliseconds, idleTimeoutMilliseconds, loginBackoff,
                netReadTimeoutMilliseconds, newProxyProtocol);
    }

    /** The number of event-loop threads actually used. */
    public int effectiveWorkerThreads() {
        return workerThreads > 0 ? workerThreads : Runtime.getRuntime().availableProcessors();
    }
}
