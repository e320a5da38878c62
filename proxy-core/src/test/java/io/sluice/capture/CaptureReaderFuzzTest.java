package io.sluice.capture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The capture reader fed damaged files: the golden captures ({@link GoldenCaptureFilesTest}) with bytes flipped, cut,
 * spliced or length fields set to absurd values, either anywhere in a file (most such damage fails the block's
 * CRC-32) or inside a block whose CRC is then made right again, so the damage reaches the decompressor, the
 * decryption and the record decoder. Whatever the damage, reading ends in the records or in an {@link IOException}
 * ({@link CaptureFormatException} for a damaged file), never another exception, never an allocation sized by a
 * damaged length field (a 2 GiB {@code byte[]} would be an {@link OutOfMemoryError} in the test JVM), never a hang
 * (the class's timeout).
 *
 * <p>Seeded: {@code -Dsluice.fuzz.seed} (default 30) replays a run, {@code -Dsluice.fuzz.cases} sets the number of
 * cases (default 3,000).
 */
class CaptureReaderFuzzTest {
    private static final int CASES = Integer.getInteger("sluice.fuzz.cases", 3_000);
    private static final long SEED = Long.getLong("sluice.fuzz.seed", 30);
    private static final int[] ABSURD = {0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, CaptureFormat.MAX_BLOCK + 1, 1 << 30};

    @TempDir
    Path tmp;

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES) // a hang, not a slow machine
    void damagedCapturesReadToTheirRecordsOrAFormatErrorAndNothingElse() throws Exception {
        Random random = new Random(SEED);
        int refused = 0;
        for (int i = 0; i < CASES; i++) {
            String capture = GoldenCaptureFilesTest.CAPTURES[random.nextInt(GoldenCaptureFilesTest.CAPTURES.length)];
            Path dir = Files.createDirectories(tmp.resolve("case-" + i));
            List<Path> files = CaptureFormat.files(GoldenCaptureFilesTest.golden(capture));
            int damaged = random.nextInt(files.size());
            String damage = "";
            for (int f = 0; f < files.size(); f++) {
                byte[] bytes = Files.readAllBytes(files.get(f));
                if (f == damaged) {
                    boolean inBlock = random.nextBoolean();
                    damage = (inBlock ? "in a block, CRC fixed: " : "anywhere: ") + files.get(f).getFileName();
                    bytes = inBlock ? damageInBlock(bytes, random) : damage(bytes, random, 0);
                }
                Files.write(dir.resolve(files.get(f).getFileName()), bytes);
            }
            String where = "seed " + SEED + ", case " + i + ", " + capture + ", " + damage;
            try {
                CaptureReader.readAll(dir, capture.contains("aes") ? GoldenCaptureFilesTest.key() : null);
            } catch (IOException e) {
                refused++;
            } catch (Throwable e) {
                throw new AssertionError(where + ": " + e, e);
            }
            deleteCase(dir);
        }
        assertThat(refused).as("damaged captures refused").isGreaterThan(CASES / 2);
    }

    @Test
    void aValueLengthOf2GiBIsRefusedBeforeItIsAllocated() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("two-gib"));
        List<Path> files = CaptureFormat.files(GoldenCaptureFilesTest.golden("v1-plain"));
        byte[] first = Files.readAllBytes(files.get(0));
        byte[] sql = "SELECT c FROM sbtest1 WHERE id = 0".getBytes(StandardCharsets.UTF_8);
        int at = indexOf(first, sql);
        ByteBuffer.wrap(first).order(ByteOrder.LITTLE_ENDIAN).putInt(at - 4, Integer.MAX_VALUE); // its length
        fixCrcs(first);
        Files.write(dir.resolve(files.get(0).getFileName()), first);
        Files.copy(files.get(1), dir.resolve(files.get(1).getFileName()));

        assertThatThrownBy(() -> CaptureReader.readAll(dir, null)).isInstanceOf(CaptureFormatException.class)
                .hasMessageContaining("corrupted");
    }

    /** Damage anywhere from {@code from} on: flipped bytes, a cut, a splice, or a length-sized int set absurdly. */
    private static byte[] damage(byte[] bytes, Random random, int from) {
        byte[] out = bytes.clone();
        int span = out.length - from;
        if (span <= 0) {
            return out;
        }
        switch (random.nextInt(5)) {
            case 0:
                for (int n = 1 + random.nextInt(4); n > 0; n--) {
                    out[from + random.nextInt(span)] = (byte) random.nextInt(256);
                }
                return out;
            case 1:
                return Arrays.copyOf(out, from + random.nextInt(span));
            case 2: {
                int at = from + random.nextInt(span);
                byte[] garbage = new byte[1 + random.nextInt(16)];
                random.nextBytes(garbage);
                byte[] spliced = Arrays.copyOf(out, out.length + garbage.length);
                System.arraycopy(garbage, 0, spliced, at, garbage.length);
                System.arraycopy(out, at, spliced, at + garbage.length, out.length - at);
                return spliced;
            }
            default:
                if (span >= 4) {
                    ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN)
                            .putInt(from + random.nextInt(span - 3), ABSURD[random.nextInt(ABSURD.length)]);
                }
                return out;
        }
    }

    /** Damages the stored bytes of one block and gives the block its right CRC again (and its new length). */
    private static byte[] damageInBlock(byte[] file, Random random) {
        List<int[]> blocks = blocks(file);
        if (blocks.isEmpty()) {
            return damage(file, random, 0);
        }
        int[] block = blocks.get(random.nextInt(blocks.size()));
        int start = block[0] + CaptureFormat.BLOCK_HEADER_SIZE;
        byte[] stored = Arrays.copyOfRange(file, start, start + block[1]);
        byte[] damagedStored = damage(stored, random, 0);
        if (damagedStored.length == 0) {
            damagedStored = new byte[] {0};
        }
        byte[] out = new byte[file.length - stored.length + damagedStored.length];
        System.arraycopy(file, 0, out, 0, start);
        System.arraycopy(damagedStored, 0, out, start, damagedStored.length);
        System.arraycopy(file, start + stored.length, out, start + damagedStored.length,
                file.length - start - stored.length);
        ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN).putInt(block[0], damagedStored.length);
        fixCrcs(out);
        return out;
    }

    /** The blocks of a well-formed file: each one's offset and stored length. */
    private static List<int[]> blocks(byte[] file) {
        List<int[]> blocks = new ArrayList<>();
        ByteBuffer b = ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN);
        for (int at = CaptureFormat.HEADER_SIZE; at + CaptureFormat.BLOCK_HEADER_SIZE <= file.length; ) {
            int length = b.getInt(at);
            if (length <= 0 || at + CaptureFormat.BLOCK_HEADER_SIZE + length > file.length) {
                break;
            }
            blocks.add(new int[] {at, length});
            at += CaptureFormat.BLOCK_HEADER_SIZE + length;
        }
        return blocks;
    }

    /** Sets every block's CRC-32 to that of its stored bytes. */
    private static void fixCrcs(byte[] file) {
        ByteBuffer b = ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN);
        for (int[] block : blocks(file)) {
            CRC32 crc = new CRC32();
            crc.update(file, block[0] + CaptureFormat.BLOCK_HEADER_SIZE, block[1]);
            b.putInt(block[0] + 4, (int) crc.getValue());
        }
    }

    private static int indexOf(byte[] bytes, byte[] wanted) {
        outer:
        for (int i = 0; i + wanted.length <= bytes.length; i++) {
            for (int j = 0; j < wanted.length; j++) {
                if (bytes[i + j] != wanted[j]) {
                    continue outer;
                }
            }
            return i;
        }
        throw new AssertionError("not found");
    }

    private static void deleteCase(Path dir) throws IOException {
        try (var files = Files.list(dir)) {
            for (Path file : files.toList()) {
                Files.delete(file);
            }
        }
        Files.delete(dir);
    }
}
