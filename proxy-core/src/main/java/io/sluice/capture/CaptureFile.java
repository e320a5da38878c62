package io.sluice.capture;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdException;
import io.sluice.capture.CaptureRecord.ChangeUser;
import io.sluice.capture.CaptureRecord.CommandRecord;
import io.sluice.capture.CaptureRecord.Outcome;
import io.sluice.capture.CaptureRecord.SessionBegin;
import io.sluice.capture.CaptureRecord.SessionEnd;
import java.io.ByteArrayInputStream;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.CRC32;
import java.util.zip.Deflater;
import java.util.zip.GZIPInputStream;

/**
 * The capture file format, versions 1 and 2 (docs/traffic-capture.md is the reference). A capture is a directory of
 * files {@code capture-000001.cap}, {@code capture-000002.cap}, ... and a {@code capture.json} manifest. Each file is
 * a 40-byte header followed by blocks; each block is {@code u32 length, u32 CRC-32, stored bytes}, where the stored
 * bytes are the block's records, zstd- or gzip-compressed and then AES-GCM-sealed when the header says so. Blocks
 * are written whole, so a file cut short by a full disk or a crash loses at most its last block, and the reader
 * says where.
 *
 * <p>All integers are little-endian, as in the MySQL protocol.
 */
public final class CaptureFile {
    /**
     * The newest format version: 2 added zstd ({@link #FLAG_ZSTD}). A file is written as version 1 when it uses
     * nothing of version 2, so that older readers still read gzip and uncompressed captures.
     */
    public static final int VERSION = 2;
    /** The oldest format version this reader reads. */
    static final int OLDEST_VERSION = 1;
    public static final String MANIFEST = "capture.json";
    static final int HEADER_SIZE = 40;
    static final int BLOCK_HEADER_SIZE = 8;
    /** The largest stored block a reader accepts: a guard against reading a corrupted length. */
    static final int MAX_BLOCK = 64 << 20;

    static final int FLAG_GZIP = 1;
    static final int FLAG_AES_GCM = 2;
    /** Since version 2. */
    static final int FLAG_ZSTD = 4;
    private static final int KNOWN_FLAGS = FLAG_GZIP | FLAG_AES_GCM | FLAG_ZSTD;

    static final int SESSION_BEGIN = 1;
    static final int SESSION_END = 2;
    static final int CHANGE_USER = 3;
    static final int COMMAND = 4;
    /** The last record of a file closed cleanly: the count of records in the file before it. */
    static final int FILE_END = 0x7F;

    /** Little-endian views of a byte array: one store per field where the relay threads encode records. */
    private static final VarHandle INT_LE = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle LONG_LE =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private static final byte[] MAGIC = "SLUICECP".getBytes(StandardCharsets.US_ASCII);
    private static final Pattern FILE_NAME = Pattern.compile("capture-(\\d{6})\\.cap");

    private CaptureFile() {
    }

    /** The name of the {@code sequence}th file of a capture (from 1). */
    public static String fileName(int sequence) {
        return String.format("capture-%06d.cap", sequence);
    }

    /** The capture files in {@code dir}, in order. */
    public static List<Path> files(Path dir) throws IOException {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.filter(p -> FILE_NAME.matcher(p.getFileName().toString()).matches()).sorted().toList();
        }
    }

    /**
     * What every file of a capture starts with.
     *
     * @param flags {@link #FLAG_GZIP} or {@link #FLAG_ZSTD}, and {@link #FLAG_AES_GCM}
     * @param sequence the file's place in the capture, from 1
     * @param captureId a random id shared by the files of one capture
     * @param baseEpochMillis the wall-clock time of the capture's time 0
     * @param keyCheck a fingerprint of the key for encrypted files, zeros otherwise
     */
    public record Header(int version, int flags, int sequence, long captureId, long baseEpochMillis, byte[] keyCheck) {

        public boolean compressed() {
            return (flags & (FLAG_GZIP | FLAG_ZSTD)) != 0;
        }

        public boolean zstd() {
            return (flags & FLAG_ZSTD) != 0;
        }

        public boolean encrypted() {
            return (flags & FLAG_AES_GCM) != 0;
        }

        byte[] toBytes() {
            ByteBuffer b = ByteBuffer.allocate(HEADER_SIZE).order(ByteOrder.LITTLE_ENDIAN);
            b.put(MAGIC).putShort((short) version).putShort((short) flags).putInt(sequence).putLong(captureId)
                    .putLong(baseEpochMillis).put(keyCheck, 0, CaptureKey.CHECK_LENGTH);
            return b.array();
        }

        static Header parse(byte[] bytes, Path file) throws CaptureFormatException {
            if (!Arrays.equals(Arrays.copyOf(bytes, MAGIC.length), MAGIC)) {
                throw new CaptureFormatException(file, 0, "not a Sluice capture file (no SLUICECP magic)");
            }
            ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
            b.position(MAGIC.length);
            int version = b.getShort() & 0xFFFF;
            if (version < OLDEST_VERSION || version > VERSION) {
                throw new CaptureFormatException(file, MAGIC.length, "format version " + version + " (expected: "
                        + OLDEST_VERSION + " to " + VERSION + "; use the Sluice release that wrote it)");
            }
            int flags = b.getShort() & 0xFFFF;
            if ((flags & ~KNOWN_FLAGS) != 0 || (flags & (FLAG_GZIP | FLAG_ZSTD)) == (FLAG_GZIP | FLAG_ZSTD)
                    || (version < 2 && (flags & FLAG_ZSTD) != 0)) {
                throw new CaptureFormatException(file, MAGIC.length + 2, "flags 0x" + Integer.toHexString(flags)
                        + " are not those of a version " + version + " file (use the Sluice release that wrote it)");
            }
            int sequence = b.getInt();
            long captureId = b.getLong();
            long base = b.getLong();
            byte[] check = new byte[CaptureKey.CHECK_LENGTH];
            b.get(check);
            return new Header(version, flags, sequence, captureId, base, check);
        }
    }

    // ---- writing ------------------------------------------------------------------------------------------------

    /**
     * Encodes records into a growing byte array: a {@link RecordBuffer}'s records on the thread that produces them,
     * and the writer's block, which it fills with those buffers' bytes. Not thread-safe: each has one owner.
     */
    static final class BlockBuilder {
        private final int initialCapacity;
        private byte[] buf;
        private int size;
        private int records;

        BlockBuilder(int initialCapacity) {
            this.initialCapacity = initialCapacity;
            this.buf = new byte[initialCapacity];
        }

        int size() {
            return size;
        }

        int records() {
            return records;
        }

        byte[] bytes() {
            return buf;
        }

        void clear() {
            size = 0;
            records = 0;
        }

        /**
         * Hands over the encoded bytes (the array itself, of which the first {@link #size()} bytes count) and starts
         * again with a new array: the producing thread's buffer goes to the writer without being copied.
         */
        byte[] detach() {
            byte[] detached = buf;
            buf = new byte[initialCapacity];
            clear();
            return detached;
        }

        /** Appends {@code length} bytes of records another builder encoded. */
        void append(byte[] encoded, int length, int recordCount) {
            ensure(length);
            System.arraycopy(encoded, 0, buf, size, length);
            size += length;
            records += recordCount;
        }

        /** Encodes a command record from its fields, without a {@link CommandRecord} (the relay's path). */
        void addCommand(int sessionId, long timeNanos, long durationNanos, int command, byte[] payload,
                boolean truncated, Outcome outcome, int errorCode, long affectedRows, long rows, long statementId) {
            records++;
            int at = begin(COMMAND);
            u32(sessionId).u64(timeNanos).u64(durationNanos).u8(command).u8(outcome.ordinal()).u16(errorCode)
                    .u64(affectedRows).u64(rows).u32((int) statementId).u8(truncated ? 1 : 0).u32(payload.length)
                    .bytes(payload);
            end(at);
        }

        void add(CaptureRecord record) {
            if (record instanceof CommandRecord r) {
                addCommand(r.sessionId(), r.timeNanos(), r.durationNanos(), r.command(), r.payload(), r.truncated(),
                        r.outcome(), r.errorCode(), r.affectedRows(), r.rows(), r.statementId());
                return;
            }
            records++;
            if (record instanceof SessionBegin r) {
                int at = begin(SESSION_BEGIN);
                u32(r.sessionId()).u64(r.timeNanos()).u8(r.openBefore() ? 1 : 0).u32(r.capabilities())
                        .u16(r.collationId()).str(r.user()).str(r.schema()).str(r.client());
                end(at);
            } else if (record instanceof SessionEnd r) {
                int at = begin(SESSION_END);
                u32(r.sessionId()).u64(r.timeNanos());
                end(at);
            } else if (record instanceof ChangeUser r) {
                int at = begin(CHANGE_USER);
                u32(r.sessionId()).u64(r.timeNanos()).str(r.user()).str(r.schema());
                end(at);
            }
        }

        void fileEnd(long recordsInFile) {
            int at = begin(FILE_END);
            u64(recordsInFile);
            end(at);
        }

        private int begin(int type) {
            u8(type);
            int at = size;
            u32(0); // the body length, patched by end()
            return at;
        }

        private void end(int at) {
            INT_LE.set(buf, at, size - at - 4);
        }

        private void ensure(int more) {
            if (size + more > buf.length) {
                buf = Arrays.copyOf(buf, Math.max(buf.length * 2, size + more));
            }
        }

        private BlockBuilder u8(int v) {
            ensure(1);
            buf[size++] = (byte) v;
            return this;
        }

        private BlockBuilder u16(int v) {
            ensure(2);
            buf[size++] = (byte) v;
            buf[size++] = (byte) (v >>> 8);
            return this;
        }

        private BlockBuilder u32(int v) {
            ensure(4);
            INT_LE.set(buf, size, v);
            size += 4;
            return this;
        }

        private BlockBuilder u64(long v) {
            ensure(8);
            LONG_LE.set(buf, size, v);
            size += 8;
            return this;
        }

        private BlockBuilder bytes(byte[] b) {
            ensure(b.length);
            System.arraycopy(b, 0, buf, size, b.length);
            size += b.length;
            return this;
        }

        private BlockBuilder str(String s) {
            if (s == null) {
                return u32(-1);
            }
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            return u32(b.length).bytes(b);
        }
    }

    /**
     * Turns a block's records into the bytes written to the file: compressed and sealed as the header says, then
     * framed with length and CRC-32.
     *
     * @param compressor the writer's own, of the kind the header's flags name
     */
    static byte[] seal(Header header, byte[] headerBytes, int blockIndex, byte[] content, int length, CaptureKey key,
            BlockCompressor compressor) {
        byte[] stored = content;
        int storedLength = length;
        if (header.compressed()) {
            stored = compressor.compress(content, length);
            storedLength = stored.length;
        }
        if (header.encrypted()) {
            stored = key.seal(stored, storedLength, associatedData(headerBytes, blockIndex));
            storedLength = stored.length;
        }
        CRC32 crc = new CRC32();
        crc.update(stored, 0, storedLength);
        byte[] framed = new byte[BLOCK_HEADER_SIZE + storedLength];
        ByteBuffer.wrap(framed).order(ByteOrder.LITTLE_ENDIAN).putInt(storedLength).putInt((int) crc.getValue())
                .put(stored, 0, storedLength);
        return framed;
    }

    /** gzip's fixed 10-byte member header: magic, deflate, no flags, no time, no extra flags, OS unknown. */
    private static final byte[] GZIP_HEADER = {0x1f, (byte) 0x8b, 8, 0, 0, 0, 0, 0, 0, (byte) 0xff};

    /** One gzip member holding the first {@code length} bytes of {@code content}, deflated by {@code deflater}. */
    static byte[] gzip(byte[] content, int length, Deflater deflater) {
        deflater.reset();
        deflater.setInput(content, 0, length);
        deflater.finish();
        byte[] out = new byte[GZIP_HEADER.length + length + length / 1000 + 64 + 8];
        System.arraycopy(GZIP_HEADER, 0, out, 0, GZIP_HEADER.length);
        int size = GZIP_HEADER.length;
        while (!deflater.finished()) {
            if (size == out.length - 8) {
                out = Arrays.copyOf(out, out.length * 2);
            }
            size += deflater.deflate(out, size, out.length - 8 - size);
        }
        CRC32 crc = new CRC32();
        crc.update(content, 0, length);
        ByteBuffer.wrap(out, size, 8).order(ByteOrder.LITTLE_ENDIAN).putInt((int) crc.getValue()).putInt(length);
        return Arrays.copyOf(out, size + 8);
    }

    private static byte[] associatedData(byte[] headerBytes, int blockIndex) {
        byte[] aad = Arrays.copyOf(headerBytes, HEADER_SIZE + 4);
        ByteBuffer.wrap(aad).order(ByteOrder.LITTLE_ENDIAN).putInt(HEADER_SIZE, blockIndex);
        return aad;
    }

    // ---- reading ------------------------------------------------------------------------------------------------

    /**
     * Reads a capture directory's records in file order. Every problem is a {@link CaptureFormatException} naming
     * the file and the byte offset of the damaged block.
     */
    public static final class Reader implements Closeable {
        private final List<Path> files;
        private final CaptureKey key;
        private int fileIndex = -1;
        private Path file;
        private InputStream in;
        private long offset;
        private Header header;
        private byte[] headerBytes;
        private long captureId;
        private int blockIndex;
        private ByteBuffer block;
        private long blockOffset;
        private int recordInBlock;
        private boolean fileEnded;
        private final List<Header> headers = new ArrayList<>();

        private Reader(List<Path> files, CaptureKey key) {
            this.files = files;
            this.key = key;
        }

        /**
         * Opens the capture in {@code dir}.
         *
         * @param key the key it was encrypted with, or {@code null}
         * @throws IOException when the directory holds no capture file
         */
        public static Reader open(Path dir, CaptureKey key) throws IOException {
            List<Path> files = CaptureFile.files(dir);
            if (files.isEmpty()) {
                throw new IOException(dir + ": no capture files (expected: capture-000001.cap, ...)");
            }
            return new Reader(files, key);
        }

        /** The files being read, in order. */
        public List<Path> files() {
            return files;
        }

        /** The header of the first file, once {@link #next()} has been called. */
        public Header header() {
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
                    continue; // FILE_END
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
            headerBytes = new byte[HEADER_SIZE];
            int n = in.readNBytes(headerBytes, 0, HEADER_SIZE);
            if (n < HEADER_SIZE) {
                throw new CaptureFormatException(file, n, "truncated header (" + n + " of " + HEADER_SIZE + " bytes)");
            }
            header = Header.parse(headerBytes, file);
            offset = HEADER_SIZE;
            if (fileIndex == 0) {
                captureId = header.captureId();
            } else if (header.captureId() != captureId) {
                throw new CaptureFormatException(file, 16, "belongs to another capture than " + files.get(0));
            }
            if (header.sequence() != fileIndex + 1) {
                throw new CaptureFormatException(file, 12, "is file " + header.sequence() + " of its capture (expected: "
                        + (fileIndex + 1) + "; is " + fileName(fileIndex + 1) + " missing?)");
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
            CRC32 actual = new CRC32();
            actual.update(stored);
            if ((int) actual.getValue() != crc) {
                throw new CaptureFormatException(file, blockOffset, "corrupted: block checksum mismatch");
            }
            offset += BLOCK_HEADER_SIZE + length;
            byte[] content = stored;
            if (header.encrypted()) {
                try {
                    content = key.open(stored, associatedData(headerBytes, blockIndex));
                } catch (GeneralSecurityException e) {
                    throw new CaptureFormatException(file, blockOffset,
                            "corrupted: the block fails AES-GCM authentication (altered, or moved from elsewhere)", e);
                }
            }
            if (header.zstd()) {
                content = unzstd(content, blockOffset);
            } else if (header.compressed()) {
                try (GZIPInputStream gzip = new GZIPInputStream(new ByteArrayInputStream(content))) {
                    content = gzip.readAllBytes();
                } catch (IOException e) {
                    throw new CaptureFormatException(file, blockOffset, "corrupted: gzip data: " + e.getMessage(), e);
                }
            }
            blockIndex++;
            block = ByteBuffer.wrap(content).order(ByteOrder.LITTLE_ENDIAN);
            recordInBlock = 0;
            return true;
        }

        /** A zstd frame's content; its declared size is checked before anything is allocated for it. */
        private byte[] unzstd(byte[] frame, long blockOffset) throws CaptureFormatException {
            long size = Zstd.getFrameContentSize(frame);
            if (size < 0 || size > MAX_BLOCK) {
                throw new CaptureFormatException(file, blockOffset, "corrupted: zstd frame of "
                        + (size < 0 ? "unknown size" : size + " bytes") + " (expected: at most " + MAX_BLOCK + ")");
            }
            try {
                byte[] content = new byte[(int) size];
                long got = Zstd.decompressByteArray(content, 0, content.length, frame, 0,
                        frame.length);
                if (Zstd.isError(got)) {
                    throw new CaptureFormatException(file, blockOffset, "corrupted: zstd data: "
                            + Zstd.getErrorName(got));
                }
                if (got != size) {
                    throw new CaptureFormatException(file, blockOffset, "corrupted: zstd data: " + got + " of " + size
                            + " bytes");
                }
                return content;
            } catch (ZstdException e) {
                throw new CaptureFormatException(file, blockOffset, "corrupted: zstd data: " + e.getMessage(), e);
            }
        }

        /** Decodes one record from the current block; {@code null} for the end-of-file record. */
        private CaptureRecord decode() throws CaptureFormatException {
            recordInBlock++;
            try {
                int type = block.get() & 0xFF;
                int length = block.getInt();
                if (length < 0 || length > block.remaining()) {
                    throw new EOFException("record length " + length + " past the block's end");
                }
                ByteBuffer body = block.slice(block.position(), length).order(ByteOrder.LITTLE_ENDIAN);
                block.position(block.position() + length);
                switch (type) {
                    case SESSION_BEGIN:
                        return new SessionBegin(body.getInt(), body.getLong(), body.get() != 0, body.getInt(),
                                body.getShort() & 0xFFFF, str(body), str(body), str(body));
                    case SESSION_END:
                        return new SessionEnd(body.getInt(), body.getLong());
                    case CHANGE_USER:
                        return new ChangeUser(body.getInt(), body.getLong(), str(body), str(body));
                    case COMMAND: {
                        int session = body.getInt();
                        long time = body.getLong();
                        long duration = body.getLong();
                        int command = body.get() & 0xFF;
                        int outcome = body.get() & 0xFF;
                        int error = body.getShort() & 0xFFFF;
                        long affected = body.getLong();
                        long rows = body.getLong();
                        long statementId = body.getInt() & 0xFFFFFFFFL;
                        boolean truncated = body.get() != 0;
                        byte[] payload = new byte[body.getInt()];
                        body.get(payload);
                        if (outcome >= Outcome.values().length) {
                            throw new EOFException("outcome " + outcome + " unknown");
                        }
                        return new CommandRecord(session, time, duration, command, payload, truncated,
                                Outcome.values()[outcome], error, affected, rows, statementId);
                    }
                    case FILE_END:
                        fileEnded = true;
                        return null;
                    default:
                        throw new EOFException("record type " + type + " unknown");
                }
            } catch (RuntimeException | EOFException e) {
                throw new CaptureFormatException(file, blockOffset, "corrupted: record " + recordInBlock
                        + " of the block: " + e, e);
            }
        }

        private static String str(ByteBuffer body) {
            int length = body.getInt();
            if (length == -1) {
                return null;
            }
            byte[] b = new byte[length];
            body.get(b);
            return new String(b, StandardCharsets.UTF_8);
        }

        private void closeFile() throws IOException {
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

    /** Reads every record of a capture; for tests and small captures. */
    public static List<CaptureRecord> readAll(Path dir, CaptureKey key) throws IOException {
        List<CaptureRecord> records = new ArrayList<>();
        try (Reader reader = Reader.open(dir, key)) {
            for (CaptureRecord r = reader.next(); r != null; r = reader.next()) {
                records.add(r);
            }
        }
        return records;
    }

    /** The sequence number in a capture file's name, or -1. */
    static int sequenceOf(Path file) {
        Matcher m = FILE_NAME.matcher(file.getFileName().toString());
        return m.matches() ? Integer.parseInt(m.group(1)) : -1;
    }
}
