package io.sluice.relay;

import static io.sluice.relay.ResponseScript.AUTOCOMMIT;
import static io.sluice.relay.ResponseScript.CURSOR_EXISTS;
import static io.sluice.relay.ResponseScript.IN_TRANS;
import static io.sluice.relay.ResponseScript.LAST_ROW_SENT;
import static io.sluice.relay.ResponseScript.MORE_RESULTS;
import static io.sluice.relay.ResponseKind.BINARY_RESULT;
import static io.sluice.relay.ResponseKind.FIELD_LIST;
import static io.sluice.relay.ResponseKind.PREPARE;
import static io.sluice.relay.ResponseKind.RESULT;
import static io.sluice.relay.ResponseKind.ROWS;
import static io.sluice.relay.ResponseKind.SINGLE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.sluice.protocol.Packets;
import io.sluice.protocol.ProtocolException;
import io.sluice.protocol.ServerStatus;
import io.sluice.testing.MySqlWire;
import io.sluice.testing.TestTier;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Feeds hand-built backend streams to a {@link ResponseTracker} whole, one byte at a time and split at random points,
 * and checks that each way it completes the same commands at the same bytes and ends in the same state.
 */
class ResponseTrackerTest {

    private static final int A = AUTOCOMMIT;
    private static final byte[] JUNK = {(byte) 0xFF, (byte) 0xFE, 0x00, (byte) 0xFB, 0x01};

    // ---- the table: every response shape, with and without CLIENT_DEPRECATE_EOF ---------------------------------

    static Stream<ResponseScript> scripts() {
        List<Function<Boolean, ResponseScript>> builders = List.of(
                d -> new ResponseScript("COM_QUERY OK", d).command(RESULT).ok(A).done(),
                d -> new ResponseScript("COM_QUERY OK with 8-byte affected rows and info", d).command(RESULT)
                        .ok(1L << 40, 70_000, A | IN_TRANS, "Rows matched: 1  Changed: 1  Warnings: 0").done(),
                d -> new ResponseScript("COM_QUERY ERR", d).command(RESULT).err().done(),
                d -> new ResponseScript("COM_QUERY result set", d).command(RESULT)
                        .resultSet(3, textRows(4, 3), A).done(),
                d -> new ResponseScript("COM_QUERY empty result set", d).command(RESULT)
                        .resultSet(2, List.of(), A).done(),
                d -> new ResponseScript("COM_QUERY rows starting with NULL, 0xFC and 0xFD lenencs", d)
                        .command(RESULT)
                        .resultSet(2, List.of(MySqlWire.textRow(null, "x"), MySqlWire.textRow("y".repeat(300), null),
                                MySqlWire.textRow("z".repeat(70_000), "")), A).done(),
                d -> new ResponseScript("COM_QUERY 300 columns (column count 0xFC lenenc)", d).command(RESULT)
                        .resultSet(300, textRows(2, 300), A).done(),
                d -> new ResponseScript("COM_QUERY 500-row result set (rows passed over in bulk)", d)
                        .command(RESULT).resultSet(3, textRows(500, 3), A).done(),
                d -> new ResponseScript("COM_STMT_EXECUTE 500-row result set (rows passed over in bulk)", d)
                        .command(BINARY_RESULT).resultSet(3, binaryRows(500, 3), A).done(),
                d -> new ResponseScript("COM_QUERY ERR after 500 rows", d).command(RESULT)
                        .metadata(3, A).packets(textRows(500, 3)).err().done(),
                d -> new ResponseScript("COM_QUERY ERR instead of a row", d).command(RESULT)
                        .metadata(2, A).packet(MySqlWire.textRow("1", "2")).err().done(),
                d -> new ResponseScript("multi-statement OK, result set, OK", d).command(RESULT)
                        .ok(A | MORE_RESULTS).resultSet(2, textRows(3, 2), A | MORE_RESULTS).ok(A).done(),
                d -> new ResponseScript("multi-statement OK then ERR", d).command(RESULT)
                        .ok(A | MORE_RESULTS).err().done(),
                d -> new ResponseScript("stored procedure: two result sets and the final OK", d)
                        .command(RESULT).resultSet(1, textRows(2, 1), A | MORE_RESULTS)
                        .resultSet(2, textRows(1, 2), A | MORE_RESULTS).ok(A).done(),
                d -> new ResponseScript("LOCAL INFILE accepted", d).command(RESULT)
                        .localInfile("/tmp/data.csv").ok(3, 0, A, "Records: 3  Deleted: 0  Skipped: 0  Warnings: 0")
                        .done(),
                d -> new ResponseScript("LOCAL INFILE refused", d).command(RESULT)
                        .localInfile("/etc/passwd").err().done(),
                d -> new ResponseScript("COM_STMT_EXECUTE OK", d).command(BINARY_RESULT).ok(A).done(),
                d -> new ResponseScript("COM_STMT_EXECUTE ERR", d).command(BINARY_RESULT).err().done(),
                d -> new ResponseScript("COM_STMT_EXECUTE result set", d).command(BINARY_RESULT)
                        .resultSet(3, binaryRows(5, 3), A).done(),
                d -> new ResponseScript("COM_STMT_EXECUTE procedure results", d).command(BINARY_RESULT)
                        .resultSet(1, binaryRows(1, 1), A | MORE_RESULTS).ok(A).done(),
                d -> new ResponseScript("COM_STMT_EXECUTE opens a cursor", d).command(BINARY_RESULT)
                        .cursorOpened(2, A).done(),
                d -> new ResponseScript("COM_STMT_FETCH rows", d).command(ROWS)
                        .fetched(binaryRows(3, 2), A | CURSOR_EXISTS).done(),
                d -> new ResponseScript("COM_STMT_FETCH last rows", d).command(ROWS)
                        .fetched(binaryRows(1, 2), A | LAST_ROW_SENT).done(),
                d -> new ResponseScript("COM_STMT_FETCH ERR", d).command(ROWS).err().done(),
                d -> new ResponseScript("cursor, then two fetches", d)
                        .command(BINARY_RESULT).cursorOpened(2, A).done()
                        .command(ROWS).fetched(binaryRows(2, 2), A | CURSOR_EXISTS).done()
                        .command(ROWS).fetched(binaryRows(1, 2), A | CURSOR_EXISTS | LAST_ROW_SENT).done(),
                d -> new ResponseScript("COM_STMT_PREPARE 2 params 3 columns", d).command(PREPARE)
                        .prepared(2, 3).done(),
                d -> new ResponseScript("COM_STMT_PREPARE 0 params 0 columns", d).command(PREPARE)
                        .prepared(0, 0).done(),
                d -> new ResponseScript("COM_STMT_PREPARE 2 params 0 columns", d).command(PREPARE)
                        .prepared(2, 0).done(),
                d -> new ResponseScript("COM_STMT_PREPARE 0 params 4 columns", d).command(PREPARE)
                        .prepared(0, 4).done(),
                d -> new ResponseScript("COM_STMT_PREPARE ERR", d).command(PREPARE).err().done(),
                d -> new ResponseScript("COM_FIELD_LIST", d).command(FIELD_LIST).fieldList(3).done(),
                d -> new ResponseScript("COM_FIELD_LIST ERR", d).command(FIELD_LIST).err().done(),
                d -> new ResponseScript("COM_PING OK", d).command(SINGLE).ok(A).done(),
                d -> new ResponseScript("COM_INIT_DB ERR", d).command(SINGLE).err().done(),
                d -> new ResponseScript("COM_STATISTICS string", d).command(SINGLE)
                        .packet(ascii("Uptime: 42  Threads: 1  Questions: 7  Slow queries: 0  Opens: 1")).done(),
                d -> new ResponseScript("transaction: BEGIN, SELECT, COMMIT", d)
                        .command(RESULT).ok(A | IN_TRANS).done()
                        .command(RESULT).resultSet(1, textRows(1, 1), A | IN_TRANS).done()
                        .command(RESULT).ok(A).done(),
                d -> {
                    ResponseScript s = new ResponseScript("pipelined: every kind in a row", d)
                            .command(RESULT).resultSet(2, textRows(2, 2), A).done()
                            .command(SINGLE).ok(A).done()
                            .command(PREPARE).prepared(1, 1).done()
                            .command(BINARY_RESULT).resultSet(1, binaryRows(2, 1), A | IN_TRANS).done()
                            .command(FIELD_LIST).fieldList(2).done()
                            .command(RESULT).localInfile("f").ok(A | IN_TRANS).done()
                            .command(RESULT).err().done();
                    for (int i = 0; i < 20; i++) { // more than the tracker's initial queue of 8
                        s.command(SINGLE).ok(i % 2 == 0 ? A : A | IN_TRANS).done();
                    }
                    return s;
                });
        return Stream.concat(Stream.of(false, true).flatMap(d -> builders.stream().map(b -> b.apply(d))),
                cacheMetadataScripts());
    }

    /** MariaDB's MARIADB_CLIENT_CACHE_METADATA: a "metadata follows" byte after each column count. */
    static Stream<ResponseScript> cacheMetadataScripts() {
        List<Function<Boolean, ResponseScript>> builders = List.of(
                d -> new ResponseScript("COM_STMT_EXECUTE, definitions left out", d, true)
                        .command(BINARY_RESULT).resultSetSkippingMetadata(3, binaryRows(5, 3), A).done(),
                d -> new ResponseScript("COM_STMT_EXECUTE, definitions left out, no row", d, true)
                        .command(BINARY_RESULT).resultSetSkippingMetadata(2, List.of(), A | IN_TRANS).done(),
                d -> new ResponseScript("COM_STMT_EXECUTE, definitions sent again (metadata follows 1)", d, true)
                        .command(BINARY_RESULT).resultSet(3, binaryRows(2, 3), A).done(),
                d -> new ResponseScript("COM_STMT_EXECUTE, 300 columns left out (0xFC column count)", d, true)
                        .command(BINARY_RESULT).resultSetSkippingMetadata(300, binaryRows(2, 300), A).done(),
                d -> new ResponseScript("COM_STMT_EXECUTE procedure results, definitions left out", d, true)
                        .command(BINARY_RESULT)
                        .resultSetSkippingMetadata(1, binaryRows(1, 1), A | MORE_RESULTS).ok(A).done(),
                d -> new ResponseScript("cursor opened without definitions, then fetches", d, true)
                        .command(BINARY_RESULT).cursorOpenedSkippingMetadata(2, A).done()
                        .command(ROWS).fetched(binaryRows(2, 2), A | CURSOR_EXISTS).done()
                        .command(ROWS).fetched(binaryRows(1, 2), A | CURSOR_EXISTS | LAST_ROW_SENT).done(),
                d -> new ResponseScript("COM_QUERY result set with the metadata byte", d, true)
                        .command(RESULT).resultSet(2, textRows(3, 2), A).done(),
                d -> new ResponseScript("prepare, then executes with and without definitions", d, true)
                        .command(PREPARE).prepared(1, 2).done()
                        .command(BINARY_RESULT).resultSetSkippingMetadata(2, binaryRows(1, 2), A).done()
                        .command(BINARY_RESULT).resultSet(2, binaryRows(1, 2), A).done()
                        .command(BINARY_RESULT).resultSetSkippingMetadata(2, binaryRows(3, 2), A).done());
        return Stream.of(false, true).flatMap(d -> builders.stream().map(b -> b.apply(d)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scripts")
    void followsEveryResponseShapeHoweverTheBytesAreSplit(ResponseScript script) {
        byte[] bytes = script.bytes();
        Run whole = feed(script, List.of(bytes.length));
        Run byByte = feed(script, Collections.nCopies(bytes.length, 1));
        assertThat(byByte).isEqualTo(whole);
        for (int seed = 1; seed <= 6; seed++) {
            assertThat(feed(script, randomSplit(bytes.length, seed, 1 << seed))).isEqualTo(whole);
        }
    }

    @Test
    void tracksTheTransactionFlagCommandByCommand() {
        ResponseScript script = new ResponseScript("BEGIN; INSERT; ROLLBACK", true)
                .command(RESULT).ok(A | IN_TRANS).done()
                .command(BINARY_RESULT).ok(1, 5, A | IN_TRANS, "").done()
                .command(RESULT).err().done() // a failing statement leaves the transaction open
                .command(SINGLE).ok(A).done();

        Run run = feed(script, List.of(script.size()));

        assertThat(run.inTransaction).containsExactly(true, true, true, false);
    }

    @Test
    void readsTheTransactionFlagFromTheEofBeforeRowsAndTheTerminator() {
        ResponseScript script = new ResponseScript("SELECT inside a transaction", false)
                .command(RESULT).resultSet(1, textRows(1, 1), A | IN_TRANS).done()
                .command(RESULT).resultSet(1, textRows(1, 1), A).done();

        Run run = feed(script, List.of(script.size()));

        assertThat(run.inTransaction).containsExactly(true, false);
        assertThat(run.statuses).containsExactly(A | IN_TRANS, A);
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void aRowOf16MiBAndMoreIsNotMistakenForItsTerminator(boolean deprecateEof) {
        // A text row whose one value is 16 MiB + 100 bytes of 0xFE: its first byte is 0xFE (an 8-byte lenenc), and
        // the continuation frame is short and starts with 0xFE too, like an EOF; neither is the end of the result.
        byte[] value = new byte[MySqlWire.MAX_PAYLOAD + 100];
        Arrays.fill(value, (byte) 0xFE);
        byte[] row = MySqlWire.payload().lenenc(value.length).bytes(value).toBytes();
        // A row of exactly 0xFFFFFF bytes is followed by an empty frame.
        byte[] exact = MySqlWire.payload().lenenc(MySqlWire.MAX_PAYLOAD - 4).bytes(new byte[MySqlWire.MAX_PAYLOAD - 4])
                .toBytes();
        assertThat(exact).hasSize(MySqlWire.MAX_PAYLOAD);
        byte[] err = new byte[MySqlWire.MAX_PAYLOAD + 3];
        Arrays.fill(err, (byte) 0xFF);
        byte[] binary = MySqlWire.payload().int1(0).int1(0).lenenc(err.length).bytes(err).toBytes();
        ResponseScript script = new ResponseScript("16 MiB rows", deprecateEof)
                .command(RESULT).resultSet(1, List.of(row, exact, MySqlWire.textRow("small")), A).done()
                .command(BINARY_RESULT).resultSet(1, List.of(binary), A).done();
        byte[] bytes = script.bytes();

        Run whole = feed(script, List.of(bytes.length));

        // Byte by byte: 50 million scans, most of this class's time. The fast tier splits byte by byte only where the
        // tracker looks, each frame's header and the start of its payload, and passes the rest of each row whole.
        List<Integer> oneByOne = TestTier.fast() ? oneByteWhereTheTrackerLooks(bytes, 64)
                : Collections.nCopies(bytes.length, 1);
        assertThat(feed(script, oneByOne)).isEqualTo(whole);
        assertThat(feed(script, randomSplit(bytes.length, 7, 1 << 16))).isEqualTo(whole);
    }

    /**
     * Pieces of one byte from each frame's header to {@code window} bytes into its payload (the tracker reads no
     * further into a packet: {@link PacketHead}), and the rest of the frame in one piece.
     */
    private static List<Integer> oneByteWhereTheTrackerLooks(byte[] bytes, int window) {
        List<Integer> pieces = new ArrayList<>();
        int pos = 0;
        while (pos < bytes.length) {
            int end = pos + Packets.HEADER_SIZE + ((bytes[pos] & 0xFF) | (bytes[pos + 1] & 0xFF) << 8
                    | (bytes[pos + 2] & 0xFF) << 16);
            int dense = Math.min(end, pos + Packets.HEADER_SIZE + window);
            pieces.addAll(Collections.nCopies(dense - pos, 1));
            if (end > dense) {
                pieces.add(end - dense);
            }
            pos = end;
        }
        return pieces;
    }

    @Test
    void pipelinedCommandsCompleteInOrder() {
        List<Integer> completedAt = new ArrayList<>();
        ResponseTracker[] holder = new ResponseTracker[1];
        PipelinedTracker pipeline = new PipelinedTracker(false, false, new ResponseListener() {
            @Override
            public void onLocalInfileRequest() {
                completedAt.add(-1);
            }

            @Override
            public void onResponseComplete() {
                completedAt.add(holder[0].inTransaction() ? 1 : 0);
            }
        });
        ResponseTracker tracker = pipeline.tracker;
        holder[0] = tracker;
        ResponseScript script = new ResponseScript("BEGIN, SELECT, COMMIT", false)
                .command(RESULT).ok(A | IN_TRANS).done()
                .command(RESULT).resultSet(1, textRows(3, 1), A | IN_TRANS).done()
                .command(RESULT).ok(A).done();
        pipeline.expect(RESULT);
        pipeline.expect(RESULT);
        pipeline.expect(RESULT);

        scan(tracker, script.bytes(), 0, script.ends.get(0));
        assertThat(completedAt).containsExactly(1);
        assertThat(tracker.isIdle()).isFalse();
        assertThat(tracker.isResponseStarted()).isFalse();
        scan(tracker, script.bytes(), script.ends.get(0), script.ends.get(1));
        assertThat(completedAt).containsExactly(1, 1);
        scan(tracker, script.bytes(), script.ends.get(1), script.size());
        assertThat(completedAt).containsExactly(1, 1, 0);
        assertThat(tracker.isIdle()).isTrue();
    }

    @Test
    void reportsWhetherTheResponseHasStarted() {
        ResponseTracker tracker = new ResponseTracker(false, false, new Counter());
        ResponseScript script = new ResponseScript("result set", false)
                .command(RESULT).resultSet(1, textRows(1, 1), A).done();
        byte[] bytes = script.bytes();
        tracker.begin(RESULT);
        assertThat(tracker.isResponseStarted()).isFalse();
        assertThat(tracker.isIdle()).isFalse();

        scan(tracker, bytes, 0, 5); // the column count's header and its payload byte
        assertThat(tracker.isResponseStarted()).isTrue();

        scan(tracker, bytes, 5, bytes.length);
        assertThat(tracker.isResponseStarted()).isFalse();
        assertThat(tracker.isIdle()).isTrue();
    }

    @Test
    void aHalfReadFinalPacketKeepsTheTrackerBusyAndCompletesOnItsLastByte() {
        Counter counter = new Counter();
        ResponseTracker tracker = new ResponseTracker(true, false, counter);
        byte[] ok = new ResponseScript("OK with info", true).command(RESULT)
                .ok(1, 0, A, "a long info string, read after the status").done().bytes();
        tracker.begin(RESULT);

        scan(tracker, ok, 0, ok.length - 1);
        assertThat(counter.completed).isZero();
        assertThat(tracker.isIdle()).isFalse();

        scan(tracker, ok, ok.length - 1, ok.length);
        assertThat(counter.completed).isEqualTo(1);
        assertThat(tracker.isIdle()).isTrue();
    }

    @Test
    void aPacketWhileIdleIsAProtocolError() {
        ResponseTracker tracker = new ResponseTracker(false, false, new Counter());
        byte[] ok = new ResponseScript("OK", false).command(SINGLE).ok(A).done().bytes();

        assertThatThrownBy(() -> scan(tracker, ok, 0, ok.length)).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("idle");
    }

    @Test
    void aHeaderWhileIdleIsRefusedAtItsFirstByteSoNoneOfItIsRelayed() {
        Counter counter = new Counter();
        ResponseTracker tracker = new ResponseTracker(false, false, counter);
        byte[] okThenOk = new ResponseScript("OK OK", false).command(SINGLE).ok(A).done()
                .command(SINGLE).ok(A).done().bytes();
        int secondStarts = okThenOk.length / 2;
        tracker.begin(SINGLE);
        scan(tracker, okThenOk, 0, secondStarts);

        // The relay writes what a scan passed: a stray header's first byte must already fail the scan.
        assertThatThrownBy(() -> scan(tracker, okThenOk, secondStarts, secondStarts + 1))
                .isInstanceOf(ProtocolException.class).hasMessageContaining("idle");
        assertThat(counter.completed).isEqualTo(1);
    }

    @Test
    void aPacketAfterTheLastResponseIsAProtocolError() {
        Counter counter = new Counter();
        ResponseTracker tracker = new ResponseTracker(false, false, counter);
        byte[] twoOks = new ResponseScript("OK OK", false).command(SINGLE).ok(A).done()
                .command(SINGLE).ok(A).done().bytes();
        tracker.begin(SINGLE);

        assertThatThrownBy(() -> scan(tracker, twoOks, 0, twoOks.length)).isInstanceOf(ProtocolException.class);
        assertThat(counter.completed).isEqualTo(1);
    }

    @Test
    void refusesToFollowACommandWithoutAResponse() {
        ResponseTracker tracker = new ResponseTracker(false, false, new Counter());

        assertThatThrownBy(() -> tracker.begin(ResponseKind.NONE)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("NONE");
        assertThat(tracker.isIdle()).isTrue();
    }

    @Test
    void refusesToBeginAResponseWhileFollowingAnother() {
        ResponseTracker tracker = new ResponseTracker(false, false, new Counter());
        tracker.begin(RESULT);

        assertThatThrownBy(() -> tracker.begin(SINGLE)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("RESULT");
    }

    @Test
    void statusFlagValuesMatchMysqlCom() {
        assertThat(ServerStatus.SERVER_STATUS_IN_TRANS).isEqualTo(IN_TRANS);
        assertThat(ServerStatus.SERVER_STATUS_AUTOCOMMIT).isEqualTo(AUTOCOMMIT);
        assertThat(ServerStatus.SERVER_MORE_RESULTS_EXISTS).isEqualTo(MORE_RESULTS);
        assertThat(ServerStatus.SERVER_STATUS_CURSOR_EXISTS).isEqualTo(CURSOR_EXISTS);
        assertThat(ServerStatus.SERVER_STATUS_LAST_ROW_SENT).isEqualTo(LAST_ROW_SENT);
    }

    // ---- the harness ---------------------------------------------------------------------------------------------

    /** What a tracker reported while following a stream; equal between runs that agree. */
    record Run(List<String> events, List<Integer> statuses, List<Boolean> inTransaction) {
    }

    private static final class Counter implements ResponseListener {
        int infile;
        int completed;

        @Override
        public void onLocalInfileRequest() {
            infile++;
        }

        @Override
        public void onResponseComplete() {
            completed++;
        }
    }

    /** Records events with the stream range being scanned when each happened. */
    private static final class Recorder implements ResponseListener {
        final ResponseScript script;
        ResponseTracker tracker;
        PipelinedTracker pipeline;
        int chunkStart;
        int chunkEnd;
        final List<String> events = new ArrayList<>();
        final List<Integer> statuses = new ArrayList<>();
        final List<Boolean> inTransaction = new ArrayList<>();

        Recorder(ResponseScript script) {
            this.script = script;
        }

        @Override
        public void onLocalInfileRequest() {
            events.add(ResponseScript.INFILE);
        }

        @Override
        public void onResponseComplete() {
            int k = statuses.size();
            assertThat(k).as("%s: completions", script).isLessThan(script.ends.size());
            int end = script.ends.get(k);
            assertThat(end).as("%s: command %d completes with the chunk holding its last byte", script, k)
                    .isGreaterThan(chunkStart).isLessThanOrEqualTo(chunkEnd);
            assertThat(pipeline.hasPending()).as("%s: commands wait when command %d completes", script, k)
                    .isEqualTo(k < script.ends.size() - 1);
            events.add(ResponseScript.COMPLETE);
            statuses.add(tracker.serverStatus());
            inTransaction.add(tracker.inTransaction());
        }
    }

    /** Announces every command of the script, then feeds its bytes in chunks of the given sizes. */
    @Test
    void followsManyRowsInDirectBuffersAsInHeapOnes() {
        for (boolean deprecateEof : new boolean[] {false, true}) {
            ResponseScript script = new ResponseScript("rows in direct buffers", deprecateEof)
                    .command(RESULT).resultSet(3, textRows(2_000, 3), A).done()
                    .command(BINARY_RESULT).resultSet(3, binaryRows(2_000, 3), A).done()
                    .command(RESULT).metadata(3, A).packets(textRows(700, 3)).err().done();
            int length = script.bytes().length;
            Run heap = feed(script, List.of(length));

            assertThat(feed(script, List.of(length), true)).isEqualTo(heap);
            assertThat(feed(script, randomSplit(length, 11, 1 << 14), true)).isEqualTo(heap);
        }
    }

    private static Run feed(ResponseScript script, List<Integer> chunks) {
        return feed(script, chunks, false);
    }

    private static Run feed(ResponseScript script, List<Integer> chunks, boolean direct) {
        Recorder recorder = new Recorder(script);
        PipelinedTracker pipeline = new PipelinedTracker(script.deprecateEof, script.cacheMetadata, recorder);
        ResponseTracker tracker = pipeline.tracker;
        recorder.tracker = tracker;
        recorder.pipeline = pipeline;
        assertThat(tracker.isIdle()).isTrue();
        script.kinds.forEach(pipeline::expect);
        byte[] bytes = script.bytes();
        int pos = 0;
        for (int size : chunks) {
            recorder.chunkStart = pos;
            recorder.chunkEnd = pos + size;
            if (direct) {
                scanDirect(tracker, bytes, pos, pos + size);
            } else {
                scan(tracker, bytes, pos, pos + size);
            }
            pos += size;
            if (pos < bytes.length && tracker.isIdle()) {
                throw new AssertionError(script + ": idle at " + pos + " of " + bytes.length);
            }
        }
        assertThat(pos).isEqualTo(bytes.length);
        assertThat(tracker.isIdle()).as("%s: idle at the end", script).isTrue();
        assertThat(tracker.isResponseStarted()).isFalse();
        assertThat(recorder.events).as("%s: events", script).isEqualTo(script.events);
        assertThat(recorder.statuses).as("%s: status flags", script).isEqualTo(script.statuses);
        return new Run(recorder.events, recorder.statuses, recorder.inTransaction);
    }

    /**
     * Scans {@code bytes[from, to)} from a buffer framed by junk on both sides, so a tracker reading outside its
     * reader and writer indexes would trip, and checks the scan borrowed the buffer without moving its indexes.
     */
    private static void scan(ResponseTracker tracker, byte[] bytes, int from, int to) {
        int length = to - from;
        byte[] framed = new byte[length + 2 * JUNK.length];
        System.arraycopy(JUNK, 0, framed, 0, JUNK.length);
        System.arraycopy(bytes, from, framed, JUNK.length, length);
        System.arraycopy(JUNK, 0, framed, JUNK.length + length, JUNK.length);
        // wrappedBuffer, not buffer(): this runs once per byte of 16 MiB streams, under paranoid leak detection
        ByteBuf buf = Unpooled.wrappedBuffer(framed).setIndex(JUNK.length, JUNK.length + length);
        try {
            tracker.scan(buf);
            if (buf.readerIndex() != JUNK.length || buf.writerIndex() != JUNK.length + length) {
                throw new AssertionError("scan moved the indexes: " + buf);
            }
        } finally {
            if (!buf.release()) {
                throw new AssertionError("scan retained the buffer: " + buf);
            }
        }
    }

    /** As {@link #scan}, from a pooled direct buffer (the kind the relay reads into), junk around it as well. */
    private static void scanDirect(ResponseTracker tracker, byte[] bytes, int from, int to) {
        int length = to - from;
        ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer(length + 2 * JUNK.length);
        try {
            buf.writeBytes(JUNK).writeBytes(bytes, from, length).writeBytes(JUNK);
            buf.setIndex(JUNK.length, JUNK.length + length);
            tracker.scan(buf);
            if (buf.readerIndex() != JUNK.length || buf.writerIndex() != JUNK.length + length) {
                throw new AssertionError("scan moved the indexes: " + buf);
            }
        } finally {
            buf.release();
        }
    }

    private static List<Integer> randomSplit(int length, long seed, int maxChunk) {
        Random random = new Random(seed);
        List<Integer> chunks = new ArrayList<>();
        for (int left = length; left > 0; ) {
            int size = Math.min(left, 1 + random.nextInt(maxChunk));
            chunks.add(size);
            left -= size;
        }
        return chunks;
    }

    private static List<byte[]> textRows(int rows, int columns) {
        List<byte[]> out = new ArrayList<>();
        for (int r = 0; r < rows; r++) {
            String[] values = new String[columns];
            for (int c = 0; c < columns; c++) {
                values[c] = r + "," + c;
            }
            out.add(MySqlWire.textRow(values));
        }
        return out;
    }

    private static List<byte[]> binaryRows(int rows, int columns) {
        List<byte[]> out = new ArrayList<>();
        for (int r = 0; r < rows; r++) {
            int[] values = new int[columns];
            Arrays.fill(values, 0xFFFE_FEFF - r); // bytes that look like ERR and EOF headers
            out.add(MySqlWire.binaryRow(values));
        }
        return out;
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
