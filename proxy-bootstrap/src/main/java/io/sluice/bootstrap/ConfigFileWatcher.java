package io.sluice.bootstrap;

import io.sluice.api.ReloadResult;
import io.sluice.Sluice;
import io.sluice.config.ConfigException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reloads config.yaml when its content changes ({@code reload.watchFile}, on by default).
 *
 * <p>It polls the file's content every {@value #PERIOD_MILLIS} ms rather than using a {@code WatchService}: in
 * Kubernetes a ConfigMap is updated by swapping a symlink, which a watch on the directory does not report, and an
 * editor that writes a temporary file and renames it is seen the same way as one that writes in place. A file caught
 * half-written is refused like any bad file, the running configuration stays, and the complete file is applied at
 * the next poll.
 */
final class ConfigFileWatcher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ConfigFileWatcher.class);
    static final long PERIOD_MILLIS = 2000;

    private final Path file;
    private final Sluice sluice;
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread thread = new Thread(r, "sluice-config-watch");
        thread.setDaemon(true);
        return thread;
    });
    private byte[] lastDigest;
    private byte[] lastRefused;

    ConfigFileWatcher(Path file, Sluice sluice) {
        this.file = file;
        this.sluice = sluice;
        this.lastDigest = digest();
    }

    void start() {
        scheduler.scheduleWithFixedDelay(this::poll, PERIOD_MILLIS, PERIOD_MILLIS, TimeUnit.MILLISECONDS);
        log.info("Watching {} for changes (reload.watchFile)", file);
    }

    /** One poll: reloads when the content differs from what was last applied. */
    void poll() {
        byte[] now = digest();
        if (now == null || Arrays.equals(now, lastDigest) || Arrays.equals(now, lastRefused)) {
            return;
        }
        try {
            ReloadResult result = sluice.reload();
            lastDigest = now;
            lastRefused = null;
            log.info("{} changed: reloaded ({} change(s), {} needing a restart)", file, result.changes().size(),
                    result.restartRequired().size());
        } catch (ConfigException e) {
            lastRefused = now; // said once; said again only when the file changes again
            log.error("{} changed but is refused, the running config stays: {}", file, e.getMessage());
        } catch (RuntimeException e) {
            lastRefused = now;
            log.error("{} changed but could not be applied; the running config stays", file, e);
        }
    }

    private byte[] digest() {
        try {
            return MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file));
        } catch (IOException e) {
            return null; // gone for a moment (a rename in progress): look again at the next poll
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
    }
}
