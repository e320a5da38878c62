package io.sluice.frontend;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.config.UserConfig;
import io.sluice.protocol.Scramble;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ProxyUsersTest {
    private static final byte[] NONCE = Scramble.nonce();

    private static InetAddress ip(String literal) {
        try {
            return InetAddress.getByName(literal); // a literal: no lookup
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }

    private static boolean login(ProxyUsers users, String user, String client, String password) {
        return users.verify(user, client == null ? null : ip(client), Scramble.MYSQL_NATIVE_PASSWORD, NONCE,
                Scramble.nativePassword(password, NONCE));
    }

    @ParameterizedTest(name = "{0} from {1}: {2}")
    @CsvSource({
        "%,              10.1.2.3,        true",
        "%,              ::1,             true",
        "%,              127.0.0.1,       true",
        "192.168.%,      192.168.1.7,     true",
        "192.168.%,      192.168.200.254, true",
        "192.168.%,      192.169.1.7,     false",
        "192.168.%,      10.192.168.1,    false",
        "192.168.1.%,    192.168.10.1,    false",
        "localhost,      127.0.0.1,       true",
        "localhost,      127.0.0.2,       true",
        "localhost,      ::1,             true",
        "localhost,      10.0.0.1,        false",
        "LOCALHOST,      127.0.0.1,       true",
        "10.0.0._,       10.0.0.5,        true",
        "10.0.0._,       10.0.0.15,       false",
        "10.0.0.1_,      10.0.0.12,       true",
        "10.0.0.1,       10.0.0.1,        true",
        "10.0.0.1,       10.0.0.12,       false",
        "10.0.0.1,       10.0.0.2,        false",
        "10.0.%.1,       10.0.77.1,       true",
        "10.0.%.1,       10.0.77.2,       false",
        "1.2.3.4,        1.2.3.4,         true",
        "1.2.3.4,        1.2.3.45,        false",
    })
    void matchesHostPatternsWithMysqlWildcards(String host, String client, boolean allowed) {
        ProxyUsers users = new ProxyUsers(List.of(new UserConfig("app", host, "pw")));

        assertThat(login(users, "app", client, "pw")).isEqualTo(allowed);
    }

    @Test
    void aDotInAPatternIsADotNotAnyCharacter() {
        // ::1 prints as 0:0:0:0:0:0:0:1; if '.' were a regex wildcard this pattern would match it.
        ProxyUsers users = new ProxyUsers(List.of(new UserConfig("app", "0.0.0.0.0.0.0.1", "pw")));

        assertThat(login(users, "app", "::1", "pw")).isFalse();
    }

    @Test
    void rejectsAWrongPasswordAndAnUnknownUser() {
        ProxyUsers users = new ProxyUsers(List.of(new UserConfig("app", "%", "pw")));

        assertThat(login(users, "app", "10.0.0.1", "pw")).isTrue();
        assertThat(login(users, "app", "10.0.0.1", "PW")).isFalse();
        assertThat(login(users, "App", "10.0.0.1", "pw")).as("user names are case-sensitive").isFalse();
        assertThat(login(users, "nobody", "10.0.0.1", "pw")).isFalse();
    }

    @Test
    void checksTheScrambleOfThePluginTheClientUsed() {
        ProxyUsers users = new ProxyUsers(List.of(new UserConfig("app", "%", "pw")));

        assertThat(users.verify("app", ip("10.0.0.1"), Scramble.CACHING_SHA2_PASSWORD, NONCE,
                Scramble.cachingSha2Password("pw", NONCE))).isTrue();
        assertThat(users.verify("app", ip("10.0.0.1"), Scramble.CACHING_SHA2_PASSWORD, NONCE,
                Scramble.nativePassword("pw", NONCE))).isFalse();
    }

    @Test
    void anEmptyPasswordAcceptsOnlyAnEmptyResponse() {
        ProxyUsers users = new ProxyUsers(List.of(new UserConfig("guest", "%", "")));

        assertThat(users.verify("guest", ip("10.0.0.1"), Scramble.MYSQL_NATIVE_PASSWORD, NONCE, new byte[0]))
                .isTrue();
        assertThat(login(users, "guest", "10.0.0.1", "something")).isFalse();
    }

    @Test
    void anUnknownClientAddressMatchesOnlyTheAnyHostPattern() {
        ProxyUsers anyHost = new ProxyUsers(List.of(new UserConfig("app", "%", "pw")));
        ProxyUsers lan = new ProxyUsers(List.of(new UserConfig("app", "192.168.%", "pw")));
        ProxyUsers local = new ProxyUsers(List.of(new UserConfig("app", "localhost", "pw")));

        assertThat(login(anyHost, "app", null, "pw")).isTrue();
        assertThat(login(lan, "app", null, "pw")).isFalse();
        assertThat(login(local, "app", null, "pw")).isFalse();
    }

    @Test
    void theSameNameFromDifferentHostsHasDifferentPasswords() {
        ProxyUsers users = new ProxyUsers(List.of(
                new UserConfig("app", "localhost", "local-pw"),
                new UserConfig("app", "10.%", "lan-pw")));

        assertThat(login(users, "app", "127.0.0.1", "local-pw")).isTrue();
        assertThat(login(users, "app", "127.0.0.1", "lan-pw")).isFalse();
        assertThat(login(users, "app", "10.9.8.7", "lan-pw")).isTrue();
        assertThat(login(users, "app", "10.9.8.7", "local-pw")).isFalse();
        assertThat(login(users, "app", "192.168.0.1", "lan-pw")).isFalse();
    }

    @Test
    void readsUserAtHostAsWrittenInConfig() {
        ProxyUsers users = new ProxyUsers(List.of(UserConfig.parse("app@192.168.%", "pw"), UserConfig.parse("ops", "x")));

        assertThat(login(users, "app", "192.168.3.4", "pw")).isTrue();
        assertThat(login(users, "app", "10.0.0.1", "pw")).isFalse();
        assertThat(login(users, "ops", "10.0.0.1", "x")).isTrue();
    }

    /**
     * MySQL accepts {@code 'app'@'::1'}, but Java prints an IPv6 client as {@code 0:0:0:0:0:0:0:1}, so a pattern
     * written in the compressed form would never match as text: IPv6 literals are compared as addresses.
     */
    @ParameterizedTest(name = "{0} from {1}: {2}")
    @CsvSource({
        "::1,                 ::1,                     true",
        "::1,                 0:0:0:0:0:0:0:1,         true",
        "::1,                 127.0.0.1,               false",
        "2001:db8::7,         2001:0db8:0:0:0:0:0:7,   true",
        "2001:DB8::7,         2001:db8::7,             true",
        "2001:db8::7,         2001:db8::8,             false",
    })
    void anIpv6LiteralPatternMatchesItsAddress(String host, String client, boolean allowed) {
        ProxyUsers users = new ProxyUsers(List.of(new UserConfig("app", host, "pw")));

        assertThat(login(users, "app", client, "pw")).isEqualTo(allowed);
    }
}
