package io.sluice.bootstrap.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.config.ConfigException;
import io.sluice.config.ProxyConfig;
import io.sluice.config.UserConfig;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The demo's own configuration; the demo end to end is DemoModeIT in the distribution module. */
class SluiceDemoTest {

    @Test
    void theDemoListensOnLoopbackInFrontOfTheSampleSchemaWithAnAccountThatIsNotRoot() {
        ProxyConfig config = SluiceDemo.config(3399, 40000, "secret", Path.of("/tmp/demo/tls"));

        assertThat(config.server().address()).isEqualTo("127.0.0.1");
        assertThat(config.server().port()).isEqualTo(3399);
        assertThat(config.primaryDataSource().url()).isEqualTo("jdbc:mysql://127.0.0.1:40000/shop");
        assertThat(config.primaryDataSource().username()).isEqualTo(ShopDatabase.BACKEND_USER).isNotEqualTo("root");
        assertThat(config.users()).containsExactly(new UserConfig("demo", "%", "demo"));
        assertThat(config.server().tls().enabled()).isTrue();
        assertThat(config.server().tls().generatedDirectory()).isEqualTo(Path.of("/tmp/demo/tls"));
        assertThat(config.operations().admin().address()).isEqualTo("127.0.0.1");
        SluiceDemo.requireLoopback(config);
    }

    @Test
    void aDemoConfigurationOnAnOpenAddressIsRefused() {
        ProxyConfig open = SluiceDemo.config(3399, 40000, "secret", Path.of("/tmp/demo/tls"));
        ProxyConfig opened = open.withServer(open.server().withAddress("0.0.0.0"));

        assertThatThrownBy(() -> SluiceDemo.requireLoopback(opened)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("demo mode listens on 127.0.0.1 only, not 0.0.0.0");
        ProxyConfig ipv6 = open.withServer(open.server().withAddress("::1"));
        SluiceDemo.requireLoopback(ipv6);
    }
}
