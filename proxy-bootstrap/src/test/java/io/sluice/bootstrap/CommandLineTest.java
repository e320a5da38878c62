package io.sluice.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class CommandLineTest {

    @Test
    void noArgumentsMeansTheFilesPortAndConf() {
        CommandLine commandLine = CommandLine.parse();
        assertThat(commandLine.port()).isNull();
        assertThat(commandLine.confDir()).isEqualTo(Path.of("conf"));
        assertThat(commandLine.configFile()).isEqualTo(Path.of("conf", "config.yaml"));
        assertThat(commandLine.help()).isFalse();
    }

    @Test
    void portThenConfDirAsShardingSphereProxy() {
        assertThat(CommandLine.parse("3308")).isEqualTo(new CommandLine(3308, Path.of("conf"), false));
        assertThat(CommandLine.parse("0", "/etc/sluice"))
                .isEqualTo(new CommandLine(0, Path.of("/etc/sluice"), false));
        assertThat(CommandLine.parse("3307", "my conf").configFile()).isEqualTo(Path.of("my conf", "config.yaml"));
    }

    @Test
    void helpWinsOverEverythingElse() {
        assertThat(CommandLine.parse("--help").help()).isTrue();
        assertThat(CommandLine.parse("-h").help()).isTrue();
        assertThat(CommandLine.parse("3307", "--help").help()).isTrue();
        assertThat(CommandLine.parse("not-a-port", "a", "b", "--help").help()).isTrue();
    }

    @Test
    void versionIsAskedForAnywhereButHelpComesFirst() {
        assertThat(CommandLine.parse("--version").version()).isTrue();
        assertThat(CommandLine.parse("3307", "--version").version()).isTrue();
        assertThat(CommandLine.parse("3307").version()).isFalse();
        assertThat(CommandLine.parse("--version", "--help").help()).isTrue();
    }

    @Test
    void refusesBadArguments() {
        assertThatThrownBy(() -> CommandLine.parse("conf"))
                .hasMessage("port: conf (expected: a number in 0..65535)");
        assertThatThrownBy(() -> CommandLine.parse("65536"))
                .hasMessage("port: 65536 (expected: a number in 0..65535)");
        assertThatThrownBy(() -> CommandLine.parse("-1"))
                .hasMessage("unknown option: -1 (expected: [port] [conf-dir], --help or --version)");
        assertThatThrownBy(() -> CommandLine.parse("--port=3307"))
                .hasMessage("unknown option: --port=3307 (expected: [port] [conf-dir], --help or --version)");
        assertThatThrownBy(() -> CommandLine.parse("3307", "conf", "extra"))
                .hasMessage("too many arguments: 3307 conf extra (expected: [port] [conf-dir])");
        assertThatThrownBy(() -> CommandLine.parse("3307", ""))
                .hasMessage("empty argument (expected: [port] [conf-dir])");
    }

    @Test
    void demoTakesAPortAndNothingElse() {
        assertThat(CommandLine.parse("--demo")).isEqualTo(new CommandLine(null, Path.of("conf"), false, false, true));
        assertThat(CommandLine.parse("--demo", "3399").port()).isEqualTo(3399);
        assertThat(CommandLine.parse("--demo", "3399").demo()).isTrue();
        assertThat(CommandLine.parse("3399").demo()).isFalse();
    }

    @Test
    void demoRefusesAConfDirSoNoRealConfigurationMeetsIt() {
        assertThatThrownBy(() -> CommandLine.parse("--demo", "3307", "/etc/sluice"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--demo takes a port only, not a conf dir")
                .hasMessageContaining("listens on 127.0.0.1");
        assertThatThrownBy(() -> CommandLine.parse("--demo", "--foreground"))
                .hasMessageContaining("unknown option after --demo: --foreground");
        assertThatThrownBy(() -> CommandLine.parse("3307", "--demo"))
                .hasMessageContaining("unknown option: --demo");
    }
}
