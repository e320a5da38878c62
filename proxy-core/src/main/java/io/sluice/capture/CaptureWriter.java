package io.sluice.capture;

import io.sluice.json.Json;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The capture's background thread: takes the event loops' encoded records off the queue (and, once a second, has
 * their buffers queue what they hold), gathers them into blocks, compresses, encrypts and writes them, rotates files
 * by size, and stops the capture when a limit is reached or the disk fails it. Nothing here ever runs on an event
 * loop, so a slow disk or a slow compressor costs dropped records, never a delayed session.
 *
 * <p>Why stops are clean: blocks are written whole with one positional write each; when a write fails (disk full)
 * the file is truncated back to the end of the last whole block, so readers find either whole blocks or, if even the
 * truncation fails, a damaged last block they report by file and offset. The manifest says why the capture ended.
 */
final class CaptureWriter implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(CaptureWriter.class);

    /** Records are sealed into a block once this many bytes are encoded: compression works well at this size. */
    static final int BLOCK_TARGET = 256 * 1024;
    /**
     * The event loops' buffers are swept, and a block is written, at least this often while records arrive, so a
     * stopped proxy loses little.
     */
    static final long FLUSH_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);
    /**
     * How long the writer sleeps when it finds the queue empty. Each sleep is a context switch on a machine the proxy
     * shares with its clients and server: at 2 ms the writer woke about 450 times a second under sysbench
     * read_write, which was a large part of its CPU. At 20 ms a wake-up finds about 200 records waiting at 10k
     * queries/s, far below the queue's bound (65,536 by default).
     */
    private static final long IDLE_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    /** Opens a capture file; a test seam to simulate a disk that fills up. */
    interface FileOpener {
        FileChannel open(Path file) throws IOException;
    }

    /** Creates capture files 0600 (on POSIX file systems): they hold a database's traffic. */
    static final FileOpener DEFAULT_OPENER = file -> {
        if (isPosix(file)) {
            return FileChannel.open(file, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        }
        return FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    };

    private static boolean isPosix(Path file) {
        Path dir = file.toAbsolutePath().getParent();
        return dir != null && dir.getFileSystem().supportedFileAttributeViews().contains("posix");
    }

    /** Makes {@code path} readable and writable (and, for a directory, searchable) by its owner only, on POSIX. */
    static void ownerOnly(Path path, boolean directory) throws IOException {
        if (isPosix(path)) {
            Files.setPosixFilePermissions(path, PosixFilePermissions.fromString(directory ? "rwx------" : "rw-------"));
        }
    }

    private final CaptureRun run;
    private final Runnable onStopped;
    private final FileOpener opener;
    private final Path dir;
    private final long captureId = new SecureRandom().nextLong();
    private final RecordEncoder block = new RecordEncoder(BLOCK_TARGET + 2 * RecordBuffer.CHUNK_BYTES);
    /** Reused for every block of the capture; closed when the writer stops. Null when not compressing. */
    private final BlockCompressor compressor;

    private FileChannel channel;
    private Path file;
    /** Seals the current file's blocks. */
    private BlockCodec codec;
    private int sequence;
    private int blockIndex;
    private long fileSize;
    private long recordsInFile;
    private long blockStartedNanos;
    private long totalBytes;
    private long totalRecords;

    /** Stops the capture from the writer's side: a limit was reached or the disk failed. */
    private static final class Stop extends Exception {
        final boolean failure;

        Stop(String reason, boolean failure) {
            super(reason, null, false, false);
            this.failure = failure;
        }
    }

    CaptureWriter(CaptureRun run, Runnable onStopped, FileOpener opener) {
        this.run = run;
        this.onStopped = onStopped;
        this.opener = opener;
        this.dir = run.options().output();
        this.compressor = run.options().compress() ? BlockCompressor.preferred() : null;
    }

    /** What the files' blocks are compressed with: {@code zstd}, {@code gzip} or {@code none}. */
    String compression() {
        return compressor == null ? "none" : compressor.name();
    }

    /** The format version of this capture's files: 2 only when they use zstd, so older readers read the rest. */
    private int fileVersion() {
        return compressor != null && compressor.flag() == CaptureFormat.FLAG_ZSTD ? CaptureFormat.VERSION : 1;
    }

    /** Opens the first file and writes the manifest; called on the starting thread so failures reach the caller. */
    void open() throws IOException {
        openNextFile();
        writeManifest("running");
    }

    /** Frees the compressor of a writer that will not run: {@link #open()} failed. */
    void discard() {
        if (compressor != null) {
            compressor.close();
        }
    }

    @Override
    public void run() {
        boolean failure = false;
        try {
            loop();
            finishFile();
        } catch (Stop stop) {
            // A limit or a failure: nothing more is written, so what waits is lost and counted as dropped.
            failure = stop.failure;
            run.stopAccepting(stop.getMessage());
            run.countDropped(block.records());
            run.discardQueued();
            abandonFile();
        } catch (IOException | RuntimeException e) {
            failure = true;
            run.stopAccepting("capture failed: " + e);
            run.countDropped(block.records());
            run.discardQueued();
            abandonFile();
        }
        run.markStopped();
        try {
            writeManifest("stopped");
        } catch (IOException e) {
            log.warn("Traffic capture to {}: cannot write {}: {}", dir, CaptureFormat.MANIFEST, e.toString());
        }
        String summary = "Traffic capture to {} stopped: {} ({} records in {} files, {} bytes, {} dropped)";
        CaptureStatus status = run.status();
        Object[] args = {dir, run.stopReason(), status.records(), status.files(), status.bytes(), status.dropped()};
        if (failure) {
            log.warn(summary, args);
        } else {
            log.info(summary, args);
        }
        if (compressor != null) {
            compressor.close();
        }
        onStopped.run();
    }

    private void loop() throws IOException, Stop {
        long durationNanos = run.options().duration().toNanos();
        long lastSweep = System.nanoTime();
        while (true) {
            RecordBuffer.Chunk chunk = run.poll();
            if (chunk == null) {
                if (!run.isAccepting()) {
                    // Stopped: the buffers queue what they hold, behind the chunks they handed over before.
                    run.sweep();
                    for (chunk = run.poll(); chunk != null; chunk = run.poll()) {
                        add(chunk);
                    }
                    return;
                }
                if (run.now() >= durationNanos) {
                    run.stopAccepting("duration " + CaptureStatus.format(run.options().duration()) + " reached");
                    continue; // drain what the sessions recorded before the deadline
                }
                long now = System.nanoTime();
                if (now - lastSweep >= FLUSH_INTERVAL_NANOS) {
                    lastSweep = now;
                    run.sweep(); // records of quiet loops reach the file within about a second too
                    continue;
                }
                if (block.size() > 0 && now - blockStartedNanos >= FLUSH_INTERVAL_NANOS) {
                    writeBlock(false);
                }
                LockSupport.parkNanos(IDLE_PARK_NANOS);
                continue;
            }
            add(chunk);
            if (run.now() >= durationNanos && run.isAccepting()) {
                run.stopAccepting("duration " + CaptureStatus.format(run.options().duration()) + " reached");
            }
        }
    }

    /** Adds a chunk's records to the block, sealing the block when it is full. */
    private void add(RecordBuffer.Chunk chunk) throws IOException, Stop {
        if (block.size() == 0) {
            blockStartedNanos = System.nanoTime();
        }
        block.append(chunk.bytes(), chunk.length(), chunk.records());
        recordsInFile += chunk.records();
        if (block.size() >= blockTarget()) {
            writeBlock(false);
        }
    }

    /**
     * The size at which a block is sealed: {@link #BLOCK_TARGET}, or less near {@code maxSize}, so that the capture
     * fills its budget with whole blocks instead of stopping on one block too many.
     */
    private long blockTarget() {
        return Math.max(4096, Math.min(BLOCK_TARGET, (run.options().maxSize() - totalBytes) / 2));
    }

    /** Seals and writes the pending block; rotates to the next file when this one is full. */
    private void writeBlock(boolean last) throws IOException, Stop {
        if (last) {
            block.fileEnd(recordsInFile);
        }
        if (block.size() == 0) {
            return;
        }
        checkStorage();
        byte[] framed = codec.seal(blockIndex, block.bytes(), block.size());
        if (totalBytes + framed.length > run.options().maxSize()) {
            throw new Stop("maxSize " + run.options().maxSize() + " bytes reached", false);
        }
        try {
            ByteBuffer buffer = ByteBuffer.wrap(framed);
            long position = fileSize;
            while (buffer.hasRemaining()) {
                position += channel.write(buffer, position);
            }
        } catch (IOException e) {
            throw new Stop("cannot write " + file + ": " + describe(e), true);
        }
        fileSize += framed.length;
        totalBytes += framed.length;
        totalRecords += block.records();
        run.bytesWritten = totalBytes;
        run.recordsWritten = totalRecords;
        blockIndex++;
        block.clear();
        if (!last && fileSize >= run.options().fileSize()) {
            finishFile();
            openNextFile();
        }
    }

    /**
     * Checks, once per block, that the output is still there and has room. A deleted directory does not make writes
     * to an open file fail on Linux (they go to an unlinked inode), so its absence must be looked for.
     */
    private void checkStorage() throws Stop {
        if (!Files.isDirectory(dir)) {
            throw new Stop("output directory " + dir + " disappeared", true);
        }
        if (!Files.exists(file)) {
            throw new Stop("capture file " + file + " disappeared", true);
        }
        long usable = dir.toFile().getUsableSpace();
        if (usable < run.options().minFreeSpace()) {
            throw new Stop("free disk space " + usable + " bytes is below minFreeSpace " + run.options().minFreeSpace()
                    + " bytes", false);
        }
    }

    private void openNextFile() throws IOException {
        sequence++;
        file = dir.resolve(CaptureFormat.fileName(sequence));
        int flags = (compressor != null ? compressor.flag() : 0) | (run.key() != null ? CaptureFormat.FLAG_AES_GCM : 0);
        CaptureHeader header = new CaptureHeader(fileVersion(), flags, sequence, captureId, run.baseEpochMillis(),
                run.key() != null ? run.key().check() : new byte[CaptureKey.CHECK_LENGTH]);
        byte[] headerBytes = header.toBytes();
        codec = new BlockCodec(header, headerBytes, run.key(), compressor);
        channel = opener.open(file);
        ByteBuffer buffer = ByteBuffer.wrap(headerBytes);
        long position = 0;
        while (buffer.hasRemaining()) {
            position += channel.write(buffer, position);
        }
        fileSize = headerBytes.length;
        totalBytes += headerBytes.length;
        blockIndex = 0;
        recordsInFile = 0;
        run.files = sequence;
        run.bytesWritten = totalBytes;
    }

    /** Writes the pending records and the end-of-file record, and closes the file. */
    private void finishFile() throws IOException, Stop {
        if (channel == null) {
            return;
        }
        try {
            writeBlock(true);
            channel.force(false);
        } finally {
            channel.close();
            channel = null;
        }
    }

    /**
     * After a failed write: cuts the file back to its last whole block so no reader meets a half-written one, and
     * closes it. Failures here are only logged: the capture is ending anyway.
     */
    private void abandonFile() {
        block.clear();
        if (channel == null) {
            return;
        }
        try {
            if (channel.size() > fileSize) {
                channel.truncate(fileSize);
            }
        } catch (IOException e) {
            log.debug("cannot truncate {} to {} bytes: {}", file, fileSize, e.toString());
        }
        try {
            channel.close();
        } catch (IOException e) {
            log.debug("cannot close {}: {}", file, e.toString());
        }
        channel = null;
    }

    /** The manifest: what the capture is, its limits and, once stopped, why and how much it holds. */
    private void writeManifest(String state) throws IOException {
        CaptureStatus status = run.status();
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("format", "sluice-traffic-capture");
        json.put("version", fileVersion());
        json.put("compression", compression());
        json.put("captureId", HexFormat.of().toHexDigits(captureId));
        json.put("baseEpochMillis", run.baseEpochMillis());
        json.put("state", state);
        Map<String, Object> fields = status.toJson();
        fields.remove("state");
        fields.remove("pending");
        json.putAll(fields);
        json.put("fileSize", run.options().fileSize());
        Path tmp = dir.resolve(CaptureFormat.MANIFEST + ".tmp");
        Files.deleteIfExists(tmp);
        if (isPosix(tmp)) {
            Files.createFile(tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        }
        Files.writeString(tmp, Json.writePretty(json));
        Files.move(tmp, dir.resolve(CaptureFormat.MANIFEST), StandardCopyOption.REPLACE_EXISTING,
                StandardCopyOption.ATOMIC_MOVE);
    }

    private static String describe(IOException e) {
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
}
