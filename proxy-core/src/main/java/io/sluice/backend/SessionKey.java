package io.sluice.backend;

import io.sluice.protocol.Capabilities;

/**
 * What a pooled backend connection must share with a client for the relay to pass bytes through unchanged: the
 * session-shaping capability flags (they decide how results are formatted) and the character set from the handshake.
 * Connections are pooled per key; in practice one application uses one key.
 *
 * @param capabilities the client's flags, masked with {@link Capabilities#SESSION_SHAPING}
 * @param collationId the collation id the client sent in its handshake
 * @param mariaDbCapabilities the MariaDB extended capabilities both sides share
 */
public record SessionKey(int capabilities, int collationId, int mariaDbCapabilities) {

    public SessionKey {
        capabilities &= Capabilities.SESSION_SHAPING;
        mariaDbCapabilities &= Capabilities.MARIADB_PROXY_SUPPORTED;
    }

    /** A key without MariaDB extended capabilities. */
    public SessionKey(int capabilities, int collationId) {
        this(capabilities, collationId, 0);
    }

    public boolean deprecateEof() {
        return Capabilities.has(capabilities, Capabilities.CLIENT_DEPRECATE_EOF);
    }

    /** Whether result sets carry MariaDB's "metadata follows" byte and may leave out column definitions. */
    public boolean cacheMetadata() {
        return (mariaDbCapabilities & Capabilities.MARIADB_CLIENT_CACHE_METADATA) != 0;
    }
}
