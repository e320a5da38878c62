package io.sluice.capture;

import com.github.luben.zstd.ZstdCompressCtx;
import com.github.luben.zstd.ZstdException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.zip.CRC32;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.GZIPInputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Compresses the capture writer's blocks and decompresses the reader's, both directions of one algorithm in one
 * place: zstd at level 1, or gzip at deflate's fastest level where zstd's native library cannot load. The writer has
 * one, reused from block to block (a new context per block allocates the compressor's state each time), and closes
 * it; a reader only decompresses, which needs no context. Not thread-safe: one thread uses each.
 *
 * <p>Why zstd: on sysbench read_write's records it compresses about 5 times faster than deflate level 1, and to files
 * about 20% smaller (535 against 111 MB/s, ratio 3.5 against 2.8; decision 055). Deflate was two thirds of the
 * writer's CPU.
 */
abstract class BlockCompressor implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(BlockCompressor.class);

    /** zstd's level for captures: 1, its fastest regular level. Negative levels were faster but larger than gzip. */
    static final int ZSTD_LEVEL = 1;
    /**
     * Deflate level of gzip captures: the fastest. On sysbench's traffic zlib's default level 6 cost about half of
     * the writer's CPU for files only somewhat smaller; the reader is indifferent to the level.
     */
    static final int DEFLATE_LEVEL = Deflater.BEST_SPEED;

    private static volatile Boolean zstdLoads;

    /** The file-header flag of what this compressor writes. */
    abstract int flag();

    /** Its name in the log and the manifest: {@code zstd} or {@code gzip}. */
    abstract String name();

    /** The first {@code length} bytes of {@code content}, compressed. */
    abstract byte[] compress(byte[] content, int length);

    /**
     * What {@link #compress} made of a block.
     *
     * @throws DataFormatException naming what is wrong with {@code stored} (as {@code "zstd data: ..."})
     */
    abstract byte[] decompress(byte[] stored) throws DataFormatException;

    @Override
    public abstract void close();

    /** zstd when its native library loads here, else gzip (logged once). */
    static BlockCompressor preferred() {
        return zstdAvailable() ? new Zstd() : new Gzip();
    }

    /** The compressor of the blocks of a file with {@code header}, or {@code null} when they are not compressed. */
    static BlockCompressor of(CaptureHeader header) {
        if (header.zstd()) {
            return new Zstd();
        }
        return header.compressed() ? new Gzip() : null;
    }

    static boolean zstdAvailable() {
        Boolean loads = zstdLoads;
        if (loads == null) {
            try {
                com.github.luben.zstd.util.Native.load();
                loads = true;
            } catch (LinkageError | RuntimeException e) {
                log.warn("zstd's native library does not load here ({}): traffic captures are compressed with gzip",
                        e.toString());
                loads = false;
            }
            zstdLoads = loads;
        }
        return loads;
    }

    /** zstd frames, each with its content size, so the reader sizes its output exactly. */
    static final class Zstd extends BlockCompressor {
        /** Made at the first block compressed: a reader never needs one. */
        private ZstdCompressCtx context;

        @Override
        int flag() {
            return CaptureFormat.FLAG_ZSTD;
        }

        @Override
        String name() {
            return "zstd";
        }

        @Override
        byte[] compress(byte[] content, int length) {
            if (context == null) {
                context = new ZstdCompressCtx().setLevel(ZSTD_LEVEL).setContentSize(true);
            }
            byte[] out = new byte[(int) com.github.luben.zstd.Zstd.compressBound(length)];
            int size = context.compressByteArray(out, 0, out.length, content, 0, length);
            return Arrays.copyOf(out, size);
        }

        /** The frame's declared size is checked before anything is allocated for it. */
        @Override
        byte[] decompress(byte[] frame) throws DataFormatException {
            long size = com.github.luben.zstd.Zstd.getFrameContentSize(frame);
            if (size < 0 || size > CaptureFormat.MAX_BLOCK) {
                throw new DataFormatException("zstd frame of " + (size < 0 ? "unknown size" : size + " bytes")
                        + " (expected: at most " + CaptureFormat.MAX_BLOCK + ")");
            }
            try {
                byte[] content = new byte[(int) size];
                long got = com.github.luben.zstd.Zstd.decompressByteArray(content, 0, content.length, frame, 0,
                        frame.length);
                if (com.github.luben.zstd.Zstd.isError(got)) {
                    throw new DataFormatException("zstd data: " + com.github.luben.zstd.Zstd.getErrorName(got));
                }
                if (got != size) {
                    throw new DataFormatException("zstd data: " + got + " of " + size + " bytes");
                }
                return content;
            } catch (ZstdException e) {
                throw (DataFormatException) new DataFormatException("zstd data: " + e.getMessage()).initCause(e);
            }
        }

        @Override
        public void close() {
            if (context != null) {
                context.close();
            }
        }
    }

    /** One gzip member per block, written around raw deflate. */
    static final class Gzip extends BlockCompressor {
        /** gzip's fixed 10-byte member header: magic, deflate, no flags, no time, no extra flags, OS unknown. */
        private static final byte[] HEADER = {0x1f, (byte) 0x8b, 8, 0, 0, 0, 0, 0, 0, (byte) 0xff};
        /** gzip's trailer: CRC-32 and length of the content. */
        private static final int TRAILER_SIZE = 8;

        /** Raw deflate, gzip's header and trailer being ours; made at the first block compressed. */
        private Deflater deflater;

        @Override
        int flag() {
            return CaptureFormat.FLAG_GZIP;
        }

        @Override
        String name() {
            return "gzip";
        }

        /** One gzip member holding the first {@code length} bytes of {@code content}. */
        @Override
        byte[] compress(byte[] content, int length) {
            if (deflater == null) {
                deflater = new Deflater(DEFLATE_LEVEL, true);
            }
            deflater.reset();
            deflater.setInput(content, 0, length);
            deflater.finish();
            byte[] out = new byte[HEADER.length + length + length / 1000 + 64 + TRAILER_SIZE];
            System.arraycopy(HEADER, 0, out, 0, HEADER.length);
            int size = HEADER.length;
            while (!deflater.finished()) {
                if (size == out.length - TRAILER_SIZE) {
                    out = Arrays.copyOf(out, out.length * 2);
                }
                size += deflater.deflate(out, size, out.length - TRAILER_SIZE - size);
            }
            CRC32 crc = new CRC32();
            crc.update(content, 0, length);
            ByteBuffer.wrap(out, size, TRAILER_SIZE).order(ByteOrder.LITTLE_ENDIAN).putInt((int) crc.getValue())
                    .putInt(length);
            return Arrays.copyOf(out, size + TRAILER_SIZE);
        }

        /** Any gzip data, not only the members {@link #compress} writes: the JDK's reader checks CRC and length. */
        @Override
        byte[] decompress(byte[] stored) throws DataFormatException {
            try (GZIPInputStream gzip = new GZIPInputStream(new ByteArrayInputStream(stored))) {
                return gzip.readAllBytes();
            } catch (IOException e) {
                throw (DataFormatException) new DataFormatException("gzip data: " + e.getMessage()).initCause(e);
            }
        }

        @Override
        public void close() {
            if (deflater != null) {
                deflater.end();
            }
        }
    }
}
