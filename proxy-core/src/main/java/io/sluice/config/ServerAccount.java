package io.sluice.config;

import java.util.Objects;

/**
 * An account Sluice uses on a group's servers for its own work, not the sessions': {@code administration} runs a
 * switchover's commands ({@code SET GLOBAL read_only}, {@code CHANGE MASTER TO}), {@code replication} is the
 * account the servers replicate with once repointed (MaxScale's {@code replication_user}). Its {@link #toString}
 * never shows the password.
 *
 * @param username the account's user name
 * @param password its password ({@code password} or {@code passwordFile}), possibly empty
 */
public record ServerAccount(String username, String password) {

    public ServerAccount {
        Objects.requireNonNull(password, "password");
        if (username == null || username.isBlank()) {
            throw new IllegalArgumentException("username: missing (expected: an account on the group's servers)");
        }
    }

    @Override
    public String toString() {
        return "ServerAccount[username=" + username + ", password=" + (password.isEmpty() ? "" : "****") + "]";
    }
}
