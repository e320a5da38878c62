package io.sluice.frontend;

import io.sluice.auth.RsaKeyPair;
import io.sluice.config.ServerConfig;
import io.sluice.tls.ServerTls;

/**
 * What client sessions share for their security: the TLS context (or none), the RSA key of
 * caching_sha2_password, the login back-off and the timeouts. Built once per proxy by {@link FrontendInitializer}.
 */
final class ClientSecurity {
    private final ServerTls tls;
    private final boolean requireSecureTransport;
    private final RsaKeyPair rsa = new RsaKeyPair();
    private final LoginThrottle throttle;
    private final long handshakeTimeoutMillis;
    private final long idleTimeoutMillis;
    private final long netReadTimeoutMillis;

    ClientSecurity(ServerConfig server) {
        this.tls = ServerTls.create(server.tls());
        this.requireSecureTransport = server.tls().requireSecureTransport();
        this.throttle = new LoginThrottle(server.loginBackoff());
        this.handshakeTimeoutMillis = server.handshakeTimeoutMilliseconds();
        this.idleTimeoutMillis = server.idleTimeoutMilliseconds();
        this.netReadTimeoutMillis = server.netReadTimeoutMilliseconds();
    }

    /** The TLS context, or {@code null} when clients cannot switch to TLS. */
    ServerTls tls() {
        return tls;
    }

    boolean requireSecureTransport() {
        return requireSecureTransport;
    }

    RsaKeyPair rsa() {
        return rsa;
    }

    LoginThrottle throttle() {
        return throttle;
    }

    /** From connect to logged in, at most; 0: no limit. */
    long handshakeTimeoutMillis() {
        return handshakeTimeoutMillis;
    }

    /** Silence between commands before the client is disconnected; 0: no limit. */
    long idleTimeoutMillis() {
        return idleTimeoutMillis;
    }

    /** How long a logged-in client may take to send one frame whole; 0: no limit. */
    long netReadTimeoutMillis() {
        return netReadTimeoutMillis;
    }
}
