package io.sluice.config;

import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * The admin HTTP port: Prometheus metrics, probes, backend and session state, drain and config reload.
 *
 * @param enabled whether the port is opened at all
 * @param address the address to listen on; loopback by default, since the API can drain backends
 * @param port the port to listen on; 0 picks a free one
 * @param token the bearer token that mutating calls ({@code POST}) must carry, and that also opens the reads
 *     {@code readToken} guards; {@code null} or empty refuses every {@code POST}
 * @param readToken a second bearer token that opens only the reads that show sessions or configuration
 *     ({@code GET /api/sessions}, {@code GET /api/config}), for dashboards and on-call tools that must not drain or
 *     reload; {@code null} or empty: none
 */
public record AdminConfig(boolean enabled, String address, int port, String token, String readToken) {

    public static final String DEFAULT_ADDRESS = "127.0.0.1";
    public static final int DEFAULT_PORT = 3080;

    public AdminConfig {
        address = address == null || address.isBlank() ? DEFAULT_ADDRESS : address;
        token = token == null || token.isEmpty() ? null : token;
        readToken = readToken == null || readToken.isEmpty() ? null : readToken;
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port: " + port + " (expected: 0..65535)");
        }
    }

    /** An admin port with a write token only. */
    public AdminConfig(boolean enabled, String address, int port, String token) {
        this(enabled, address, port, token, null);
    }

    /** What config.yaml gets without an {@code admin} section: 127.0.0.1:3080, no token. */
    public static AdminConfig defaults() {
        return new AdminConfig(true, DEFAULT_ADDRESS, DEFAULT_PORT, null);
    }

    /** No admin port: what an embedding application gets unless it asks (it has its own HTTP and metrics). */
    public static AdminConfig disabled() {
        return new AdminConfig(false, DEFAULT_ADDRESS, DEFAULT_PORT, null);
    }

    /** Enabled on {@code address:port} with {@code token} (may be null). */
    public static AdminConfig on(String address, int port, String token) {
        return new AdminConfig(true, address, port, token);
    }

    /** This configuration with {@code value} as the read token ({@code null}: none). */
    public AdminConfig withReadToken(String value) {
        return new AdminConfig(enabled, address, port, token, value);
    }

    /** Whether either token is set: the reads of sessions and configuration then need one. */
    public boolean hasAnyToken() {
        return token != null || readToken != null;
    }

    /**
     * Whether {@link #address} is a loopback address, so that only this host can reach the port. A name that does not
     * resolve counts as not loopback: the binding will fail anyway, and nothing is opened on a guess.
     */
    public boolean isLoopback() {
        try {
            return InetAddress.getByName(address).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }

    @Override
    public String toString() {
        // Never print a token: this string reaches logs.
        return "AdminConfig[" + (enabled ? address + ":" + port + (token == null ? ", no token" : ", token set")
                + (readToken == null ? "" : ", read token set") : "disabled") + "]";
    }
}
