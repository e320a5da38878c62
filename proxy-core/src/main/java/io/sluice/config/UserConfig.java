package io.sluice.config;

import io.sluice.auth.Credential;
import java.util.Objects;

/**
 * A user that clients authenticate as against Sluice itself (not against the backend).
 *
 * @param user the user name
 * @param host the host pattern from {@code user@host}; {@code %} matches every host
 * @param password the plain-text password, may be empty; empty when {@code passwordHash} is set
 * @param passwordHash MySQL's stored form of the password ({@code *HEX} or {@code $A$005$...}), or {@code null}
 * @param maxConnections the most sessions this account may have open at once; 0 means no limit
 * @param backendUser the server account this user's sessions log in to the server as, or {@code null}: the data
 *     source's own account (every such user shares it, as before decision 145)
 * @param backendPassword that account's password; empty when {@code backendUser} is {@code null}
 */
public record UserConfig(String user, String host, String password, String passwordHash, int maxConnections,
        String backendUser, String backendPassword) {

    public UserConfig {
        Objects.requireNonNull(user, "user");
        host = host == null || host.isEmpty() ? "%" : host;
        password = password == null ? "" : password;
        if (passwordHash != null && !password.isEmpty()) {
            throw new IllegalArgumentException("passwordHash: set together with password (expected: one of the two)");
        }
        if (maxConnections < 0) {
            throw new IllegalArgumentException("maxConnections: " + maxConnections + " (expected: >= 0)");
        }
        if (backendUser != null && backendUser.isEmpty()) {
            throw new IllegalArgumentException("backendUser: empty (expected: a server account's user name)");
        }
        if (backendUser == null && backendPassword != null && !backendPassword.isEmpty()) {
            throw new IllegalArgumentException("backendPassword: set without backendUser (expected: both or neither)");
        }
        backendPassword = backendPassword == null ? "" : backendPassword;
        Credential.of(password, passwordHash); // refuses a hash in no known form before Sluice starts
    }

    /** A user whose sessions run as the data source's own account. */
    public UserConfig(String user, String host, String password, String passwordHash, int maxConnections) {
        this(user, host, password, passwordHash, maxConnections, null, null);
    }

    /** A user with a plain-text password and no connection limit. */
    public UserConfig(String user, String host, String password) {
        this(user, host, password, null, 0);
    }

    /**
     * Reads the {@code user} key as written in config.yaml: {@code name} or {@code name@host}.
     */
    public static UserConfig parse(String userAtHost, String password) {
        return parse(userAtHost, password, null, 0);
    }

    /** Reads {@code name} or {@code name@host} with the other keys of an {@code authority.users} entry. */
    public static UserConfig parse(String userAtHost, String password, String passwordHash, int maxConnections) {
        return parse(userAtHost, password, passwordHash, maxConnections, null, null);
    }

    /** Reads {@code name} or {@code name@host} with every key of an {@code authority.users} entry. */
    public static UserConfig parse(String userAtHost, String password, String passwordHash, int maxConnections,
            String backendUser, String backendPassword) {
        Objects.requireNonNull(userAtHost, "user");
        int at = userAtHost.lastIndexOf('@');
        if (at < 0) {
            return new UserConfig(userAtHost, "%", password, passwordHash, maxConnections, backendUser,
                    backendPassword);
        }
        return new UserConfig(userAtHost.substring(0, at), userAtHost.substring(at + 1), password, passwordHash,
                maxConnections, backendUser, backendPassword);
    }

    /** Whether this user's sessions log in to the server as an account of their own ({@code backendUser}). */
    public boolean hasBackendUser() {
        return backendUser != null;
    }

    /** How logins of this user are checked. */
    public Credential credential() {
        return Credential.of(password, passwordHash);
    }

    @Override
    public String toString() {
        return "UserConfig[" + user + "@" + host + (backendUser != null ? " as " + backendUser : "") + "]";
    }
}
