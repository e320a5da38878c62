package io.sluice.frontend;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.auth.Ed25519;
import io.sluice.auth.PasswordHash;
import io.sluice.protocol.Scramble;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * How a reading of the server's accounts ({@code users: FROM_BACKEND}) becomes the users logins are checked against:
 * the server's host order, its plugins, and what is left out.
 */
class ServerAccountsTest {

    private static Map<String, String> row(String user, String host, String plugin, String hash) {
        Map<String, String> row = new HashMap<>();
        row.put("user", user);
        row.put("host", host);
        row.put("plugin", plugin);
        row.put("hash", hash);
        row.put("locked", "false");
        row.put("role", "false");
        return row;
    }

    private static String nativeHash(String password) {
        return "*" + HexFormat.of().formatHex(Scramble.nativeStage2(password.getBytes(StandardCharsets.UTF_8)))
                .toUpperCase(Locale.ROOT);
    }

    @Test
    void theMostSpecificHostMatchesFirstAsOnTheServer() throws Exception {
        ProxyUsers users = ServerAccounts.parse(List.of(
                row("app", "%", "mysql_native_password", nativeHash("any")),
                row("app", "10.0.%", "mysql_native_password", nativeHash("net")),
                row("app", "10.0.0.7", "mysql_native_password", nativeHash("one"))));
        InetAddress one = InetAddress.getByName("10.0.0.7");
        InetAddress net = InetAddress.getByName("10.0.0.8");
        InetAddress far = InetAddress.getByName("192.168.1.1");
        assertThat(users.find("app", one).host()).isEqualTo("10.0.0.7");
        assertThat(users.find("app", net).host()).isEqualTo("10.0.%");
        assertThat(users.find("app", far).host()).isEqualTo("%");
        assertThat(users.find("app", one).fromServer()).isTrue();
        byte[] nonce = Scramble.nonce();
        assertThat(users.verify("app", one, Scramble.MYSQL_NATIVE_PASSWORD, nonce,
                Scramble.nativePassword("one", nonce))).isTrue();
    }

    @Test
    void otherPluginsAreKeptToBeRefusedClearly() throws Exception {
        ProxyUsers users = ServerAccounts.parse(List.of(
                row("sock", "%", "unix_socket", ""),
                row("ed", "%", "ed25519", "xyz"),
                row("root", "localhost", "mysql_native_password", "invalid"),
                row("nopw", "%", "", ""),
                row("legacy", "%", null, nativeHash("x"))));
        InetAddress local = InetAddress.getLoopbackAddress();
        assertThat(users.find("sock", local).unsupportedPlugin()).isEqualTo("unix_socket");
        assertThat(users.find("ed", local).unsupportedPlugin()).isEqualTo("ed25519");
        assertThat(users.find("root", local).unsupportedPlugin()).contains("without a password hash");
        assertThat(users.find("nopw", local).unsupportedPlugin()).isNull();
        assertThat(users.find("nopw", local).credential().isEmpty()).isTrue();
        assertThat(users.find("legacy", local).credential().plugin()).isEqualTo(Scramble.MYSQL_NATIVE_PASSWORD);
    }

    /** Decision 172: MariaDB's ed25519 public key and MySQL's caching_sha2_password crypt log in (their own ways). */
    @Test
    void ed25519KeysAndCachingSha2CryptsAreKept() throws Exception {
        ProxyUsers users = ServerAccounts.parse(List.of(
                row("ed", "%", "ed25519", "24FjORYwAV6wiJLDpFI0doShISjOdPNUg1WR7eRAgqA"), // PASSWORD('ed-pw')
                row("sha2", "%", "caching_sha2_password", PasswordHash.cachingSha2Hash("sha2-pw")),
                row("sha2bad", "%", "caching_sha2_password", "not-a-crypt")));
        InetAddress local = InetAddress.getLoopbackAddress();
        ProxyUsers.Account ed = users.find("ed", local);
        assertThat(ed.unsupportedPlugin()).isNull();
        assertThat(ed.ed25519Key()).isEqualTo(Ed25519.publicKey("ed-pw".getBytes(StandardCharsets.UTF_8)));
        assertThat(ed.refusal()).as("where the server's refusal of its password is kept").isNotNull();
        assertThat(users.verify("ed", local, Scramble.MYSQL_NATIVE_PASSWORD, Scramble.nonce(), new byte[0]))
                .as("no one-step login: only the password over TLS").isFalse();
        ProxyUsers.Account sha2 = users.find("sha2", local);
        assertThat(sha2.unsupportedPlugin()).isNull();
        assertThat(sha2.credential().verifyCleartext("sha2-pw".getBytes(StandardCharsets.UTF_8))).isTrue();
        assertThat(users.find("sha2bad", local).unsupportedPlugin()).isEqualTo("caching_sha2_password");
    }

    @Test
    void rolesLockedAndAnonymousAccountsLogInThroughNoOne() throws Exception {
        Map<String, String> role = row("reporting_role", "", "", "");
        role.put("role", "true");
        Map<String, String> locked = row("old", "%", "mysql_native_password", nativeHash("x"));
        locked.put("locked", "Y"); // MySQL's account_locked
        ProxyUsers users = ServerAccounts.parse(List.of(role, locked, row("", "%", "mysql_native_password", "")));
        assertThat(users.size()).isZero();
        assertThat(users.find("old", InetAddress.getLoopbackAddress())).isNull();
    }
}
