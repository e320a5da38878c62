package io.sluice.capture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.capture.CaptureRecord.ChangeUser;
import io.sluice.capture.CaptureRecord.CommandRecord;
import io.sluice.capture.CaptureRecord.Outcome;
import io.sluice.capture.CaptureRecord.SessionBegin;
import io.sluice.capture.CaptureRecord.SessionEnd;
import java.io.EOFException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Property tests of the record format: whatever {@link RecordEncoder} writes, {@link RecordDecoder} reads back as
 * the same record, for every kind and over the whole range of every field, alone, mixed, handed over in chunks and
 * through every kind of block. Random but seeded, so that a failure repeats.
 */
class RecordRoundTripTest {
    private static final long SEED = 0x5EED_CA97L;
    private static final int RECORDS_PER_KIND = 3_000;
    private static final Path FILE = Path.of("capture-000001.cap");

    /** A record of {@code kind}, any value of each field its type allows. */
    static CaptureRecord randomRecord(Random random, RecordKind kind) {
        int session = random.nextInt();
        long time = random.nextLong();
        return switch (kind) {
            case SESSION_BEGIN -> new SessionBegin(session, time, random.nextBoolean(), random.nextInt(),
                    random.nextInt(0x10000), text(random), text(random), text(random));
            case SESSION_END -> new SessionEnd(session, time);
            case CHANGE_USER -> new ChangeUser(session, time, text(random), text(random));
            case COMMAND -> new CommandRecord(session, time, random.nextLong(), random.nextInt(0x100),
                    payload(random), random.nextBoolean(), Outcome.values()[random.nextInt(Outcome.values().length)],
                    random.nextInt(0x10000), random.nextLong(), random.nextLong(), random.nextLong() & 0xFFFFFFFFL);
            case FILE_END -> throw new IllegalArgumentException("the end of a file is not a record");
        };
    }

    private static CaptureRecord randomRecord(Random random) {
        RecordKind[] kinds = {RecordKind.SESSION_BEGIN, RecordKind.SESSION_END, RecordKind.CHANGE_USER,
            RecordKind.COMMAND};
        return randomRecord(random, kinds[random.nextInt(kinds.length)]);
    }

    /** {@code null}, empty, or any code points (UTF-8 holds them all; a lone surrogate it cannot). */
    private static String text(Random random) {
        int length = random.nextInt(12) - 1;
        if (length < 0) {
            return null;
        }
        StringBuilder s = new StringBuilder();
        while (s.length() < length) {
            int codePoint = random.nextBoolean() ? random.nextInt(0x80) : random.nextInt(Character.MAX_CODE_POINT + 1);
            if (!Character.isSurrogate((char) codePoint) || codePoint > 0xFFFF) {
                s.appendCodePoint(codePoint);
            }
        }
        return s.toString();
    }

    /** Mostly short, sometimes empty, now and then larger than an encoder's first array. */
    private static byte[] payload(Random random) {
        int length = switch (random.nextInt(20)) {
            case 0 -> 0;
            case 1 -> 1_000 + random.nextInt(100_000);
            default -> random.nextInt(300);
        };
        byte[] payload = new byte[length];
        random.nextBytes(payload);
        return payload;
    }

    private static List<CaptureRecord> decodeAll(byte[] content, int length) throws EOFException {
        ByteBuffer block = ByteBuffer.wrap(content, 0, length).order(ByteOrder.LITTLE_ENDIAN);
        RecordDecoder decoder = new RecordDecoder();
        List<CaptureRecord> records = new ArrayList<>();
        while (block.hasRemaining()) {
            CaptureRecord record = decoder.decode(block);
            records.add(record);
        }
        return records;
    }

    @ParameterizedTest
    @EnumSource(value = RecordKind.class, names = "FILE_END", mode = EnumSource.Mode.EXCLUDE)
    void everyRecordOfAKindDecodesAsItWasEncoded(RecordKind kind) throws EOFException {
        Random random = new Random(SEED + kind.ordinal());
        RecordEncoder encoder = new RecordEncoder(16);
        RecordDecoder decoder = new RecordDecoder();
        for (int i = 0; i < RECORDS_PER_KIND; i++) {
            CaptureRecord record = randomRecord(random, kind);
            encoder.clear();
            encoder.add(record);

            ByteBuffer block = ByteBuffer.wrap(encoder.bytes(), 0, encoder.size()).order(ByteOrder.LITTLE_ENDIAN);
            CaptureRecord decoded = decoder.decode(block);

            assertThat(CaptureRecordText.of(decoded)).as("record %d of seed %x", i, SEED).isEqualTo(
                    CaptureRecordText.of(record));
            assertThat(block.hasRemaining()).as("the decoder reads exactly what the encoder wrote").isFalse();
            assertThat(encoder.records()).isEqualTo(1);
        }
    }

    /** The relay's path, from a command's fields, writes the very bytes a {@link CommandRecord} does. */
    @Test
    void aCommandFromItsFieldsIsTheSameBytesAsFromItsRecord() {
        Random random = new Random(SEED);
        RecordEncoder fromRecord = new RecordEncoder(16);
        RecordEncoder fromFields = new RecordEncoder(16);
        for (int i = 0; i < RECORDS_PER_KIND; i++) {
            CommandRecord c = (CommandRecord) randomRecord(random, RecordKind.COMMAND);
            fromRecord.add(c);
            fromFields.addCommand(c.sessionId(), c.timeNanos(), c.durationNanos(), c.command(), c.payload(),
                    c.truncated(), c.outcome(), c.errorCode(), c.affectedRows(), c.rows(), c.statementId());
        }

        assertThat(fromFields.records()).isEqualTo(fromRecord.records()).isEqualTo(RECORDS_PER_KIND);
        assertThat(Arrays.copyOf(fromFields.bytes(), fromFields.size()))
                .isEqualTo(Arrays.copyOf(fromRecord.bytes(), fromRecord.size()));
    }

    /**
     * Records go from per-thread encoders to the writer's block in chunks (detached arrays), then through a block of
     * every kind the header can name; decoded in order, they are the records offered, then the end of the file.
     */
    @ParameterizedTest(name = "flags={0}")
    @CsvSource({"0", "1", "2", "3", "4", "6"})
    void mixedRecordsSurviveChunksAndEveryKindOfBlock(int flags) throws Exception {
        Random random = new Random(SEED + flags);
        CaptureKey key = (flags & CaptureFormat.FLAG_AES_GCM) != 0 ? GoldenCaptureFilesTest.key() : null;
        CaptureHeader header = new CaptureHeader((flags & CaptureFormat.FLAG_ZSTD) != 0 ? 2 : 1, flags, 1,
                random.nextLong(), random.nextLong(), key != null ? key.check() : new byte[CaptureKey.CHECK_LENGTH]);
        List<CaptureRecord> offered = new ArrayList<>();
        RecordEncoder block = new RecordEncoder(1024);
        RecordEncoder thread = new RecordEncoder(256);
        for (int i = 0; i < RECORDS_PER_KIND; i++) {
            CaptureRecord record = randomRecord(random);
            offered.add(record);
            thread.add(record);
            if (thread.size() >= 4096 || random.nextInt(50) == 0) {
                int length = thread.size();
                int records = thread.records();
                block.append(thread.detach(), length, records);
            }
        }
        block.append(thread.bytes(), thread.size(), thread.records());
        block.fileEnd(offered.size());

        byte[] framed;
        byte[] opened;
        try (BlockCompressor compressor = BlockCompressor.of(header)) {
            BlockCodec codec = new BlockCodec(header, header.toBytes(), key, compressor);
            framed = codec.seal(3, block.bytes(), block.size());
            ByteBuffer frame = ByteBuffer.wrap(framed).order(ByteOrder.LITTLE_ENDIAN);
            byte[] stored = new byte[frame.getInt()];
            int crc = frame.getInt();
            frame.get(stored);
            opened = codec.open(3, crc, stored, FILE, CaptureFormat.HEADER_SIZE);
        }

        assertThat(block.records()).isEqualTo(offered.size());
        List<CaptureRecord> decoded = decodeAll(opened, opened.length);
        assertThat(decoded.get(decoded.size() - 1)).as("the end-of-file record").isNull();
        assertThat(CaptureRecordText.of(decoded.subList(0, decoded.size() - 1)))
                .containsExactlyElementsOf(CaptureRecordText.of(offered));
    }

    /** Each kind's body is its fields' widths, as docs/traffic-capture.md lays them out. */
    @Test
    void bodiesAreAsLongAsTheDocumentedLayoutSays() {
        RecordEncoder encoder = new RecordEncoder(16);
        encoder.add(new SessionEnd(1, 2));
        encoder.add(new ChangeUser(1, 2, "ab", null));
        encoder.add(new SessionBegin(1, 2, true, 3, 4, "u", "", "client"));
        encoder.add(new CommandRecord(1, 2, 3, 4, new byte[5], false, Outcome.OK, 0, 0, 0, 0));
        encoder.fileEnd(4);

        ByteBuffer b = ByteBuffer.wrap(encoder.bytes(), 0, encoder.size()).order(ByteOrder.LITTLE_ENDIAN);
        List<String> typeAndLength = new ArrayList<>();
        while (b.hasRemaining()) {
            int type = b.get();
            int length = b.getInt();
            typeAndLength.add(type + ":" + length);
            b.position(b.position() + length);
        }

        assertThat(typeAndLength).containsExactly(
                "2:12", // u32 session, u64 time
                "3:22", // u32, u64, str "ab" (4 + 2), str null (4)
                "1:38", // u32, u64, u8, u32, u16, str "u" (4 + 1), str "" (4), str "client" (4 + 6)
                "4:54", // u32, u64, u64, u8, u8, u16, u64, u64, u32, u8, payload (4 + 5)
                "127:8"); // u64 records in the file
    }

    @Test
    void refusesWhatNoVersionWrites() {
        RecordEncoder encoder = new RecordEncoder(16);
        encoder.add(new CommandRecord(1, 2, 3, 4, new byte[0], false, Outcome.OK, 0, 0, 0, 0));
        byte[] command = Arrays.copyOf(encoder.bytes(), encoder.size());

        byte[] unknownType = command.clone();
        unknownType[0] = 9;
        assertThatThrownBy(() -> decodeAll(unknownType, unknownType.length)).isInstanceOf(EOFException.class)
                .hasMessage("record type 9 unknown");

        byte[] unknownOutcome = command.clone();
        unknownOutcome[1 + 4 + 4 + 8 + 8 + 1] = (byte) Outcome.values().length;
        assertThatThrownBy(() -> decodeAll(unknownOutcome, unknownOutcome.length)).isInstanceOf(EOFException.class)
                .hasMessage("outcome 4 unknown");

        assertThatThrownBy(() -> decodeAll(command, command.length - 1)).isInstanceOf(EOFException.class)
                .hasMessage("record length 49 past the block's end");
    }
}
