package io.sluice.capture;

import com.github.luben.zstd.ZstdCompressCtx;
import java.util.Arrays;
import java.util.zip.Deflater;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Compresses the capture writer's blocks: zstd at level 1, or gzip at deflate's fastest level where zstd's native
 * library cannot load. One per writer, reused from block to block (a new context per block allocates the
 * compressor's state each time), and closed by it. Not thread-safe: the writer thread is its only user.
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

    @Override
    public abstract void close();

    /** zstd when its native library loads here, else gzip (logged once). */
    static BlockCompressor preferred() {
        return zstdAvailable() ? new Zstd() : new Gzip();
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
        private final ZstdCompressCtx context = new ZstdCompressCtx().setLevel(ZSTD_LEVEL).setContentSize(true);

        @Override
        int flag() {
            return CaptureFile.FLAG_ZSTD;
        }

        @Override
        String name() {
            return "zstd";
        }

        @Override
        byte[] compress(byte[] content, int length) {
            byte[] out = new byte[(int) com.github.luben.zstd.Zstd.compressBound(length)];
            int size = context.compressByteArray(out, 0, out.length, content, 0, length);
            return Arrays.copyOf(out, size);
        }

        @Override
        public void close() {
            context.close();
        }
    }

    /** One gzip member per block, written around raw deflate. */
    static final class Gzip extends BlockCompressor {
        private final Deflater deflater = new Deflater(DEFLATE_LEVEL, true); // gzip's header and trailer are ours

        @Override
        int flag() {
            return CaptureFile.FLAG_GZIP;
        }

        @Override
        String name() {
            return "gzip";
        }

        @Override
        byte[] compress(byte[] content, int length) {
            return CaptureFile.gzip(content, length, deflater);
        }

        @Override
        public void close() {
            deflater.end();
        }
    }
}
