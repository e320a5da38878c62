package io.sluice.bootstrap.demo;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where one demo keeps its database, certificates and MariaDB binaries: {@code demo/run} in the install directory,
 * held by one demo at a time (a lock on {@code demo/run.lock}), or a temporary directory when the install directory
 * cannot be written. Everything in it is deleted at {@link #release()}; what a killed demo left is deleted by the next.
 */
final class DemoDirectory {

    private static final Logger LOG = LoggerFactory.getLogger(DemoDirectory.class);

    /** The demo's MariaDB client, linked next to run/ so that the README can name it: demo/mariadb. */
    static final String CLIENT_LINK = "mariadb";

    private final Path path;
    private final Path lockPath;
    private final FileChannel lockFile;
    private final FileLock lock;

    private DemoDirectory(Path path, Path lockPath, FileChannel lockFile, FileLock lock) {
        this.path = path;
        this.lockPath = lockPath;
        this.lockFile = lockFile;
        this.lock = lock;
    }

    /**
     * Claims {@code home/demo/run}, or a new temporary directory when {@code home} is null or not writable.
     *
     * @throws IllegalStateException when another demo of this install holds it
     */
    static DemoDirectory claim(Path home) throws IOException {
        Path demo = home == null ? null : home.resolve("demo");
        if (demo != null) {
            try {
                Files.createDirectories(demo);
            } catch (IOException e) {
                demo = null;
            }
        }
        if (demo == null || !Files.isWritable(demo)) {
            return new DemoDirectory(Files.createTempDirectory("sluice-demo-"), null, null, null);
        }
        Path lockPath = demo.resolve("run.lock");
        FileChannel channel = FileChannel.open(lockPath, StandardOpenOption.CREATE,
                StandardOpenOption.WRITE);
        FileLock lock = channel.tryLock();
        if (lock == null) {
            channel.close();
            throw new IllegalStateException("another demo runs from " + home
                    + ": stop it first (bin/stop.sh, or Ctrl-C where it runs in the foreground)");
        }
        Path run = demo.resolve("run");
        if (Files.exists(run)) {
            LOG.info("Demo: deleting {}, left by a demo that did not stop cleanly", run);
            deleteRecursively(run);
        }
        Files.deleteIfExists(demo.resolve(CLIENT_LINK));
        Files.createDirectories(run);
        return new DemoDirectory(run, lockPath, channel, lock);
    }

    Path path() {
        return path;
    }

    /**
     * The command that runs {@code client}: {@code demo/mariadb}, a link to it made here, when the demo works in the
     * install directory, else the client's own path.
     */
    Path linkClient(Path client) {
        if (lockPath == null) {
            return client;
        }
        Path link = lockPath.resolveSibling(CLIENT_LINK);
        try {
            Files.deleteIfExists(link);
            Files.createSymbolicLink(link, path.getFileName().resolve(path.relativize(client)));
            return link;
        } catch (IOException | UnsupportedOperationException e) {
            LOG.info("Demo: no link {} to the MariaDB client: {}", link, e.toString());
            return client;
        }
    }

    /** Deletes the directory and everything in it, and lets the next demo have it. */
    void release() {
        try {
            deleteRecursively(path);
            if (lockPath != null) {
                Files.deleteIfExists(lockPath.resolveSibling(CLIENT_LINK));
                // Before the release: a demo starting now creates a new file and locks that.
                Files.deleteIfExists(lockPath);
            }
        } catch (IOException | UncheckedIOException e) {
            LOG.warn("Demo: cannot delete {}: {}", path, e.toString());
        }
        if (lock != null) {
            try {
                lock.release();
                lockFile.close();
            } catch (IOException e) {
                LOG.warn("Demo: cannot release {}: {}", path, e.toString());
            }
        }
    }

    private static void deleteRecursively(Path directory) throws IOException {
        if (!Files.exists(directory)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(directory)) {
            for (Path each : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(each);
            }
        }
    }
}
