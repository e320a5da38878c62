package io.sluice.backend;

/**
 * What a backend announced in its greeting, read once at start to present the same face to clients.
 *
 * @param serverVersion the version string, e.g. {@code 5.5.5-10.11.19-MariaDB}
 * @param capabilities the server's capability flags
 * @param collationId the server's default collation id
 * @param mariaDbCapabilities MariaDB's extended capabilities, 0 for MySQL
 */
public record BackendServerInfo(String serverVersion, int capabilities, int collationId, int mariaDbCapabilities) {

    public BackendServerInfo(String serverVersion, int capabilities, int collationId) {
        this(serverVersion, capabilities, collationId, 0);
    }

    /**
     * What this server and {@code other} both offer, with this one's version string and collation: what clients may
     * be offered when their sessions can land on either.
     */
    public BackendServerInfo sharedWith(BackendServerInfo other) {
        return new BackendServerInfo(serverVersion, capabilities & other.capabilities, collationId,
                mariaDbCapabilities & other.mariaDbCapabilities);
    }

    /**
     * What Sluice presents while no backend has answered yet (it started with every backend down): the
     * capabilities every MySQL 5.7+ and MariaDB 10.2+ server offers, as a MySQL server, utf8mb4. Logins fail until a
     * backend is up, and the first backend that answers replaces it.
     */
    public static BackendServerInfo provisional() {
        return new BackendServerInfo("8.0.36-Sluice", io.sluice.protocol.Capabilities.PROXY_SUPPORTED
                | io.sluice.protocol.Capabilities.CLIENT_LONG_PASSWORD, 45);
    }

    /** Whether the server speaks MariaDB's extended capabilities (it leaves the CLIENT_MYSQL bit unset). */
    public boolean hasMariaDbCapabilities() {
        return (capabilities & io.sluice.protocol.Capabilities.CLIENT_LONG_PASSWORD) == 0;
    }
}
