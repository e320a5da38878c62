package io.sluice.frontend;

import io.netty.util.NetUtil;
import io.sluice.auth.Credential;
import io.sluice.backend.BackendAccount;
import io.sluice.backend.ServerRefusal;
import io.sluice.config.UserConfig;
import io.sluice.protocol.Scramble;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;

/**
 * The accounts clients log in to Sluice with ({@code authority.users}). Host patterns use MySQL's wildcards:
 * {@code %} for any run of characters, {@code _} for one; {@code localhost} matches loopback addresses.
 */
public final class ProxyUsers {
    private final Map<String, List<Account>> byName = new HashMap<>();

    /**
     * One {@code user@host} entry. Shared by every event loop: its session count is atomic and its
     * caching_sha2_password cache is a volatile field.
     */
    public static final class Account {
        private final UserConfig config;
        private final Credential credential;
        private final Pattern host;
        /** Set when the host is an IPv6 literal, which Java prints in another form than it is written. */
        private final InetAddress ipv6;
        private final AtomicInteger sessions = new AtomicInteger();
        /** The server account its sessions log in as ({@code backendUser}), or {@code null}: the data source's. */
        private final BackendAccount backendAccount;
        /** SHA256(SHA256(password)) once a full authentication proved it, as MySQL's caching_sha2 cache holds. */
        private volatile byte[] sha2Cache;

        /**
         * A server account ({@code users: FROM_BACKEND}) whose sessions log in to the server as itself, with the
         * stage-one hash their login reveals; {@code false}: a user of config.yaml.
         */
        private final boolean fromServer;
        /** A server account's plugin that Sluice cannot authenticate or log in with, or {@code null}. */
        private final String unsupportedPlugin;
        /**
         * A server account's: the server's refusal of the stage-one hash its logins learn (one per reading, since
         * every login checked against this stored hash learns the same one), or {@code null}.
         */
        private final ServerRefusal refusal;
        /** A MariaDB ed25519 server account's public key, or {@code null}. */
        private final byte[] ed25519Key;

        private Account(UserConfig config) {
            this(config, false, null, null, null);
        }

        private Account(UserConfig config, boolean fromServer, String unsupportedPlugin, ServerRefusal refusal,
                byte[] ed25519Key) {
            this.config = config;
            this.credential = config.credential();
            this.host = hostPattern(config.host());
            this.ipv6 = ipv6Literal(config.host());
            this.backendAccount = config.hasBackendUser()
                    ? BackendAccount.withPassword(config.backendUser(), config.backendPassword()) : null;
            this.fromServer = fromServer;
            this.unsupportedPlugin = unsupportedPlugin;
            this.refusal = refusal;
            this.ed25519Key = ed25519Key;
        }

        /**
         * A MariaDB ed25519 server account's public key, which the password a client sends in clear over TLS is
         * checked against (decision 172), or {@code null}.
         */
        byte[] ed25519Key() {
            return ed25519Key;
        }

        /** A server account's record of the server refusing its learned hash (decision 171), or {@code null}. */
        ServerRefusal refusal() {
            return refusal;
        }

        /** Whether this is a server account, whose sessions run on the server as itself (decision 146). */
        boolean fromServer() {
            return fromServer;
        }

        /**
         * The plugin of a server account that Sluice can neither check nor log in with, or {@code null}: such an
         * account gets a clear ERR at login, never the data source's account instead.
         */
        String unsupportedPlugin() {
            return unsupportedPlugin;
        }

        /**
         * The server account this user's sessions log in as: its {@code backendUser}, or {@code null} for the data
         * source's own account.
         */
        BackendAccount backendAccount() {
            return backendAccount;
        }

        public String user() {
            return config.user();
        }

        public String host() {
            return config.host();
        }

        public Credential credential() {
            return credential;
        }

        /** What checks a caching_sha2_password scramble: from the password, or from an earlier full login. */
        byte[] sha2Stage2() {
            byte[] known = credential.sha2Stage2();
            return known != null ? known : sha2Cache;
        }

        /** Remembers SHA256(SHA256(password)) after a full authentication proved the password. */
        void cacheSha2(byte[] password) {
            if (credential.sha2Stage2() == null) {
                sha2Cache = Scramble.sha2Stage2(password);
            }
        }

        /** Counts a session; false (nothing counted) when the account's {@code maxConnections} is reached. */
        boolean admitSession() {
            int max = config.maxConnections();
            int now = sessions.incrementAndGet();
            if (max > 0 && now > max) {
                sessions.decrementAndGet();
                return false;
            }
            return true;
        }

        void sessionClosed() {
            sessions.decrementAndGet();
        }

        int maxConnections() {
            return config.maxConnections();
        }

        /** Sessions of this account open now. */
        int sessions() {
            return sessions.get();
        }

        boolean matches(InetAddress client) {
            if (client == null) {
                return "%".equals(config.host());
            }
            if ("localhost".equalsIgnoreCase(config.host())) {
                return client.isLoopbackAddress();
            }
            if (ipv6 != null) {
                return ipv6.equals(client);
            }
            return host.matcher(client.getHostAddress()).matches();
        }

        @Override
        public String toString() {
            return config.user() + "@" + config.host();
        }
    }

    public ProxyUsers(List<UserConfig> users) {
        for (UserConfig user : users) {
            byName.computeIfAbsent(user.user(), k -> new ArrayList<>()).add(new Account(user));
        }
    }

    private ProxyUsers() {
    }

    /**
     * The server's accounts ({@code users: FROM_BACKEND}), in the order the server matches them: for each name, the
     * most specific host first.
     *
     * @param accounts each account's entry, its password hash in {@code passwordHash} (or none: empty password)
     * @param unsupportedPlugins per entry of {@code accounts} (same index), the plugin Sluice cannot speak, or
     *     {@code null}
     */
    static ProxyUsers fromServer(List<UserConfig> accounts, List<String> unsupportedPlugins) {
        return fromServer(accounts, unsupportedPlugins, () -> { });
    }

    /**
     * As {@link #fromServer(List, List)}; {@code onRefused} is told when the server refuses a hash that logins of one
     * of these accounts learned (its password changed or it was dropped since this reading).
     */
    static ProxyUsers fromServer(List<UserConfig> accounts, List<String> unsupportedPlugins, Runnable onRefused) {
        return fromServer(accounts, unsupportedPlugins, Collections.nCopies(accounts.size(), null),
                onRefused);
    }

    /**
     * As {@link #fromServer(List, List, Runnable)}, with {@code ed25519Keys} per entry (same index): a MariaDB
     * ed25519 account's public key, or {@code null}.
     */
    static ProxyUsers fromServer(List<UserConfig> accounts, List<String> unsupportedPlugins, List<byte[]> ed25519Keys,
            Runnable onRefused) {
        ProxyUsers users = new ProxyUsers();
        for (int i = 0; i < accounts.size(); i++) {
            UserConfig account = accounts.get(i);
            users.byName.computeIfAbsent(account.user(), k -> new ArrayList<>()).add(new Account(account, true,
                    unsupportedPlugins.get(i), new ServerRefusal(onRefused), ed25519Keys.get(i)));
        }
        return users;
    }

    /** How many entries there are (each name@host once). */
    int size() {
        int n = 0;
        for (List<Account> accounts : byName.values()) {
            n += accounts.size();
        }
        return n;
    }

    /** The first entry for {@code user} whose host pattern matches {@code client}, or {@code null}. */
    public Account find(String user, InetAddress client) {
        List<Account> accounts = user == null ? null : byName.get(user);
        if (accounts == null) {
            return null;
        }
        for (Account account : accounts) {
            if (account.matches(client)) {
                return account;
            }
        }
        return null;
    }

    /**
     * Checks a one-step login: a scramble the account's credential can check directly.
     *
     * @param plugin the authentication plugin that produced {@code authResponse}
     * @return whether {@code user} may log in from {@code client} with that proof
     */
    public boolean verify(String user, InetAddress client, String plugin, byte[] nonce, byte[] authResponse) {
        Account account = find(user, client);
        if (account == null || account.unsupportedPlugin() != null || account.ed25519Key() != null) {
            return false; // an ed25519 account proves itself only with its password over TLS (ClientLogin)
        }
        Credential credential = account.credential();
        if (credential.isEmpty()) {
            return authResponse.length == 0 || (authResponse.length == 1 && authResponse[0] == 0);
        }
        if (Scramble.MYSQL_NATIVE_PASSWORD.equals(plugin)) {
            return credential.verifyNative(nonce, authResponse);
        }
        byte[] stage2 = account.sha2Stage2();
        return Scramble.CACHING_SHA2_PASSWORD.equals(plugin) && stage2 != null
                && Scramble.checkCachingSha2(stage2, nonce, authResponse);
    }

    /** The address of an IPv6 literal such as {@code ::1}, or {@code null}; never a DNS lookup. */
    private static InetAddress ipv6Literal(String host) {
        if (host.indexOf(':') < 0 || host.indexOf('%') >= 0 || host.indexOf('_') >= 0) {
            return null;
        }
        return NetUtil.createInetAddressFromIpAddressString(host);
    }

    private static Pattern hostPattern(String host) {
        StringBuilder regex = new StringBuilder();
        for (char c : host.toCharArray()) {
            if (c == '%') {
                regex.append(".*");
            } else if (c == '_') {
                regex.append('.');
            } else {
                regex.append(Pattern.quote(String.valueOf(c)));
            }
        }
        return Pattern.compile(regex.toString(), Pattern.CASE_INSENSITIVE);
    }
}
