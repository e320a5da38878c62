package io.sluice.capture;

import static io.sluice.capture.CaptureFormat.BLOCK_HEADER_SIZE;
import static io.sluice.capture.CaptureFormat.HEADER_SIZE;
import static io.sluice.capture.CaptureFormat.MAX_BLOCK;

import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Reads a capture directory's records in file order: checks each file's header against the capture's, each block's
 * frame, and has {@link BlockCodec} open the blocks and {@link RecordDecoder} decode their records. Every problem is
 * a {@link CaptureFormatException} naming the file and the byte offset of the damaged block. Not thread-safe.
 */
public final class CaptureReader implements Closeable {
    private final List<Path> files;
    private final CaptureKey key;
    private final RecordDecoder decoder = new RecordDecoder();
    private final List<CaptureHeader> headers = new ArrayList<>();
    private int fileIndex = -1;
    private Path file;
    private InputStream in;
    private long offset;
    private long captureId;
    private BlockCodec codec;
    /** The current file's decompressor, {@code null} when its blocks are not compressed. */
    private BlockCompressor compressor;
    private int blockIndex;
    private ByteBuffer block;
    private long blockOffset;
    private int recordInBlock;
    private boolean fileEnded;

    private CaptureReader(List<Path> files, CaptureKey key) {
        this.files = files;
        this.key = key;
    }

    /**
     * Opens the capture in {@code dir}.
     *
     * @param key the key it was encrypted with, or {@code null}
     * @throws IOException when the directory holds no capture file
     */
    public static CaptureReader open(Path dir, CaptureKey key) throws IOException {
        List<Path> files = CaptureFormat.files(dir);
        if (files.isEmpty()) {
            throw new IOException(dir + ": no capture files (expected: capture-000001.cap, ...)");
        }
        return new CaptureReader(files, key);
    }

    /** Reads every record of a capture; for tests and small captures. */
    public static List<CaptureRecord> readAll(Path dir, CaptureKey key) throws IOException {
        List<CaptureRecord> records = new ArrayList<>();
        try (CaptureReader reader = open(dir, key)) {
            for (CaptureRecord r = reader.next(); r != null; r = reader.next()) {
                records.add(r);
            }
        }
        return records;
    }

    /** The files being read, in order. */
    public List<Path> files() {
        return files;
    }

    /** The header of the first file, once {@link #next()} has been called. */
    public CaptureHeader header() {
        return headers.isEmpty() ? null : headers.get(0);
    }

    /**
     * The next record, or {@code null} after the last one.
     *
     * @throws CaptureFormatException naming the file and offset of a damaged or truncated block
     */
    public CaptureRecord next() throws IOException {
        while (true) {
            if (block != null && block.hasRemaining()) {
                CaptureRecord record = decode();
                if (record != null) {
                    return record;
                }
                fileEnded = true;
                continue;
            }
            block = null;
            if (in != null && readBlock()) {
                continue;
            }
            if (!nextFile()) {
                return null;
            }
        }
    }

    private boolean nextFile() throws IOException {
        closeFile();
        if (++fileIndex >= files.size()) {
            return false;
        }
        file = files.get(fileIndex);
        in = Files.newInputStream(file);
        offset = 0;
        blockIndex = 0;
        fileEnded = false;
        byte[] headerBytes = new byte[HEADER_SIZE];
        int n = in.readNBytes(headerBytes, 0, HEADER_SIZE);
        if (n < HEADER_SIZE) {
            throw new CaptureFormatException(file, n, "truncated header (" + n + " of " + HEADER_SIZE + " bytes)");
        }
        CaptureHeader header = CaptureHeader.parse(headerBytes, file);
        offset = HEADER_SIZE;
        if (fileIndex == 0) {
            captureId = header.captureId();
        } else if (header.captureId() != captureId) {
            throw new CaptureFormatException(file, 16, "belongs to another capture than " + files.get(0));
        }
        if (header.sequence() != fileIndex + 1) {
            throw new CaptureFormatException(file, 12, "is file " + header.sequence() + " of its capture (expected: "
                    + (fileIndex + 1) + "; is " + CaptureFormat.fileName(fileIndex + 1) + " missing?)");
        }
        if (header.encrypted()) {
            if (key == null) {
                throw new CaptureFormatException(file, 10, "encrypted (expected: the capture's key file)");
            }
            if (!Arrays.equals(key.check(), header.keyCheck())) {
                throw new CaptureFormatException(file, 32, "encrypted with another key than the one given");
            }
        }
        headers.add(header);
        compressor = BlockCompressor.of(header);
        codec = new BlockCodec(header, headerBytes, key, compressor);
        return true;
    }

    /** Reads the next block of the current file; false at its clean end. */
    private boolean readBlock() throws IOException {
        blockOffset = offset;
        byte[] frame = new byte[BLOCK_HEADER_SIZE];
        int n = in.readNBytes(frame, 0, BLOCK_HEADER_SIZE);
        if (n == 0) {
            return false;
        }
        if (fileEnded) {
            throw new CaptureFormatException(file, blockOffset, "data after the end-of-file record");
        }
        if (n < BLOCK_HEADER_SIZE) {
            throw new CaptureFormatException(file, blockOffset, "truncated: the file ends inside a block header ("
                    + n + " of " + BLOCK_HEADER_SIZE + " bytes)");
        }
        ByteBuffer b = ByteBuffer.wrap(frame).order(ByteOrder.LITTLE_ENDIAN);
        int length = b.getInt();
        int crc = b.getInt();
        if (length <= 0 || length > MAX_BLOCK) {
            throw new CaptureFormatException(file, blockOffset, "corrupted: block length " + (length & 0xFFFFFFFFL)
                    + " (expected: 1.." + MAX_BLOCK + ")");
        }
        byte[] stored = in.readNBytes(length);
        if (stored.length < length) {
            throw new CaptureFormatException(file, blockOffset, "truncated: the file ends inside a block ("
                    + stored.length + " of " + length + " bytes)");
        }
        offset += BLOCK_HEADER_SIZE + length;
        block = ByteBuffer.wrap(codec.open(blockIndex, crc, stored, file, blockOffset)).order(ByteOrder.LITTLE_ENDIAN);
        blockIndex++;
        recordInBlock = 0;
        return true;
    }

    /** Decodes one record from the current block; {@code null} for the end-of-file record. */
    private CaptureRecord decode() throws CaptureFormatException {
        recordInBlock++;
        try {
            return decoder.decode(block);
        } catch (RuntimeException | EOFException e) {
            throw new CaptureFormatException(file, blockOffset, "corrupted: record " + recordInBlock
                    + " of the block: " + e, e);
        }
    }

    private void closeFile() throws IOException {
        if (compressor != null) {
            compressor.close();
            compressor = null;
        }
        if (in != null) {
            in.close();
            in = null;
        }
    }

    @Override
    public void close() throws IOException {
        closeFile();
    }
}
