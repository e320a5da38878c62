package io.sluice.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.sluice.config.ProxyConfig;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

class SluiceMainTest {

    private static final String CONFIG = """
            databaseName: sharding_db
            dataSources:
              ds_0:
                url: jdbc:mysql://127.0.0.1:3306/test
                username: root
                password: backend-secret
            rules: []
            server:
              port: 3307
            authority:
              users:
                - user: root@%
                  password: proxy-secret
            """;

    private final ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
    private final ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
    private final PrintStream out = new PrintStream(outBytes, true, StandardCharsets.UTF_8);
    private final PrintStream err = new PrintStream(errBytes, true, StandardCharsets.UTF_8);

    private String out() {
        return outBytes.toString(StandardCharsets.UTF_8);
    }

    private String err() {
        return errBytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void keepsNettyPoolingLargeBuffersUnlessTheUserChose() {
        String before = System.getProperty(SluiceMain.NETTY_LOW_MEMORY);
        try {
            System.clearProperty(SluiceMain.NETTY_LOW_MEMORY);
            SluiceMain.poolLargeBuffers();
            assertThat(System.getProperty(SluiceMain.NETTY_LOW_MEMORY)).isEqualTo("false");

            System.setProperty(SluiceMain.NETTY_LOW_MEMORY, "true"); // -Dio.netty.allocator.lowMemory=true
            SluiceMain.poolLargeBuffers();
            assertThat(System.getProperty(SluiceMain.NETTY_LOW_MEMORY)).isEqualTo("true");
        } finally {
            if (before == null) {
                System.clearProperty(SluiceMain.NETTY_LOW_MEMORY);
            } else {
                System.setProperty(SluiceMain.NETTY_LOW_MEMORY, before);
            }
        }
    }

    @Test
    void helpPrintsUsageAndExitsZero() {
        assertThat(SluiceMain.run(new String[] {"--help"}, out, err)).isZero();
        assertThat(out()).startsWith("Usage: sluice [port] [conf-dir]");
        assertThat(err()).isEmpty();
    }

    @Test
    void badArgumentsExitTwoWithTheReasonAndUsage() {
        assertThat(SluiceMain.run(new String[] {"abc"}, out, err)).isEqualTo(SluiceMain.EXIT_BAD_ARGUMENTS);
        assertThat(err()).startsWith("sluice: port: abc (expected: a number in 0..65535)\nUsage: sluice");
        assertThat(out()).isEmpty();
    }

    @Test
    void badConfigFileExitsOneNamingFileLineAndKey(@TempDir Path conf) throws IOException {
        Path file = conf.resolve("config.yaml");
        Files.writeString(file, CONFIG.replace("port: 3307", "port: many"));

        int status = SluiceMain.run(new String[] {"3310", conf.toString()}, out, err);

        assertThat(status).isEqualTo(SluiceMain.EXIT_START_FAILED);
        assertThat(err()).isEqualTo("sluice: " + file + " line 9: server.port: \"many\" (expected: an integer)"
                + System.lineSeparator());
        assertThat(out()).isEmpty();
    }

    @Test
    void missingConfigFileExitsOne(@TempDir Path conf) {
        int status = SluiceMain.run(new String[] {"3310", conf.toString()}, out, err);

        assertThat(status).isEqualTo(SluiceMain.EXIT_START_FAILED);
        assertThat(err()).startsWith("sluice: " + conf.resolve("config.yaml") + ": cannot be read (NoSuchFileException");
    }

    @Test
    void portArgumentOverridesTheFile(@TempDir Path conf) throws IOException {
        Files.writeString(conf.resolve("config.yaml"), CONFIG);

        ProxyConfig fromFile = SluiceMain.load(CommandLine.parse("3307", conf.toString()));
        ProxyConfig overridden = SluiceMain.load(CommandLine.parse("13307", conf.toString()));

        assertThat(fromFile.server().port()).isEqualTo(3307);
        assertThat(overridden.server().port()).isEqualTo(13307);
        assertThat(overridden.withServer(fromFile.server())).isEqualTo(fromFile);
    }

    @Test
    void loadingLogsNamesButNeverPasswords(@TempDir Path conf) throws IOException {
        Files.writeString(conf.resolve("config.yaml"), CONFIG);
        Logger root = (Logger) LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME);
        ListAppender<ILoggingEvent> events = new ListAppender<>();
        events.start();
        root.addAppender(events);
        try {
            SluiceMain.load(CommandLine.parse("3307", conf.toString()));
        } finally {
            root.detachAppender(events);
        }

        assertThat(events.list).extracting(ILoggingEvent::getFormattedMessage)
                .anySatisfy(line -> assertThat(line).contains("ds_0", "jdbc:mysql://127.0.0.1:3306/test"))
                .anySatisfy(line -> assertThat(line).contains("root@%"))
                .allSatisfy(line -> assertThat(line).doesNotContain("secret"));
    }

    @Test
    void versionComesFromTheBuild() {
        assertThat(SluiceMain.version()).matches("\\d+\\.\\d+\\.\\d+.*");
    }

    @Test
    void versionOptionPrintsTheVersionAndExitsZero() {
        assertThat(SluiceMain.run(new String[] {"--version"}, out, err)).isZero();
        assertThat(out()).isEqualTo("Sluice " + SluiceMain.version() + " (Java " + Runtime.version() + ")"
                + System.lineSeparator());
        assertThat(err()).isEmpty();
    }

    @Test
    void anOpenAddressWithTheDefaultPasswordRefusesToStart(@TempDir Path conf) throws IOException {
        Path file = conf.resolve("config.yaml");
        Files.writeString(file, CONFIG.replace("proxy-secret", "root"));

        int status = SluiceMain.run(new String[] {"0", conf.toString()}, out, err);

        assertThat(status).isEqualTo(SluiceMain.EXIT_START_FAILED);
        assertThat(err()).startsWith("sluice: " + file + ": server.address 0.0.0.0 accepts clients from other hosts,"
                + " and root@% (the default password \"root\") can be guessed: refusing to start.");
        assertThat(out()).isEmpty();
    }
}
