package io.sluice.relay;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.sluice.protocol.ProtocolException;
import io.sluice.testing.LeakDetection;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A {@link ResponseTracker} fed by a hostile backend: every response shape of {@link ResponseTrackerTest}'s table,
 * its bytes damaged (flipped, cut, spliced, repeated, garbage appended or alone) and its commands' kinds sometimes
 * wrong, split at random points into pooled direct buffers as the relay reads them. Whatever comes, the tracker
 * throws nothing but {@link ProtocolException} (on which the connection closes); it reads the same way however the
 * bytes are split (same completions, same verdict); once every command it was given has completed, the next byte is
 * a {@code ProtocolException}, never the start of a response nobody asked for (which the relay would pass to the
 * client as an answer); and it never keeps a buffer.
 *
 * <p>Seeded: {@code -Dsluice.fuzz.seed} (default 30) replays a run, {@code -Dsluice.fuzz.cases} sets the number of
 * cases (default 5,000).
 */
@ExtendWith(LeakDetection.class)
class ResponseTrackerFuzzTest {
    private static final int CASES = Integer.getInteger("sluice.fuzz.cases", 5_000);
    private static final long SEED = Long.getLong("sluice.fuzz.seed", 30);
    /** Streams up to this size are also fed byte by byte, which places each completion exactly. */
    private static final int BYTE_BY_BYTE_UP_TO = 4 * 1024;

    /** What a run of the tracker amounted to. */
    private record Run(int completions, int infileRequests, boolean protocolError, int status) {
    }

    @Test
    void hostileResponsesEndInAProtocolErrorAtWorstAndReadTheSameHoweverSplit() {
        List<ResponseScript> scripts = ResponseTrackerTest.scripts().toList();
        Random random = new Random(SEED);
        int errors = 0;
        for (int i = 0; i < CASES; i++) {
            ResponseScript script = scripts.get(random.nextInt(scripts.size()));
            List<ResponseKind> kinds = kinds(script, random);
            byte[] bytes = mutate(script.bytes(), random);
            String where = "seed " + SEED + ", case " + i + ", script '" + script.name + "', kinds " + kinds + ", "
                    + bytes.length + " bytes";
            Run whole = feed(script, kinds, bytes, List.of(bytes.length), where);
            for (int split = 0; split < 2; split++) {
                assertThat(feed(script, kinds, bytes, randomSplit(bytes.length, random), where))
                        .as("%s: split at random", where).isEqualTo(whole);
            }
            if (bytes.length <= BYTE_BY_BYTE_UP_TO) {
                assertThat(feed(script, kinds, bytes, null, where)).as("%s: byte by byte", where).isEqualTo(whole);
            }
            errors += whole.protocolError() ? 1 : 0;
        }
        assertThat(errors).as("cases that ended in a protocol error").isBetween(CASES / 10, CASES - CASES / 10);
    }

    /** The script's kinds, or now and then a wrong one in their place, or one too many or too few. */
    private static List<ResponseKind> kinds(ResponseScript script, Random random) {
        List<ResponseKind> kinds = new ArrayList<>(script.kinds);
        ResponseKind[] answered = {ResponseKind.RESULT, ResponseKind.BINARY_RESULT, ResponseKind.ROWS,
            ResponseKind.PREPARE, ResponseKind.FIELD_LIST, ResponseKind.SINGLE};
        switch (random.nextInt(6)) {
            case 0:
                kinds.set(random.nextInt(kinds.size()), answered[random.nextInt(answered.length)]);
                break;
            case 1:
                kinds.add(answered[random.nextInt(answered.length)]);
                break;
            case 2:
                if (kinds.size() > 1) {
                    kinds.remove(kinds.size() - 1);
                }
                break;
            default:
                break;
        }
        return kinds;
    }

    private static byte[] mutate(byte[] bytes, Random random) {
        switch (random.nextInt(7)) {
            case 0: { // bytes flipped
                byte[] out = bytes.clone();
                for (int n = 1 + random.nextInt(4); n > 0; n--) {
                    out[random.nextInt(out.length)] = (byte) random.nextInt(256);
                }
                return out;
            }
            case 1: // cut short
                return Arrays.copyOf(bytes, random.nextInt(bytes.length));
            case 2: { // garbage spliced in
                int at = random.nextInt(bytes.length + 1);
                byte[] garbage = garbage(random, 1 + random.nextInt(16));
                byte[] out = Arrays.copyOf(bytes, bytes.length + garbage.length);
                System.arraycopy(garbage, 0, out, at, garbage.length);
                System.arraycopy(bytes, at, out, at + garbage.length, bytes.length - at);
                return out;
            }
            case 3: { // a stretch repeated: a packet the server sent twice
                int from = random.nextInt(bytes.length);
                int to = from + random.nextInt(Math.min(64, bytes.length - from) + 1);
                byte[] out = Arrays.copyOf(bytes, bytes.length + to - from);
                System.arraycopy(bytes, from, out, to, bytes.length - from);
                return out;
            }
            case 4: { // garbage after the last response
                byte[] out = Arrays.copyOf(bytes, bytes.length + 1 + random.nextInt(16));
                System.arraycopy(garbage(random, out.length - bytes.length), 0, out, bytes.length,
                        out.length - bytes.length);
                return out;
            }
            case 5:
                return garbage(random, random.nextInt(64));
            default: // the stream as it was: the kinds may still be wrong
                return bytes;
        }
    }

    /**
     * Feeds {@code bytes} in pieces of {@code chunks} (null: byte by byte, checking that no byte passes once every
     * command completed) to a tracker given {@code kinds} one after the other, as a connection's in-flight queue does.
     */
    private static Run feed(ResponseScript script, List<ResponseKind> kinds, byte[] bytes, List<Integer> chunks,
            String where) {
        int[] infile = {0};
        int[] completions = {0};
        PipelinedTracker pipeline = new PipelinedTracker(script.deprecateEof, script.cacheMetadata,
                new ResponseListener() {
                    @Override
                    public void onLocalInfileRequest() {
                        infile[0]++;
                    }

                    @Override
                    public void onResponseComplete() {
                        completions[0]++;
                    }
                });
        kinds.forEach(pipeline::expect);
        boolean byByte = chunks == null;
        int at = 0;
        int piece = 0;
        while (at < bytes.length) {
            int size = byByte ? 1 : chunks.get(piece++);
            boolean allDone = completions[0] == kinds.size();
            ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer(size);
            try {
                buf.writeBytes(bytes, at, size);
                pipeline.tracker.scan(buf);
                assertThat(buf.refCnt()).as("%s: the tracker kept the buffer", where).isOne();
            } catch (ProtocolException e) {
                return new Run(completions[0], infile[0], true, -1);
            } catch (RuntimeException e) {
                throw new AssertionError(where + ": " + e, e);
            } finally {
                buf.release();
            }
            if (byByte && allDone) {
                throw new AssertionError(where + ": byte " + at + " passed after every command completed");
            }
            at += size;
        }
        return new Run(completions[0], infile[0], false, pipeline.tracker.serverStatus());
    }

    private static List<Integer> randomSplit(int length, Random random) {
        List<Integer> chunks = new ArrayList<>();
        for (int left = length; left > 0; ) {
            int size = Math.min(left, 1 + random.nextInt(Math.max(1, length / 3)));
            chunks.add(size);
            left -= size;
        }
        return chunks;
    }

    private static byte[] garbage(Random random, int n) {
        byte[] bytes = new byte[n];
        random.nextBytes(bytes);
        return bytes;
    }
}
