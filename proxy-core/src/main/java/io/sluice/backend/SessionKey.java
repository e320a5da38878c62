package io.sluice.backend;

import io.sluice.protocol.Capabilities;

/**
 * What a pooled backend connection must share with a client for the relay to pass bytes through unchanged: the
 * session-shaping capability flags (they decide how results are formatted) and the character set from the handshake.
 * Connections are pooled per key; in practice one application uses one key. The key also names the server account
 * the connection is logged in as, so that a connection of one account is never lent to a session of another
 * (transaction pooling included): the account is chosen once, at login or COM_CHANGE_USER, never per packet.
 *
 * @param capabilities the client's flags, masked with {@link Capabilities#SESSION_SHAPING}
 * @param collationId the collation id the client sent in its handshake
 * @param mariaDbCapabilities the MariaDB extended capabilities both sides share
 * @param account the server account the connection logs in as; {@code null}: the data source's own account
 */
public record SessionKey(int capabilities, int collationId, int mariaDbCapabilities, BackendAccount account) {

    public SessionKey {
        capabilities &= Capabilities.SESSION_SHAPING;
        mariaDbCapabilities &= Capabilities.MARIADB_PROXY_SUPPORTED;
    }

    /** A key of the data source's own account. */
    public SessionKey(int capabilities, int collationId, int mariaDbCapabilities) {
        this(capabilities, collationId, mariaDbCapabilities, null);
    }

    /** A key without MariaDB extended capabilities, of the data source's own account. */
    public SessionKey(int capabilities, int collationId) {
        this(capabilities, collationId, 0);
    }

    /** This key for connections logged in as {@code other} ({@code null}: the data source's own account). */
    public SessionKey withAccount(BackendAccount other) {
        return new SessionKey(capabilities, collationId, mariaDbCapabilities, other);
    }

    /** The server user the connection logs in as, or {@code null} for the data source's own. */
    public String accountUser() {
        return account == null ? null : account.user();
    }

    public boolean deprecateEof() {
        return Capabilities.has(capabilities, Capabilities.CLIENT_DEPRECATE_EOF);
    }

    /** Whether result sets carry MariaDB's "metadata follows" byte and may leave out column definitions. */
    public boolean cacheMetadata() {
        return (mariaDbCapabilities & Capabilities.MARIADB_CLIENT_CACHE_METADATA) != 0;
    }
}
