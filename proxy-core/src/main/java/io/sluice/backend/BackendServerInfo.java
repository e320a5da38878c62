package io.sluice.backend;

/**
 * What a backend announced in its greeting, read once at start to present the same face to clients.
 *
 * @param serverVersion the version string, e.g. {@code 5.5.5-10.11.19-MariaDB}
 * @param capabilities the server's capability flags
 * @param collationId the server's default collation id
 */
public record BackendServerInfo(String serverVersion, int capabilities, int collationId) {
}
