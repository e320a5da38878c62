package io.sluice.capture;

import static io.sluice.capture.CaptureFormat.FLAG_AES_GCM;
import static io.sluice.capture.CaptureFormat.FLAG_GZIP;
import static io.sluice.capture.CaptureFormat.FLAG_ZSTD;
import static io.sluice.capture.CaptureFormat.HEADER_SIZE;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * What every file of a capture starts with: 40 bytes of magic {@code SLUICECP}, u16 version, u16 flags, u32
 * sequence, u64 capture id, u64 base time and the 8-byte key check.
 *
 * @param version the format version, {@link CaptureFormat#OLDEST_VERSION} to {@link CaptureFormat#VERSION}
 * @param flags {@link CaptureFormat#FLAG_GZIP} or {@link CaptureFormat#FLAG_ZSTD}, and
 *     {@link CaptureFormat#FLAG_AES_GCM}
 * @param sequence the file's place in the capture, from 1
 * @param captureId a random id shared by the files of one capture
 * @param baseEpochMillis the wall-clock time of the capture's time 0
 * @param keyCheck a fingerprint of the key for encrypted files, zeros otherwise
 */
public record CaptureHeader(int version, int flags, int sequence, long captureId, long baseEpochMillis,
        byte[] keyCheck) {

    private static final byte[] MAGIC = "SLUICECP".getBytes(StandardCharsets.US_ASCII);

    /** Whether the blocks are compressed, with gzip or zstd. */
    public boolean compressed() {
        return (flags & (FLAG_GZIP | FLAG_ZSTD)) != 0;
    }

    /** Whether the blocks are zstd frames. */
    public boolean zstd() {
        return (flags & FLAG_ZSTD) != 0;
    }

    /** Whether the blocks are sealed with AES-GCM. */
    public boolean encrypted() {
        return (flags & FLAG_AES_GCM) != 0;
    }

    /** The header as written at the start of the file; also the start of every block's associated data. */
    byte[] toBytes() {
        ByteBuffer b = ByteBuffer.allocate(HEADER_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        b.put(MAGIC).putShort((short) version).putShort((short) flags).putInt(sequence).putLong(captureId)
                .putLong(baseEpochMillis).put(keyCheck, 0, CaptureKey.CHECK_LENGTH);
        return b.array();
    }

    /**
     * Reads the first {@link CaptureFormat#HEADER_SIZE} bytes of {@code file}.
     *
     * @throws CaptureFormatException when they are not a header of a version and flags this release reads
     */
    static CaptureHeader parse(byte[] bytes, Path file) throws CaptureFormatException {
        if (!Arrays.equals(Arrays.copyOf(bytes, MAGIC.length), MAGIC)) {
            throw new CaptureFormatException(file, 0, "not a Sluice capture file (no SLUICECP magic)");
        }
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        b.position(MAGIC.length);
        int version = b.getShort() & 0xFFFF;
        if (version < CaptureFormat.OLDEST_VERSION || version > CaptureFormat.VERSION) {
            throw new CaptureFormatException(file, MAGIC.length, "format version " + version + " (expected: "
                    + CaptureFormat.OLDEST_VERSION + " to " + CaptureFormat.VERSION
                    + "; use the Sluice release that wrote it)");
        }
        int flags = b.getShort() & 0xFFFF;
        if ((flags & ~CaptureFormat.KNOWN_FLAGS) != 0 || (flags & (FLAG_GZIP | FLAG_ZSTD)) == (FLAG_GZIP | FLAG_ZSTD)
                || (version < 2 && (flags & FLAG_ZSTD) != 0)) {
            throw new CaptureFormatException(file, MAGIC.length + 2, "flags 0x" + Integer.toHexString(flags)
                    + " are not those of a version " + version + " file (use the Sluice release that wrote it)");
        }
        int sequence = b.getInt();
        long captureId = b.getLong();
        long base = b.getLong();
        byte[] check = new byte[CaptureKey.CHECK_LENGTH];
        b.get(check);
        return new CaptureHeader(version, flags, sequence, captureId, base, check);
    }
}
