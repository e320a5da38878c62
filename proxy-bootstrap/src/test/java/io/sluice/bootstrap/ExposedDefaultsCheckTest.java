package io.sluice.bootstrap;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.config.ConfigException;
import io.sluice.config.ProxyConfig;
import io.sluice.config.ServerAccountsConfig;
import io.sluice.config.UserConfig;
import org.junit.jupiter.api.Test;

/** Guessable accounts are refused on an open address and allowed where only this host can reach them. */
class ExposedDefaultsCheckTest {

    private static ProxyConfig config(String address, UserConfig... users) {
        ProxyConfig.Builder builder = ProxyConfig.builder().dataSource("ds_0", "jdbc:mysql://127.0.0.1/test", "root",
                "").address(address);
        for (UserConfig user : users) {
            builder.user(user);
        }
        return builder.build();
    }

    private static void assertRefused(ProxyConfig config, String guessable) {
        assertThatThrownBy(() -> ExposedDefaultsCheck.check(config, "config.yaml"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("config.yaml: server.address " + config.server().address()
                        + " accepts clients from other hosts, and " + guessable + " can be guessed: refusing to start.")
                .hasMessageContaining("server.address: 127.0.0.1");
    }

    private static void assertAllowed(ProxyConfig config) {
        assertThatCode(() -> ExposedDefaultsCheck.check(config, "config.yaml")).doesNotThrowAnyException();
    }

    @Test
    void anOpenAddressRefusesEmptyAndDefaultPasswords() {
        assertRefused(config("0.0.0.0", new UserConfig("root", "%", "root")),
                "root@% (the default password \"root\")");
        assertRefused(config("::", new UserConfig("app", "%", "")), "app@% (empty password)");
        assertRefused(config("0.0.0.0"), "root@% (no authority.users: the default account, password \"root\")");
        assertRefused(config("0.0.0.0", new UserConfig("app", "%", "s3cret"), new UserConfig("root", "10.%", "root"),
                new UserConfig("ops", "%", "")), "root@10.% (the default password \"root\"), ops@% (empty password)");
    }

    @Test
    void loopbackListenersAndLoopbackAccountsAreNoExposure() {
        assertAllowed(config("127.0.0.1", new UserConfig("root", "%", "root")));
        assertAllowed(config("localhost", new UserConfig("root", "%", "")));
        assertAllowed(config("::1"));
        assertAllowed(config("0.0.0.0", new UserConfig("root", "127.0.0.1", "root"),
                new UserConfig("admin", "localhost", "")));
    }

    @Test
    void ownPasswordsAndHashesPass() {
        assertAllowed(config("0.0.0.0", new UserConfig("root", "%", "correct horse battery staple")));
        assertAllowed(config("0.0.0.0",
                UserConfig.parse("app@%", "", "*14E65567ABDB5135D0CFD9A70B3032C179A49EE7", 0)));
    }

    @Test
    void theServersOwnAccountsAreNoDefaultAccount() {
        assertAllowed(config("0.0.0.0").withUsersFromBackend(ServerAccountsConfig.defaults()));
    }
}
