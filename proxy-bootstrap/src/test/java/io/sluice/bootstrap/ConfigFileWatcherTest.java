package io.sluice.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.sluice.Sluice;
import io.sluice.config.ConfigYaml;
import io.sluice.testing.TestMariaDb;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/** A change to config.yaml is applied; a bad one is refused once, logged, and the running config stays. */
@Tag("server")
class ConfigFileWatcherTest {

    private static String config(int weight, String maxPoolSize) {
        return """
                dataSources:
                  ds_0:
                    url: jdbc:mysql://127.0.0.1:%d/
                    username: root
                    password:
                    weight: %d
                    maxPoolSize: %s
                rules: []
                server:
                  address: 127.0.0.1
                  port: 0
                  workerThreads: 1
                admin:
                  enabled: false
                authority:
                  users:
                    - user: app
                      password: pw
                """.formatted(TestMariaDb.get().port(), weight, maxPoolSize);
    }

    private static int weight(Sluice sluice) {
        return sluice.backends().get(0).state().weight();
    }

    @Test
    void appliesAChangedFileAndRefusesABadOneKeepingTheRunningConfig(@TempDir Path conf) throws Exception {
        Path file = conf.resolve("config.yaml");
        Files.writeString(file, config(1, "10"));
        Logger logger = (Logger) LoggerFactory.getLogger(ConfigFileWatcher.class);
        ListAppender<ILoggingEvent> events = new ListAppender<>();
        events.start();
        logger.addAppender(events);
        try (Sluice sluice = Sluice.start(ConfigYaml.load(file));
                ConfigFileWatcher watcher = new ConfigFileWatcher(file, sluice)) {
            sluice.configSource(() -> ConfigYaml.load(file));

            watcher.poll();
            assertThat(events.list).as("an unchanged file is not reloaded").isEmpty();

            Files.writeString(file, config(7, "10"));
            watcher.poll();
            assertThat(weight(sluice)).isEqualTo(7);

            Files.writeString(file, config(9, "ten"));
            watcher.poll();
            watcher.poll();
            assertThat(weight(sluice)).as("the running config stays").isEqualTo(7);
            assertThat(events.list).filteredOn(e -> e.getFormattedMessage().contains("is refused")).hasSize(1)
                    .first().extracting(ILoggingEvent::getFormattedMessage).asString()
                    .contains("dataSources.ds_0.maxPoolSize: \"ten\" (expected: an integer)");

            Files.writeString(file, config(9, "12"));
            watcher.poll();
            assertThat(weight(sluice)).isEqualTo(9);
            assertThat(sluice.backends().get(0).maxPoolSize()).isEqualTo(12);
        } finally {
            logger.detachAppender(events);
        }
    }
}
