package io.sluice.config;

import java.util.Objects;

/**
 * A user that clients authenticate as against Sluice itself (not against the backend).
 *
 * @param user the user name
 * @param host the host pattern from {@code user@host}; {@code %} matches every host
 * @param password the plain-text password, may be empty
 */
public record UserConfig(String user, String host, String password) {

    public UserConfig {
        Objects.requireNonNull(user, "user");
        host = host == null || host.isEmpty() ? "%" : host;
        password = password == null ? "" : password;
    }

    /**
     * Reads the {@code user} key as written in config.yaml: {@code name} or {@code name@host}.
     */
    public static UserConfig parse(String userAtHost, String password) {
        Objects.requireNonNull(userAtHost, "user");
        int at = userAtHost.lastIndexOf('@');
        if (at < 0) {
            return new UserConfig(userAtHost, "%", password);
        }
        return new UserConfig(userAtHost.substring(0, at), userAtHost.substring(at + 1), password);
    }

    @Override
    public String toString() {
        return "UserConfig[" + user + "@" + host + "]";
    }
}
