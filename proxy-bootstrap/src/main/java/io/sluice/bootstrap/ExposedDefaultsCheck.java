package io.sluice.bootstrap;

import io.sluice.config.ConfigException;
import io.sluice.config.ProxyConfig;
import io.sluice.config.UserConfig;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Refuses to start the standalone proxy when it would listen beyond this host with an account anyone can guess: an
 * empty password, or ShardingSphere's default {@code root}. Sluice logs in to the backend with the data source's
 * account, often the server's root, so such an account on an open port hands that account to the network.
 *
 * <p>Only the standalone proxy (and its reloads) is checked; an application that embeds Sluice chooses its own
 * exposure. An account restricted to loopback clients ({@code root@127.0.0.1}) is no exposure and passes. See
 * docs/decisions/077-refuse-guessable-accounts-on-open-ports.md.
 */
final class ExposedDefaultsCheck {

    /** ShardingSphere-Proxy's default password, and the shipped example's before 0.1.0. */
    static final String DEFAULT_PASSWORD = "root";

    /** Host parts of {@code user@host} that only this machine can match. */
    private static final Set<String> LOOPBACK_HOSTS = Set.of("127.0.0.1", "::1", "localhost");

    private ExposedDefaultsCheck() {
    }

    /**
     * Passes, or refuses {@code config} read from {@code source}.
     *
     * @throws ConfigException naming the address, each guessable account, and the ways out
     */
    static void check(ProxyConfig config, String source) {
        String address = config.server().address();
        if (isLoopback(address)) {
            return;
        }
        List<String> guessable = new ArrayList<>();
        if (config.users().isEmpty() && !config.usersFromBackend()) {
            // Startup then falls back to ShardingSphere's root@% / root. (With users: FROM_BACKEND the accounts and
            // their passwords are the server's, which guards them itself.)
            guessable.add("root@% (no authority.users: the default account, password \"root\")");
        }
        for (UserConfig user : config.users()) {
            if (isLoopbackHost(user.host()) || user.passwordHash() != null) {
                continue;
            }
            if (user.password().isEmpty()) {
                guessable.add(user.user() + "@" + user.host() + " (empty password)");
            } else if (user.password().equals(DEFAULT_PASSWORD)) {
                guessable.add(user.user() + "@" + user.host() + " (the default password \"root\")");
            }
        }
        if (guessable.isEmpty()) {
            return;
        }
        throw new ConfigException(source + ": server.address " + address + " accepts clients from other hosts, and "
                + String.join(", ", guessable) + " can be guessed: refusing to start. Give "
                + (guessable.size() == 1 ? "it" : "each") + " a password of its own (password, passwordFile or"
                + " passwordHash), restrict its host (user: name@127.0.0.1), or listen on this host only"
                + " (server.address: 127.0.0.1)");
    }

    /**
     * Whether {@code address} binds loopback only. A wildcard ({@code 0.0.0.0}, {@code ::}) or a name that does not
     * resolve is not: the first accepts everyone, and the second fails to bind anyway.
     */
    static boolean isLoopback(String address) {
        try {
            return InetAddress.getByName(address).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }

    private static boolean isLoopbackHost(String host) {
        return LOOPBACK_HOSTS.contains(host.toLowerCase(Locale.ROOT));
    }
}
