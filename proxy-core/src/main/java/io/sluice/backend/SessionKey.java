package io.sluice.backend;

import io.sluice.protocol.Capabilities;

/**
 * What a pooled backend connection must share with a client for the relay to pass bytes through unchanged: the
 * session-shaping capability flags (they decide how results are formatted) and the character set from the handshake.
 * Connections are pooled per key; in practice one application uses one key.
 *
 * @param capabilities the client's flags, masked with {@link Capabilities#SESSION_SHAPING}
 * @param collationId the collation id the client sent in its handshake
 */
public record SessionKey(int capabilities, int collationId) {

    public SessionKey {
        capabilities &= Capabilities.SESSION_SHAPING;
    }

    public boolean deprecateEof() {
        return Capabilities.has(capabilities, Capabilities.CLIENT_DEPRECATE_EOF);
    }
}
