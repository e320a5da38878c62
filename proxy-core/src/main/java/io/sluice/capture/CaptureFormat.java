package io.sluice.capture;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The capture file format's constants and file names, versions 1 and 2 (docs/traffic-capture.md is the reference;
 * why it is so: decision 032). A capture is a directory of files {@code capture-000001.cap},
 * {@code capture-000002.cap}, ... and a {@code capture.json} manifest. Each file is a {@link CaptureHeader} followed
 * by blocks; each block is {@code u32 length, u32 CRC-32, stored bytes}, where the stored bytes are the block's
 * records ({@link RecordEncoder}, {@link RecordDecoder}), compressed and then AES-GCM-sealed when the header says so
 * ({@link BlockCodec}). Blocks are written whole, so a file cut short by a full disk or a crash loses at most its last
 * block, and the reader ({@link CaptureReader}) says where.
 *
 * <p>All integers are little-endian, as in the MySQL protocol.
 */
public final class CaptureFormat {
    /**
     * The newest format version: 2 added zstd ({@link #FLAG_ZSTD}). A file is written as version 1 when it uses
     * nothing of version 2, so that older readers still read gzip and uncompressed captures.
     */
    public static final int VERSION = 2;
    /** The oldest format version this reader reads. */
    static final int OLDEST_VERSION = 1;
    /** The manifest's file name in a capture directory. */
    public static final String MANIFEST = "capture.json";
    static final int HEADER_SIZE = 40;
    /** A block's frame: its stored length and CRC-32. */
    static final int BLOCK_HEADER_SIZE = 8;
    /** The largest stored block a reader accepts: a guard against reading a corrupted length. */
    static final int MAX_BLOCK = 64 << 20;

    static final int FLAG_GZIP = 1;
    static final int FLAG_AES_GCM = 2;
    /** Since version 2. */
    static final int FLAG_ZSTD = 4;
    static final int KNOWN_FLAGS = FLAG_GZIP | FLAG_AES_GCM | FLAG_ZSTD;

    private static final Pattern FILE_NAME = Pattern.compile("capture-(\\d{6})\\.cap");

    private CaptureFormat() {
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
}
