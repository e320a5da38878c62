package io.sluice.config;

/**
 * The admin HTTP port: Prometheus metrics, health, backend and session state, drain and config reload.
 *
 * @param enabled whether the port is opened at all
 * @param address the address to listen on; loopback by default, since the API can drain backends
 * @param port the port to listen on; 0 picks a free one
 * @param token the bearer token that mutating calls ({@code POST}) must carry; {@code null} or empty refuses them all
 */
public record AdminConfig(boolean enabled, String address, int port, String token) {

    public static final String DEFAULT_ADDRESS = "127.0.0.1";
    public static final int DEFAULT_PORT = 3080;

    public AdminConfig {
        address = address == null || address.isBlank() ? DEFAULT_ADDRESS : address;
        token = token == null || token.isEmpty() ? null : token;
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port: " + port + " (expected: 0..65535)");
        }
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

    @Override
    public String toString() {
        // Never print the token: this string reaches logs.
        return "AdminConfig[" + (enabled ? address + ":" + port + (token == null ? ", no token" : ", token set")
                : "disabled") + "]";
    }
}
