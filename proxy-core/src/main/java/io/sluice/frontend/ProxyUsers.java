package io.sluice.frontend;

import io.netty.util.NetUtil;
import io.sluice.config.UserConfig;
import io.sluice.protocol.Scramble;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The accounts clients log in to Sluice with ({@code authority.users}). Host patterns use MySQL's wildcards:
 * {@code %} for any run of characters, {@code _} for one; {@code localhost} matches loopback addresses.
 */
public final class ProxyUsers {
    private final Map<String, List<Entry>> byName = new HashMap<>();

    /** {@code ipv6} is set when the host is an IPv6 literal, which Java prints in another form than it is written. */
    private record Entry(UserConfig user, Pattern host, InetAddress ipv6) {
    }

    public ProxyUsers(List<UserConfig> users) {
        for (UserConfig user : users) {
            byName.computeIfAbsent(user.user(), k -> new ArrayList<>()).add(new Entry(user, hostPattern(user.host()), ipv6Literal(user.host())));
        }
    }

    /**
     * Checks a login.
     *
     * @param plugin the authentication plugin that produced {@code authResponse}
     * @return whether {@code user} may log in from {@code client} with that proof
     */
    public boolean verify(String user, InetAddress client, String plugin, byte[] nonce, byte[] authResponse) {
        List<Entry> entries = byName.get(user);
        if (entries == null) {
            return false;
        }
        for (Entry entry : entries) {
            if (matches(entry, client)) {
                return Scramble.verify(plugin, entry.user().password(), nonce, authResponse);
            }
        }
        return false;
    }

    private static boolean matches(Entry entry, InetAddress client) {
        if (client == null) {
            return "%".equals(entry.user().host());
        }
        if ("localhost".equalsIgnoreCase(entry.user().host())) {
            return client.isLoopbackAddress();
        }
        if (entry.ipv6() != null) {
            return entry.ipv6().equals(client);
        }
        return entry.host().matcher(client.getHostAddress()).matches();
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
