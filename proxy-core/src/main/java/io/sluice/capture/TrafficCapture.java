package io.sluice.capture;

import io.sluice.config.CaptureConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Traffic capture for one proxy: at most one {@link CaptureRun} at a time, started and stopped at run time. Client
 * sessions read {@link #run()} once per command (one volatile read, the whole cost while no capture runs).
 *
 * <p>A proxy's capture is confined ({@link CaptureConfig}, decision 131): its {@code output} must lie under
 * {@code capture.directory} and its {@code keyFile} under {@code capture.keyDirectory}, symbolic links followed, and a
 * refusal says nothing of what is outside them (not whether a file exists, nor its size). Files are created 0600.
 */
public final class TrafficCapture {
    private static final Logger log = LoggerFactory.getLogger(TrafficCapture.class);
    private static final long STOP_WAIT_MILLIS = 30_000;

    private final CaptureWriter.FileOpener opener;
    /** Where captures may go and keys come from; {@code null}: anywhere (a capture driven by code of its own). */
    private final CaptureConfig limits;
    private volatile CaptureRun run;
    /** The run being written or last written, for the status after it stopped. */
    private CaptureRun last;
    private Thread writerThread;

    /** A capture that may write anywhere: for code that chooses its own paths (tools, tests). */
    public TrafficCapture() {
        this(CaptureWriter.DEFAULT_OPENER, null);
    }

    /** A proxy's capture: outputs under {@code limits.directory()}, key files under {@code limits.keyDirectory()}. */
    public TrafficCapture(CaptureConfig limits) {
        this(CaptureWriter.DEFAULT_OPENER, limits);
    }

    /** With a file opener of the test's, to simulate a disk that fails. */
    TrafficCapture(CaptureWriter.FileOpener opener) {
        this(opener, null);
    }

    private TrafficCapture(CaptureWriter.FileOpener opener, CaptureConfig limits) {
        this.opener = opener;
        this.limits = limits;
    }

    /** The running capture, or {@code null}: what sessions check per command. */
    public CaptureRun run() {
        return run;
    }

    /**
     * Starts a capture.
     *
     * @throws CaptureException when one is already running ({@code CONFLICT}), the options are unusable
     *     ({@code INVALID}) or the output directory cannot take a capture ({@code STORAGE})
     */
    public synchronized CaptureStatus start(CaptureOptions options) {
        if (last != null && !last.isStopped()) {
            throw new CaptureException(CaptureException.Kind.CONFLICT, "a capture is already running, to "
                    + last.options().output() + " (stop it first)");
        }
        options = confine(options);
        CaptureKey key = options.keyFile() == null ? null : CaptureKey.load(options.keyFile());
        Path dir = options.output().toAbsolutePath();
        prepareDirectory(dir, options);
        CaptureRun started = new CaptureRun(options.output().isAbsolute() ? options : withOutput(options, dir), key);
        CaptureWriter writer = new CaptureWriter(started, () -> ended(started), opener);
        try {
            writer.open();
        } catch (IOException e) {
            writer.discard();
            throw new CaptureException(CaptureException.Kind.STORAGE, "output: " + dir + ": cannot write ("
                    + e.getMessage() + ")", e);
        }
        Thread thread = new Thread(writer, "sluice-capture-writer");
        thread.setDaemon(true);
        last = started;
        writerThread = thread;
        run = started;
        thread.start();
        log.info("Traffic capture to {} started (duration {}, maxSize {} bytes, compression {}{})", dir,
                CaptureStatus.format(options.duration()), options.maxSize(), writer.compression(),
                key != null ? ", AES-GCM encrypted" : "");
        return started.status();
    }

    /**
     * The options with {@code output} and {@code keyFile} taken from the capture's directories when relative, or a
     * refusal when either lies outside them. Nothing outside is looked at before the refusal.
     */
    private CaptureOptions confine(CaptureOptions options) {
        if (limits == null) {
            return options;
        }
        try {
            Files.createDirectories(limits.directory());
        } catch (IOException e) {
            throw new CaptureException(CaptureException.Kind.STORAGE, "capture.directory " + limits.directory()
                    + ": cannot create (" + e + ")", e);
        }
        Path output = within("output", "capture.directory", limits.directory(), options.output());
        Path keyFile = options.keyFile() == null ? null
                : within("keyFile", "capture.keyDirectory", limits.keyDirectory(), options.keyFile());
        return new CaptureOptions(output, options.duration(), options.compress(), options.maxSize(),
                options.fileSize(), options.minFreeSpace(), keyFile, options.queueRecords(), options.queueBytes(),
                options.maxPayload());
    }

    /** {@code given}, from {@code root} when relative, if it lies under {@code root} (links followed). */
    private static Path within(String key, String setting, Path root, Path given) {
        CaptureException outside = new CaptureException(CaptureException.Kind.INVALID, key + ": \"" + given
                + "\" (expected: a path under " + setting + ", " + root + ")");
        Path path;
        try {
            path = root.resolve(given).normalize();
        } catch (InvalidPathException e) {
            throw outside;
        }
        if (!path.startsWith(root) || path.equals(root)) {
            throw outside; // decided on the names alone: nothing outside was touched
        }
        // A link under the root may point out of it: compare where the part that exists really is.
        try {
            if (!realPath(path).startsWith(realPath(root))) {
                throw outside;
            }
        } catch (IOException e) {
            throw outside;
        }
        return path;
    }

    /** The real path of the longest part of {@code path} that exists, with the rest appended. */
    private static Path realPath(Path path) throws IOException {
        Path existing = path;
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        if (existing == null) {
            return path;
        }
        return existing.toRealPath().resolve(existing.relativize(path)).normalize();
    }

    private static CaptureOptions withOutput(CaptureOptions o, Path dir) {
        return new CaptureOptions(dir, o.duration(), o.compress(), o.maxSize(), o.fileSize(), o.minFreeSpace(),
                o.keyFile(), o.queueRecords(), o.queueBytes(), o.maxPayload());
    }

    private static void prepareDirectory(Path dir, CaptureOptions options) {
        try {
            if (!Files.isDirectory(dir)) {
                Files.createDirectories(dir);
                CaptureWriter.ownerOnly(dir, true); // what it will hold may be read by nobody else
            }
        } catch (IOException e) {
            throw new CaptureException(CaptureException.Kind.STORAGE, "output: " + dir + ": cannot create ("
                    + e + ")", e);
        }
        if (!Files.isWritable(dir)) {
            throw new CaptureException(CaptureException.Kind.STORAGE, "output: " + dir + ": not writable");
        }
        try {
            if (!CaptureFormat.files(dir).isEmpty() || Files.exists(dir.resolve(CaptureFormat.MANIFEST))) {
                throw new CaptureException(CaptureException.Kind.CONFLICT, "output: " + dir
                        + ": already holds a capture (expected: an empty or new directory)");
            }
        } catch (IOException e) {
            throw new CaptureException(CaptureException.Kind.STORAGE, "output: " + dir + ": cannot list (" + e + ")",
                    e);
        }
        long usable = dir.toFile().getUsableSpace();
        if (usable < options.minFreeSpace()) {
            throw new CaptureException(CaptureException.Kind.STORAGE, "output: " + dir + ": " + usable
                    + " bytes free, below minFreeSpace " + options.minFreeSpace() + " bytes");
        }
    }

    /**
     * Stops the running capture: sessions stop recording at once, the writer writes what was queued, closes its
     * file and the manifest. Returns once it has (or after 30 s).
     *
     * @throws CaptureException of kind CONFLICT when no capture is running
     */
    public CaptureStatus stop() {
        return stop("stopped on request", true);
    }

    /**
     * Stops the running capture if there is one, giving {@code reason}.
     *
     * @param failIfIdle whether to throw when none runs, rather than return the status
     */
    public CaptureStatus stop(String reason, boolean failIfIdle) {
        CaptureRun stopping;
        Thread thread;
        synchronized (this) {
            stopping = last;
            thread = writerThread;
            if (stopping == null || stopping.isStopped()) {
                if (failIfIdle) {
                    throw new CaptureException(CaptureException.Kind.CONFLICT, "no capture is running");
                }
                return status();
            }
            stopping.stopAccepting(reason);
            run = null;
        }
        try {
            thread.join(STOP_WAIT_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return stopping.status();
    }

    /** The running capture's status, else the last one's, else {@code idle}. */
    public synchronized CaptureStatus status() {
        return last == null ? CaptureStatus.IDLE : last.status();
    }

    /** Called by the writer thread when its run has ended, whatever the reason. */
    private void ended(CaptureRun ended) {
        synchronized (this) {
            if (run == ended) {
                run = null;
            }
        }
    }

    /** Waits for the writer of the current or last run to finish; for tests. */
    boolean awaitStopped(long timeout, TimeUnit unit) throws InterruptedException {
        Thread thread;
        synchronized (this) {
            thread = writerThread;
        }
        if (thread != null) {
            thread.join(unit.toMillis(timeout));
            return !thread.isAlive();
        }
        return true;
    }
}
