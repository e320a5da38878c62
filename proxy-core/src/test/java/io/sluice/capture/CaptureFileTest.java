package io.sluice.capture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.capture.CaptureRecord.ChangeUser;
import io.sluice.capture.CaptureRecord.CommandRecord;
import io.sluice.capture.CaptureRecord.Outcome;
import io.sluice.capture.CaptureRecord.SessionBegin;
import io.sluice.capture.CaptureRecord.SessionEnd;
import io.sluice.json.Json;
import io.sluice.protocol.Command;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The capture files as the writer thread writes them and the reader reads them back: every record kind, gzip and
 * AES-GCM, rotation, the limits, dropped records, and damaged files reported by name and offset.
 */
class CaptureFileTest {

    private static final String KEY_HEX = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

    @TempDir
    Path tmp;

    private static List<CaptureRecord> sample(int commands) {
        List<CaptureRecord> records = new ArrayList<>();
        records.add(new SessionBegin(7, 10, false, 0x1234, 45, "app", "shop", "/127.0.0.1:5555"));
        records.add(new SessionBegin(8, 11, true, 0x1234, 224, "app2", null, "/127.0.0.1:5556"));
        for (int i = 0; i < commands; i++) {
            byte[] sql = ("SELECT c FROM sbtest1 WHERE id = " + i).getBytes(StandardCharsets.UTF_8);
            records.add(new CommandRecord(7 + i % 2, 100L * i, 40L + i, Command.COM_QUERY, sql, false,
                    i % 10 == 0 ? Outcome.ERROR : Outcome.OK, i % 10 == 0 ? 1146 : 0, i % 3, i % 5, 0));
        }
        records.add(new CommandRecord(7, 5_000_000L, 0, Command.COM_STMT_CLOSE, new byte[] {1, 0, 0, 0}, false,
                Outcome.NO_RESPONSE, 0, 0, 0, 0));
        records.add(new CommandRecord(7, 5_000_001L, 9, Command.COM_STMT_PREPARE, "SELECT ?".getBytes(), true,
                Outcome.UNKNOWN, 0, 0, 0, 4_000_000_000L));
        records.add(new ChangeUser(8, 6_000_000L, "app", "other"));
        records.add(new SessionEnd(7, 7_000_000L));
        return records;
    }


    private CaptureRun startAndOffer(TrafficCapture capture, CaptureOptions options, List<CaptureRecord> records) {
        capture.start(options);
        CaptureRun run = capture.run();
        for (CaptureRecord r : records) {
            assertThat(run.offer(r)).isTrue();
        }
        return run;
    }

    private CaptureOptions options(String name) {
        return CaptureOptions.of(tmp.resolve(name)).withMinFreeSpace(0);
    }

    private Path keyFile() throws IOException {
        Path key = tmp.resolve("capture.key");
        Files.writeString(key, KEY_HEX + "\n");
        return key;
    }

    @ParameterizedTest(name = "compress={0} encrypt={1}")
    @CsvSource({"true,true", "true,false", "false,true", "false,false"})
    void writesAndReadsBackEveryRecordAcrossRotatedFiles(boolean compress, boolean encrypt) throws Exception {
        CaptureOptions options = options("out").withCompress(compress).withFileSize(4096);
        CaptureKey key = null;
        if (encrypt) {
            options = options.withKeyFile(keyFile());
            key = CaptureKey.load(options.keyFile());
        }
        List<CaptureRecord> records = sample(8_000);
        TrafficCapture capture = new TrafficCapture();
        startAndOffer(capture, options, records.subList(0, 4_000));
        CaptureRun run = capture.run();
        for (CaptureRecord r : records.subList(4_000, records.size())) {
            while (!run.offer(r)) {
                Thread.onSpinWait(); // the test's own backpressure: it wants every record written
            }
        }

        CaptureStatus status = capture.stop();

        assertThat(status.state()).isEqualTo("stopped");
        assertThat(status.stopReason()).isEqualTo("stopped on request");
        assertThat(status.records()).isEqualTo(records.size());
        assertThat(status.files()).isGreaterThan(1);
        assertThat(CaptureFormat.files(options.output())).hasSize(status.files());
        assertThat(CaptureRecordText.of(CaptureReader.readAll(options.output(), key)))
                .containsExactlyElementsOf(CaptureRecordText.of(records));
        Map<String, Object> manifest = Json.parseObject(Files.readString(options.output().resolve("capture.json")));
        assertThat(manifest).containsEntry("state", "stopped").containsEntry("version", compress ? 2L : 1L)
                .containsEntry("compression", compress ? "zstd" : "none")
                .containsEntry("records", (long) records.size()).containsEntry("encrypted", encrypt);
    }

    @Test
    void encryptedFilesHoldNoPlainText() throws Exception {
        CaptureOptions options = options("enc").withCompress(false).withKeyFile(keyFile());
        TrafficCapture capture = new TrafficCapture();
        startAndOffer(capture, options, sample(100));
        capture.stop();

        byte[] file = Files.readAllBytes(CaptureFormat.files(options.output()).get(0));
        assertThat(new String(file, StandardCharsets.ISO_8859_1)).doesNotContain("sbtest1").doesNotContain("shop");
    }

    @Test
    void wrongOrMissingKeyIsToldApartFromDamage() throws Exception {
        CaptureOptions options = options("keyed").withKeyFile(keyFile());
        TrafficCapture capture = new TrafficCapture();
        startAndOffer(capture, options, sample(10));
        capture.stop();
        Path first = options.output().resolve("capture-000001.cap");

        assertThatThrownBy(() -> CaptureReader.readAll(options.output(), null))
                .isInstanceOf(CaptureFormatException.class).hasMessageContaining(first.toString())
                .hasMessageContaining("encrypted (expected: the capture's key file)");
        CaptureKey other = CaptureKey.of(HexFormat.of().parseHex(KEY_HEX.replace('0', '1')));
        assertThatThrownBy(() -> CaptureReader.readAll(options.output(), other))
                .isInstanceOf(CaptureFormatException.class).hasMessageContaining("encrypted with another key");
    }

    @Test
    void truncatedFileNamesTheFileAndTheOffsetOfTheCutBlock() throws Exception {
        CaptureOptions options = options("cut");
        TrafficCapture capture = new TrafficCapture();
        startAndOffer(capture, options, sample(50));
        capture.stop();
        Path file = options.output().resolve("capture-000001.cap");
        long size = Files.size(file);
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(size - 5);
        }

        assertThatThrownBy(() -> CaptureReader.readAll(options.output(), null))
                .isInstanceOfSatisfying(CaptureFormatException.class, e -> {
                    assertThat(e.file()).isEqualTo(file);
                    assertThat(e.offset()).isBetween((long) CaptureFormat.HEADER_SIZE, size - 5);
                    assertThat(e.getMessage()).startsWith(file + ": at offset " + e.offset() + ": truncated");
                });
    }

    @Test
    void corruptedByteNamesTheFileAndTheOffsetOfItsBlock() throws Exception {
        CaptureOptions options = options("flip").withCompress(false);
        TrafficCapture capture = new TrafficCapture();
        startAndOffer(capture, options, sample(50));
        capture.stop();
        Path file = options.output().resolve("capture-000001.cap");
        byte[] bytes = Files.readAllBytes(file);
        bytes[CaptureFormat.HEADER_SIZE + CaptureFormat.BLOCK_HEADER_SIZE + 100] ^= 0x5A;
        Files.write(file, bytes);

        assertThatThrownBy(() -> CaptureReader.readAll(options.output(), null))
                .isInstanceOfSatisfying(CaptureFormatException.class, e -> {
                    assertThat(e.file()).isEqualTo(file);
                    assertThat(e.offset()).isEqualTo(CaptureFormat.HEADER_SIZE);
                    assertThat(e.getMessage()).contains("corrupted: block checksum mismatch");
                });
    }

    @Test
    void notACaptureFileAndAnotherVersionAreRefused() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("junk"));
        Files.write(dir.resolve("capture-000001.cap"), new byte[64]);
        assertThatThrownBy(() -> CaptureReader.readAll(dir, null)).isInstanceOf(CaptureFormatException.class)
                .hasMessageContaining("not a Sluice capture file");

        byte[] header = new CaptureHeader(3, 0, 1, 1, 0, new byte[8]).toBytes();
        Files.write(dir.resolve("capture-000001.cap"), header);
        assertThatThrownBy(() -> CaptureReader.readAll(dir, null)).isInstanceOf(CaptureFormatException.class)
                .hasMessageContaining("format version 3 (expected: 1 to 2");

        // zstd came with version 2; a flag no version knows is refused rather than misread
        for (int[] versionAndFlags : new int[][] {{1, CaptureFormat.FLAG_ZSTD}, {2, 8},
                {2, CaptureFormat.FLAG_ZSTD | CaptureFormat.FLAG_GZIP}}) {
            header = new CaptureHeader(versionAndFlags[0], versionAndFlags[1], 1, 1, 0, new byte[8]).toBytes();
            Files.write(dir.resolve("capture-000001.cap"), header);
            assertThatThrownBy(() -> CaptureReader.readAll(dir, null)).isInstanceOf(CaptureFormatException.class)
                    .hasMessageContaining("are not those of a version " + versionAndFlags[0] + " file");
        }
    }

    /** A zstd frame whose block checksum matches but whose content is not zstd is named as damage, not thrown raw. */
    @Test
    void aDamagedZstdFrameNamesTheFileAndTheBlock() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("zstd-damaged"));
        CaptureHeader header = new CaptureHeader(2, CaptureFormat.FLAG_ZSTD, 1, 7, 0, new byte[8]);
        byte[] garbage = "not a zstd frame at all, but checksummed".getBytes(StandardCharsets.US_ASCII);
        java.util.zip.CRC32 crc = new java.util.zip.CRC32();
        crc.update(garbage);
        byte[] framed = ByteBuffer.allocate(CaptureFormat.BLOCK_HEADER_SIZE + garbage.length)
                .order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(garbage.length).putInt((int) crc.getValue())
                .put(garbage).array();
        Path file = dir.resolve("capture-000001.cap");
        Files.write(file, concat(header.toBytes(), framed));

        assertThatThrownBy(() -> CaptureReader.readAll(dir, null))
                .isInstanceOfSatisfying(CaptureFormatException.class, e -> {
                    assertThat(e.file()).isEqualTo(file);
                    assertThat(e.offset()).isEqualTo(CaptureFormat.HEADER_SIZE);
                    assertThat(e.getMessage()).contains("corrupted: zstd");
                });
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    @Test
    void stopsByItselfWhenTheDurationIsOver() throws Exception {
        TrafficCapture capture = new TrafficCapture();
        startAndOffer(capture, options("timed").withDuration(Duration.ofMillis(300)), sample(5));

        assertThat(capture.awaitStopped(10, TimeUnit.SECONDS)).isTrue();

        assertThat(capture.run()).isNull();
        assertThat(capture.status().stopReason()).isEqualTo("duration 300ms reached");
        assertThat(capture.status().records()).isEqualTo(sample(5).size());
        assertThat(CaptureReader.readAll(tmp.resolve("timed"), null)).hasSize(sample(5).size());
    }

    @Test
    void stopsAtMaxSizeLeavingOnlyWholeBlocks() throws Exception {
        CaptureOptions options = options("small").withCompress(false).withMaxSize(200_000);
        TrafficCapture capture = new TrafficCapture();
        capture.start(options);
        CaptureRun run = capture.run();
        List<CaptureRecord> records = sample(200_000);
        for (CaptureRecord r : records) {
            if (!run.offer(r) && !run.isAccepting()) {
                break;
            }
        }

        assertThat(capture.awaitStopped(10, TimeUnit.SECONDS)).isTrue();

        CaptureStatus status = capture.status();
        assertThat(status.stopReason()).isEqualTo("maxSize 200000 bytes reached");
        assertThat(status.bytes()).isLessThanOrEqualTo(200_000);
        assertThat(CaptureReader.readAll(options.output(), null)).hasSize((int) status.records());
    }

    @Test
    void aFullQueueDropsAndCountsRecordsWithoutBlocking() {
        TrafficCapture capture = new TrafficCapture();
        // room for one chunk at a time: the writer (compressing every block) cannot keep up with this loop
        capture.start(options("tiny").withQueue(16, 1 << 20));
        CaptureRun run = capture.run();
        List<CaptureRecord> records = sample(100_000);
        long started = System.nanoTime();
        for (CaptureRecord r : records) {
            assertThat(run.offer(r)).isTrue();
        }
        long offeringMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);

        CaptureStatus status = capture.stop();

        assertThat(status.dropped()).isPositive();
        assertThat(status.records()).isPositive();
        assertThat(status.records() + status.dropped()).isEqualTo(records.size());
        assertThat(offeringMillis).as("offering never waits for the writer").isLessThan(5_000);
    }

    @Test
    void recordsOfSeveralThreadsAllArriveAndKeepEachThreadsOrder() throws Exception {
        TrafficCapture capture = new TrafficCapture();
        CaptureOptions options = options("threads");
        CaptureRun run = startAndOffer(capture, options, List.of());
        int threads = 4;
        int perThread = 10_000; // 40,000 records in all: under the default queue bound, so none is dropped
        List<Thread> producers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int session = t + 1;
            producers.add(new Thread(() -> {
                for (int i = 0; i < perThread; i++) {
                    run.offer(new SessionEnd(session, i));
                }
            }));
        }
        producers.forEach(Thread::start);
        for (Thread producer : producers) {
            producer.join();
        }

        CaptureStatus status = capture.stop();

        assertThat(status.dropped()).isZero();
        assertThat(status.records()).isEqualTo((long) threads * perThread);
        Map<Integer, List<Long>> times = new HashMap<>();
        for (CaptureRecord r : CaptureReader.readAll(options.output(), null)) {
            times.computeIfAbsent(r.sessionId(), k -> new ArrayList<>()).add(r.timeNanos());
        }
        assertThat(times).hasSize(threads);
        List<Long> expected = LongStream.range(0, perThread).boxed().toList();
        times.values().forEach(t -> assertThat(t).containsExactlyElementsOf(expected));
    }

    /** The writer's sweeps (once a second) queue a buffer's partial chunk behind its full ones, never ahead. */
    @Test
    void aThreadsRecordsKeepTheirOrderAcrossSweeps() throws Exception {
        TrafficCapture capture = new TrafficCapture();
        CaptureOptions options = options("sweeps");
        CaptureRun run = startAndOffer(capture, options, List.of());
        int records = 24_000;
        for (int i = 0; i < records; i++) {
            run.offer(new SessionEnd(1, i));
            if (i % 100 == 99) {
                Thread.sleep(10); // 240 pauses: the records span two sweeps or more, in chunks and partial ones
            }
        }

        CaptureStatus status = capture.stop();

        assertThat(status.dropped()).isZero();
        assertThat(CaptureReader.readAll(options.output(), null).stream().map(CaptureRecord::timeNanos).toList())
                .containsExactlyElementsOf(LongStream.range(0, records).boxed().toList());
    }

    @Test
    void aQuietThreadsRecordsReachTheFileWithinAboutASecond() throws Exception {
        TrafficCapture capture = new TrafficCapture();
        CaptureOptions options = options("quiet");
        CaptureRun run = startAndOffer(capture, options, List.of());
        run.offer(new SessionEnd(42, 1)); // far short of a chunk: only the writer's sweep takes it

        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (run.status().records() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }

        assertThat(run.status().records()).isEqualTo(1);
        capture.stop();
        assertThat(CaptureReader.readAll(options.output(), null)).containsExactly(new SessionEnd(42, 1));
    }

    @Test
    void aDiskThatFillsUpStopsTheCaptureAndLeavesAReadableFile() throws Exception {
        long capacity = 50_000;
        TrafficCapture capture = new TrafficCapture(file -> new FillingChannel(file, capacity));
        CaptureOptions options = options("full").withCompress(false);
        capture.start(options);
        CaptureRun run = capture.run();
        for (CaptureRecord r : sample(50_000)) {
            if (!run.offer(r) && !run.isAccepting()) {
                break;
            }
        }

        assertThat(capture.awaitStopped(10, TimeUnit.SECONDS)).isTrue();

        CaptureStatus status = capture.status();
        assertThat(status.stopReason()).contains("cannot write").contains("No space left on device");
        assertThat(Files.size(options.output().resolve("capture-000001.cap"))).isLessThanOrEqualTo(capacity);
        assertThat(CaptureReader.readAll(options.output(), null)).hasSize((int) status.records());
        assertThat(Files.readString(options.output().resolve("capture.json")))
                .contains("No space left on device").contains("\"state\": \"stopped\"");
    }

    @Test
    void refusesADirectoryThatHoldsACaptureAndASecondStart() throws Exception {
        TrafficCapture capture = new TrafficCapture();
        startAndOffer(capture, options("busy"), sample(1));

        assertThatThrownBy(() -> capture.start(options("other"))).isInstanceOfSatisfying(CaptureException.class,
                e -> assertThat(e.kind()).isEqualTo(CaptureException.Kind.CONFLICT));
        capture.stop();
        assertThatThrownBy(capture::stop).isInstanceOf(CaptureException.class).hasMessage("no capture is running");
        assertThatThrownBy(() -> capture.start(options("busy"))).isInstanceOfSatisfying(CaptureException.class,
                e -> assertThat(e.getMessage()).contains("already holds a capture"));
        assertThatThrownBy(() -> capture.start(options("space").withMinFreeSpace(Long.MAX_VALUE)))
                .isInstanceOfSatisfying(CaptureException.class,
                        e -> assertThat(e.kind()).isEqualTo(CaptureException.Kind.STORAGE));
    }

    /**
     * Blocks are gzip members written by hand around a reused raw Deflater, or zstd frames from a reused context:
     * any gzip or zstd reader takes them, whether the content compresses well or not at all (random bytes, where the
     * output is larger than the input), and a reused compressor carries nothing over from the block before.
     */
    @Test
    void blocksAreGzipMembersOrZstdFramesForAnyContent() throws IOException {
        byte[] random = new byte[300 * 1024];
        new java.util.Random(42).nextBytes(random);
        byte[] text = "SELECT c FROM sbtest1 WHERE id=?".repeat(5000).getBytes(StandardCharsets.US_ASCII);
        try (BlockCompressor gzip = new BlockCompressor.Gzip(); BlockCompressor zstd = new BlockCompressor.Zstd()) {
            for (byte[] content : List.of(random, text, new byte[0], random)) {
                byte[] member = gzip.compress(content, content.length);
                try (java.util.zip.GZIPInputStream in = new java.util.zip.GZIPInputStream(
                        new java.io.ByteArrayInputStream(member))) {
                    assertThat(in.readAllBytes()).isEqualTo(content);
                }
                byte[] frame = zstd.compress(content, content.length);
                assertThat(com.github.luben.zstd.Zstd.getFrameContentSize(frame)).isEqualTo(content.length);
                assertThat(com.github.luben.zstd.Zstd.decompress(frame, content.length)).isEqualTo(content);
            }
        }
    }
}
