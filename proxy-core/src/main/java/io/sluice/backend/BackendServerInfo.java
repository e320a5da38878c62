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

    /** Whether the server speaks MariaDB's extended capabilities (it leaves the CLIENT_MYSQL bit unset). */
    public boolean hasMariaDbCapabilities() {
        return (capabilities & io.sluice.protocol.Capabilities.CLIENT_LONG_PASSWORD) == 0;
    }
}
