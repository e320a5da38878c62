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
 */
public record ServerConfig(
        String address,
        int port,
        int workerThreads,
        int connBufferSize,
        int maxConnections,
        String serverVersion,
        int maxPacketSize,
        Transport transport) {

    public static final String DEFAULT_ADDRESS = "0.0.0.0";
    public static final int DEFAULT_PORT = 3307;
    public static final int DEFAULT_CONN_BUFFER_SIZE = 32 * 1024;
    public static final int DEFAULT_MAX_CONNECTIONS = 0;
    /**
     * 1 GiB, MySQL's own ceiling for max_allowed_packet: Sluice never buffers a whole command, so the backend's
     * max_allowed_packet is the limit that normally applies, and this one only bounds what a client may stream.
     */
    public static final int DEFAULT_MAX_PACKET_SIZE = 1024 * 1024 * 1024;

    public ServerConfig {
        address = address == null ? DEFAULT_ADDRESS : address;
        transport = transport == null ? Transport.AUTO : transport;
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
    }

    /** Every key at its default. */
    public static ServerConfig defaults() {
        return new ServerConfig(DEFAULT_ADDRESS, DEFAULT_PORT, 0, DEFAULT_CONN_BUFFER_SIZE, DEFAULT_MAX_CONNECTIONS,
                null, DEFAULT_MAX_PACKET_SIZE, Transport.AUTO);
    }

    public ServerConfig withPort(int newPort) {
        return new ServerConfig(address, newPort, workerThreads, connBufferSize, maxConnections, serverVersion,
                maxPacketSize, transport);
    }

    public ServerConfig withAddress(String newAddress) {
        return new ServerConfig(newAddress, port, workerThreads, connBufferSize, maxConnections, serverVersion,
                maxPacketSize, transport);
    }

    /** The number of event-loop threads actually used. */
    public int effectiveWorkerThreads() {
        return workerThreads > 0 ? workerThreads : Runtime.getRuntime().availableProcessors();
    }
}
