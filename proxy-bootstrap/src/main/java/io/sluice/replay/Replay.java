package io.sluice.replay;

import io.sluice.capture.CaptureFormat;
import io.sluice.capture.CaptureKey;
import io.sluice.capture.CaptureReader;
import io.sluice.capture.CaptureRecord;
import io.sluice.capture.CaptureRecord.ChangeUser;
import io.sluice.capture.CaptureRecord.CommandRecord;
import io.sluice.capture.CaptureRecord.Outcome;
import io.sluice.capture.CaptureRecord.SessionBegin;
import io.sluice.capture.CaptureRecord.SessionEnd;
import io.sluice.json.Json;
import io.sluice.protocol.Command;
import io.sluice.relay.ResponseKind;
import io.sluice.readwrite.Route;
import io.sluice.readwrite.StatementClassifier;
import io.sluice.sql.SqlDigest;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Replays a capture against a target server: each captured session on a connection and thread of its own, so the
 * capture's concurrency is kept, and each command sent when its captured start time (scaled by the speed) comes.
 * Prepared statements are prepared again on the target and executes sent with the target's statement ids.
 *
 * <p>The capture is read as a stream by one dispatching thread that hands records to the sessions' bounded queues,
 * so a long capture does not have to fit in memory.
 */
public final class Replay {
    private static final int SESSION_QUEUE = 4096;
    private static final int CONNECT_TIMEOUT_MILLIS = 10_000;
    /** Marks the end of a session's records. */
    private static final Object END = new Object();

    private final ReplayOptions options;
    private final ReplayReport report;
    private final Map<Integer, SessionReplay> open = new HashMap<>();
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicInteger sessionsOpen = new AtomicInteger();
    private volatile boolean aborted;
    private long originNanos = -1;
    private long replayStartNanos;

    private Replay(ReplayOptions options) {
        this.options = options;
        this.report = new ReplayReport(options);
    }

    /**
     * Runs a replay to its end.
     *
     * @param progress where progress lines go while it runs (every {@code options.progressMillis()})
     * @throws IOException when the capture cannot be read; a damaged file is named with the offset of the damage
     */
    public static ReplayReport run(ReplayOptions options, PrintStream progress) throws IOException, InterruptedException {
        return new Replay(options).replay(progress);
    }

    private ReplayReport replay(PrintStream progress) throws IOException, InterruptedException {
        CaptureKey key = options.keyFile() == null ? null : CaptureKey.load(options.keyFile());
        Map<String, Object> manifest = manifest(options.input());
        long capturedCommands = 0;
        long lastEnd = 0;
        Thread reporter = progressReporter(progress);
        try (CaptureReader reader = CaptureReader.open(options.input(), key)) {
            for (CaptureRecord record = reader.next(); record != null; record = reader.next()) {
                if (originNanos < 0) {
                    originNanos = record.timeNanos();
                    replayStartNanos = System.nanoTime();
                }
                if (record instanceof CommandRecord command) {
                    capturedCommands++;
                    lastEnd = Math.max(lastEnd, command.timeNanos() + command.durationNanos());
                }
                dispatch(record);
            }
        } catch (IOException | RuntimeException e) {
            aborted = true;
            endAll();
            throw e;
        } finally {
            if (aborted) {
                joinAll();
                reporter.interrupt();
            }
        }
        endAll();
        joinAll();
        reporter.interrupt();
        long elapsed = originNanos < 0 ? 0 : System.nanoTime() - replayStartNanos;
        report.finish(elapsed, Math.max(0, lastEnd - Math.max(0, originNanos)), capturedCommands,
                manifest.get("dropped") instanceof Long dropped ? dropped : null,
                manifest.get("stopReason") instanceof String reason ? reason : null);
        if (options.report() != null) {
            Files.writeString(options.report(), report.toJsonText());
        }
        return report;
    }

    private static Map<String, Object> manifest(Path dir) {
        Path file = dir.resolve(CaptureFormat.MANIFEST);
        try {
            return Files.exists(file) ? Json.parseObject(Files.readString(file)) : Map.of();
        } catch (IOException | IllegalArgumentException e) {
            return Map.of(); // the manifest only adds notes to the report; the capture files are what count
        }
    }

    private void dispatch(CaptureRecord record) throws InterruptedException {
        SessionReplay session = open.get(record.sessionId());
        if (record instanceof SessionBegin && session != null) {
            session.queue.put(END); // the id was reused: the earlier session is over
            session = null;
        }
        if (session == null) {
            session = new SessionReplay(record.sessionId());
            open.put(record.sessionId(), session);
            Thread thread = new Thread(session, "replay-session-" + record.sessionId());
            thread.setDaemon(true);
            threads.add(thread);
            report.sessionsStarted.increment();
            sessionsOpen.incrementAndGet();
            thread.start();
        }
        session.queue.put(record);
        if (record instanceof SessionEnd) {
            session.queue.put(END);
            open.remove(record.sessionId());
        }
    }

    private void endAll() throws InterruptedException {
        for (SessionReplay session : open.values()) {
            session.queue.put(END);
        }
        open.clear();
    }

    private void joinAll() throws InterruptedException {
        for (Thread thread : threads) {
            thread.join();
        }
    }

    private Thread progressReporter(PrintStream progress) {
        Thread thread = new Thread(() -> {
            long interval = options.progressMillis();
            if (interval <= 0 || progress == null) {
                return;
            }
            long started = System.nanoTime();
            try {
                while (true) {
                    Thread.sleep(interval);
                    int alive = sessionsOpen.get();
                    progress.printf("replay: %.0f s: %d commands replayed, %d skipped, %d new errors, %d vanished"
                            + " errors, %d sessions open%n", (System.nanoTime() - started) / 1e9, report.replayed(),
                            report.skipped(), report.newErrors(), report.vanishedErrors(), alive);
                }
            } catch (InterruptedException e) {
                // the replay is over
            }
        }, "replay-progress");
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    /**
     * Which response a command gets, as Sluice's relay expects it; one packet for the commands the relay does not
     * relay (COM_SHUTDOWN, COM_TIME, ...), which answer with OK or ERR.
     */
    static ResponseKind expectedResponse(int command) {
        ResponseKind kind = ResponseKind.of(command);
        return kind == null ? ResponseKind.SINGLE : kind;
    }

    /**
     * Whether a statement changes no data: what {@code --read-only} replays. Judged by the statement analysis the
     * read/write router uses ({@link StatementClassifier}, issue #38), so that replay and routing never disagree: what
     * a replica may run, and the statements that only set the session's stage (a session SET, BEGIN and COMMIT,
     * SHOW WARNINGS, a user variable). A locking read, a lock function, a call of anything not known to be
     * read-only, a server-wide SET: not replayed.
     */
    static boolean isRead(String sql) {
        int statementClass = StatementClassifier.classify(sql);
        if (StatementClassifier.route(statementClass) == Route.REPLICA) {
            return true;
        }
        return switch (StatementClassifier.reason(statementClass)) {
            case SESSION_SET, SESSION_STATE, TRANSACTION, DIAGNOSTICS, PINNING -> true;
            default -> false;
        };
    }

    /** A statement prepared in the captured session: its text, and its id on the target (-1: not prepared there). */
    private record Statement(long targetId, String digest, boolean read) {
    }

    /** One captured session, replayed on its own connection and thread. */
    private final class SessionReplay implements Runnable {
        final BlockingQueue<Object> queue = new ArrayBlockingQueue<>(SESSION_QUEUE);
        private final int sessionId;
        private final ReplayReport.Part part = report.newPart();
        private final Map<Long, Statement> statements = new HashMap<>();
        private ReplayConnection connection;
        private String schema;
        private int capabilities;
        private int collationId;
        /** Why this session can no longer replay (login refused, connection lost), or null. */
        private String broken;

        SessionReplay(int sessionId) {
            this.sessionId = sessionId;
        }

        @Override
        public void run() {
            try {
                while (true) {
                    Object next = queue.take();
                    if (next == END || aborted) {
                        if (aborted) {
                            queue.clear();
                        }
                        return;
                    }
                    CaptureRecord record = (CaptureRecord) next;
                    waitUntil(record.timeNanos());
                    if (record instanceof SessionBegin begin) {
                        schema = begin.schema();
                        capabilities = begin.capabilities();
                        collationId = begin.collationId();
                        connect();
                    } else if (record instanceof CommandRecord command) {
                        replay(command);
                    } else if (record instanceof ChangeUser change) {
                        changeUser(change);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                if (connection != null) {
                    connection.close();
                }
                report.merge(part);
                sessionsOpen.decrementAndGet();
            }
        }

        private void waitUntil(long capturedNanos) {
            long due = replayStartNanos + (long) ((capturedNanos - originNanos) / options.speed());
            for (long wait = due - System.nanoTime(); wait > 0 && !aborted; wait = due - System.nanoTime()) {
                LockSupport.parkNanos(Math.min(wait, TimeUnit.MILLISECONDS.toNanos(100)));
            }
        }

        private void connect() {
            if (connection != null || broken != null) {
                return;
            }
            try {
                connection = ReplayConnection.open(options.host(), options.port(), options.user(), options.password(),
                        schema, capabilities, collationId, CONNECT_TIMEOUT_MILLIS);
            } catch (IOException e) {
                broken = "cannot connect: " + e.getMessage();
                part.failedToConnect();
            }
        }

        private void changeUser(ChangeUser change) {
            schema = change.schema();
            statements.clear();
            if (connection == null) {
                return;
            }
            try {
                // The captured user's password is unknown: reset the session and select the new schema instead.
                connection.execute(Command.COM_RESET_CONNECTION, new byte[0], ResponseKind.SINGLE);
                if (schema != null) {
                    connection.execute(Command.COM_INIT_DB, schema.getBytes(StandardCharsets.UTF_8),
                            ResponseKind.SINGLE);
                }
            } catch (IOException e) {
                lost(e);
            }
        }

        private void replay(CommandRecord command) {
            int cmd = command.command();
            if (command.truncated()) {
                part.skip("truncated in the capture");
                return;
            }
            if (cmd == Command.COM_PROCESS_KILL) {
                part.skip("COM_PROCESS_KILL (thread ids differ on the target)");
                return;
            }
            String digest;
            boolean read;
            byte[] payload = command.payload();
            Statement statement = null;
            if (cmd == Command.COM_QUERY || cmd == Command.COM_STMT_PREPARE) {
                String sql = new String(payload, StandardCharsets.UTF_8);
                String text = SqlDigest.of(sql).text();
                digest = (cmd == Command.COM_STMT_PREPARE ? "prepare: " : "") + text;
                read = isRead(text);
                if (cmd == Command.COM_QUERY && sql.regionMatches(true, 0, "LOAD DATA LOCAL", 0, 15)) {
                    part.skip("LOAD DATA LOCAL INFILE (file data is not captured)");
                    return;
                }
            } else if (takesStatementId(cmd)) {
                long capturedId = payload.length >= 4
                        ? ByteBuffer.wrap(payload).order(ByteOrder.LITTLE_ENDIAN).getInt(0) & 0xFFFFFFFFL : -1;
                statement = statements.get(capturedId);
                if (statement == null) {
                    part.skip("statement not prepared in the capture");
                    return;
                }
                digest = statement.digest();
                read = statement.read();
                if (cmd == Command.COM_STMT_CLOSE) {
                    statements.remove(capturedId);
                }
                if (statement.targetId() < 0) {
                    part.skip(options.readOnly() && !read ? "read-only: writes" : "statement not prepared on the target");
                    return;
                }
                payload = payload.clone();
                ByteBuffer.wrap(payload).order(ByteOrder.LITTLE_ENDIAN).putInt(0, (int) statement.targetId());
            } else {
                digest = Command.name(cmd);
                read = cmd != Command.COM_CREATE_DB && cmd != Command.COM_DROP_DB && cmd != Command.COM_REFRESH
                        && cmd != Command.COM_SHUTDOWN;
            }
            if (options.readOnly() && !read) {
                if (cmd == Command.COM_STMT_PREPARE && command.statementId() != 0) {
                    statements.put(command.statementId(), new Statement(-1, digest.substring(9), false));
                }
                part.skip("read-only: writes");
                return;
            }
            connect();
            if (connection == null) {
                part.skip(broken);
                return;
            }
            ResponseKind kind = expectedResponse(cmd);
            ReplayConnection.Result result;
            long started = System.nanoTime();
            try {
                result = connection.execute(cmd, payload, kind);
            } catch (IOException e) {
                lost(e);
                part.skip(broken);
                return;
            }
            long took = System.nanoTime() - started;
            if (cmd == Command.COM_STMT_PREPARE && command.statementId() != 0) {
                statements.put(command.statementId(), new Statement(result.isError() ? -1 : result.statementId(),
                        digest.substring(9), read));
            }
            boolean known = command.outcome() == Outcome.OK || command.outcome() == Outcome.ERROR;
            boolean timed = known && kind != ResponseKind.NONE;
            part.replayed(digest, known && kind != ResponseKind.NONE, timed, command.errorCode(),
                    command.affectedRows(), command.rows(), command.durationNanos(), result, took);
        }

        private void lost(IOException e) {
            broken = "connection lost: " + e.getMessage();
            connection.close();
            connection = null;
        }

        private boolean takesStatementId(int cmd) {
            return cmd == Command.COM_STMT_EXECUTE || cmd == Command.COM_STMT_CLOSE || cmd == Command.COM_STMT_RESET
                    || cmd == Command.COM_STMT_SEND_LONG_DATA || cmd == Command.COM_STMT_FETCH;
        }
    }
}
