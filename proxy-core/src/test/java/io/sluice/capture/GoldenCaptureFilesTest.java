package io.sluice.capture;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.capture.CaptureRecord.ChangeUser;
import io.sluice.capture.CaptureRecord.CommandRecord;
import io.sluice.capture.CaptureRecord.Outcome;
import io.sluice.capture.CaptureRecord.SessionBegin;
import io.sluice.capture.CaptureRecord.SessionEnd;
import io.sluice.protocol.Command;
import java.io.ByteArrayOutputStream;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Capture files written by the release before the format's classes were split (issue #26), kept under
 * {@code src/test/resources/io/sluice/capture/golden}: they must stay readable, and what is written now must be the
 * same bytes. Each capture holds {@link #records()} in two files of two blocks each, so that the sequence, the
 * block index in the associated data and the end-of-file record are all exercised: file 1 holds the first half of
 * the records, file 2 the rest; in each file block 0 holds the first half of the file's records, block 1 the rest
 * and the end-of-file record.
 */
class GoldenCaptureFilesTest {
    static final String KEY_HEX = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    static final long CAPTURE_ID = 0x0123456789ABCDEFL;
    static final long BASE_EPOCH_MILLIS = 1_764_000_000_000L;

    /** The directories, each a capture of {@link #records()}. */
    static final String[] CAPTURES = {"v1-plain", "v1-gzip", "v1-aes", "v2-zstd", "v2-zstd-aes"};

    /** Every record kind, every outcome, and the edges of every field's range. */
    static List<CaptureRecord> records() {
        List<CaptureRecord> records = new ArrayList<>();
        records.add(new SessionBegin(1, 0, false, 0x000FA685, 45, "app", "shop", "/127.0.0.1:50000"));
        records.add(new SessionBegin(-2, Long.MAX_VALUE, true, 0xFFFFFFFF, 0xFFFF, "\u00fcn\u00ef\u20ac\uD83D\uDE00",
                null, ""));
        records.add(new ChangeUser(1, 5, "other", null));
        records.add(new ChangeUser(-2, 6, "", "schema"));
        for (int i = 0; i < 20; i++) {
            byte[] sql = ("SELECT c FROM sbtest1 WHERE id = " + i).getBytes(StandardCharsets.UTF_8);
            records.add(new CommandRecord(1, 1_000L * i, 250L + i, Command.COM_QUERY, sql, false, Outcome.OK, 0,
                    i % 3, i % 5, 0));
        }
        byte[] everyByte = new byte[256];
        for (int i = 0; i < everyByte.length; i++) {
            everyByte[i] = (byte) i;
        }
        records.add(new CommandRecord(1, 30_000, 0, Command.COM_STMT_CLOSE, new byte[] {1, 0, 0, 0}, false,
                Outcome.NO_RESPONSE, 0, 0, 0, 0));
        records.add(new CommandRecord(1, 30_001, 12, Command.COM_STMT_PREPARE, "SELECT ?".getBytes(
                StandardCharsets.US_ASCII), false, Outcome.OK, 0, 0, 0, 0xFFFFFFFFL));
        records.add(new CommandRecord(-2, 30_002, 7, Command.COM_QUERY, "SELECT * FROM nope".getBytes(
                StandardCharsets.US_ASCII), true, Outcome.ERROR, 1146, 0, 0, 0));
        records.add(new CommandRecord(-2, 30_003, Long.MAX_VALUE, 0xFF, everyByte, true, Outcome.UNKNOWN, 0xFFFF, -1,
                Long.MIN_VALUE, 1));
        records.add(new CommandRecord(Integer.MIN_VALUE, -1, -1, 0, new byte[0], false, Outcome.OK, 0, 0, 0, 0));
        records.add(new SessionEnd(1, 40_000));
        records.add(new SessionEnd(Integer.MIN_VALUE, -1));
        return records;
    }

    static CaptureKey key() {
        return CaptureKey.of(HexFormat.of().parseHex(KEY_HEX));
    }

    static Path golden(String capture) throws URISyntaxException {
        return Path.of(GoldenCaptureFilesTest.class.getResource("golden/" + capture).toURI());
    }


    @ParameterizedTest
    @ValueSource(strings = {"v1-plain", "v1-gzip", "v1-aes", "v2-zstd", "v2-zstd-aes"})
    void readsTheFilesOfTheReleaseBefore(String capture) throws Exception {
        Path dir = golden(capture);
        CaptureKey key = capture.contains("aes") ? key() : null;

        assertThat(CaptureFormat.files(dir)).hasSize(2);
        assertThat(CaptureRecordText.of(CaptureReader.readAll(dir, key)))
                .containsExactlyElementsOf(CaptureRecordText.of(records()));
    }

    /** The records of block {@code block} (0 or 1) of file {@code file} (1 or 2), as the golden files hold them. */
    private static List<CaptureRecord> recordsOf(int file, int block) {
        List<CaptureRecord> records = records();
        int half = records.size() / 2;
        List<CaptureRecord> inFile = file == 1 ? records.subList(0, half) : records.subList(half, records.size());
        int quarter = inFile.size() / 2;
        return block == 0 ? inFile.subList(0, quarter) : inFile.subList(quarter, inFile.size());
    }

    /** A block's records as the encoder writes them now; the second block of a file ends it. */
    private static byte[] encode(int file, int block) {
        RecordEncoder encoder = new RecordEncoder(64);
        recordsOf(file, block).forEach(encoder::add);
        if (block == 1) {
            encoder.fileEnd(recordsOf(file, 0).size() + recordsOf(file, 1).size());
        }
        return Arrays.copyOf(encoder.bytes(), encoder.size());
    }

    /** Every block's content, once opened, is the bytes the encoder writes now for the same records. */
    @ParameterizedTest
    @ValueSource(strings = {"v1-plain", "v1-gzip", "v1-aes", "v2-zstd", "v2-zstd-aes"})
    void theEncoderWritesTheSameRecordBytes(String capture) throws Exception {
        for (int file = 1; file <= 2; file++) {
            Path path = golden(capture).resolve(CaptureFormat.fileName(file));
            ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(path)).order(ByteOrder.LITTLE_ENDIAN);
            byte[] headerBytes = new byte[CaptureFormat.HEADER_SIZE];
            bytes.get(headerBytes);
            CaptureHeader header = CaptureHeader.parse(headerBytes, path);
            assertThat(header.toBytes()).isEqualTo(headerBytes);
            assertThat(header).extracting(CaptureHeader::sequence, CaptureHeader::captureId,
                    CaptureHeader::baseEpochMillis).containsExactly(file, CAPTURE_ID, BASE_EPOCH_MILLIS);
            try (BlockCompressor compressor = BlockCompressor.of(header)) {
                BlockCodec codec = new BlockCodec(header, headerBytes, header.encrypted() ? key() : null, compressor);
                for (int block = 0; block <= 1; block++) {
                    long offset = bytes.position();
                    byte[] stored = new byte[bytes.getInt()];
                    int crc = bytes.getInt();
                    bytes.get(stored);

                    assertThat(codec.open(block, crc, stored, path, offset)).as("%s block %d", path, block)
                            .isEqualTo(encode(file, block));
                }
            }
            assertThat(bytes.hasRemaining()).isFalse();
        }
    }

    /** Uncompressed and unencrypted, a file is the same to the byte: header, frames and records. */
    @Test
    void writesThePlainFilesToTheByte() throws Exception {
        for (int file = 1; file <= 2; file++) {
            CaptureHeader header = new CaptureHeader(1, 0, file, CAPTURE_ID, BASE_EPOCH_MILLIS, new byte[8]);
            BlockCodec codec = new BlockCodec(header, header.toBytes(), null, null);
            ByteArrayOutputStream written = new ByteArrayOutputStream();
            written.write(header.toBytes());
            for (int block = 0; block <= 1; block++) {
                byte[] content = encode(file, block);
                written.write(codec.seal(block, content, content.length));
            }

            assertThat(written.toByteArray())
                    .isEqualTo(Files.readAllBytes(golden("v1-plain").resolve(CaptureFormat.fileName(file))));
        }
    }
}
