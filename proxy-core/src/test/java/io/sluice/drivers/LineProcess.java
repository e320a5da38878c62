package io.sluice.drivers;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A child process the test talks to line by line: lines written to its stdin, lines read from its stdout with a
 * deadline (by a reader thread of its own, so that a driver stuck in a call fails the test instead of hanging it).
 * Its stderr goes to a file whose text every failure message carries; or, when asked, into stdout, in order.
 */
final class LineProcess implements AutoCloseable {

    /** What the reader thread queues at the end of stdout. */
    private static final String EOF = new String("<eof>");

    private final String name;
    private final Process process;
    private final Writer stdin;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final Path stderr;

    private LineProcess(String name, Process process, Path stderr) {
        this.name = name;
        this.process = process;
        this.stderr = stderr;
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Thread reader = new Thread(this::readStdout, "driver-stdout-" + name);
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Starts {@code command}.
     *
     * @param environment added to the test's environment
     * @param mergeStderr stderr into stdout, in the order the process wrote them (for a client that reports errors
     *     on stderr between results on stdout)
     */
    static LineProcess start(String name, List<String> command, Map<String, String> environment, boolean mergeStderr) {
        try {
            ProcessBuilder builder = new ProcessBuilder(command);
            builder.environment().putAll(environment);
            Path stderr = null;
            if (mergeStderr) {
                builder.redirectErrorStream(true);
            } else {
                stderr = Files.createTempFile("sluice-driver-" + name + "-", ".stderr");
                builder.redirectError(stderr.toFile());
            }
            return new LineProcess(name, builder.start(), stderr);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + command, e);
        }
    }

    private void readStdout() {
        try (BufferedReader in = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                lines.add(line);
            }
        } catch (IOException e) {
            // The process went away: the EOF below says so.
        } finally {
            lines.add(EOF);
        }
    }

    /** Writes one line (a newline is added) and flushes it. */
    void send(String line) {
        try {
            stdin.write(line);
            stdin.write('\n');
            stdin.flush();
        } catch (IOException e) {
            throw new AssertionError(name + ": cannot write to the process (" + e.getMessage() + ")"
                    + diagnostics(), e);
        }
    }

    /** The next line of stdout; fails when the process ended or {@code timeout} passed first. */
    String next(Duration timeout) {
        String line;
        try {
            line = lines.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(name + ": interrupted", e);
        }
        if (line == null) {
            throw new AssertionError(name + ": no answer within " + timeout + diagnostics());
        }
        if (line == EOF) {
            lines.add(EOF); // for the next caller too
            throw new AssertionError(name + ": the process ended" + diagnostics());
        }
        return line;
    }

    /** The exit code and stderr so far, for a failure message. */
    String diagnostics() {
        StringBuilder s = new StringBuilder();
        if (!process.isAlive()) {
            s.append("; exit code ").append(process.exitValue());
        }
        if (stderr != null) {
            try {
                String text = Files.readString(stderr, StandardCharsets.UTF_8).strip();
                if (!text.isEmpty()) {
                    s.append("; stderr:\n").append(text.length() > 4000 ? text.substring(0, 4000) + "..." : text);
                }
            } catch (IOException e) {
                s.append("; stderr unreadable: ").append(e.getMessage());
            }
        }
        return s.toString();
    }

    /** Closes stdin (the client then closes its connections and exits), waits a little, then kills it. */
    @Override
    public void close() {
        try {
            stdin.close();
        } catch (IOException e) {
            // Already gone.
        }
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        } finally {
            if (stderr != null) {
                try {
                    Files.deleteIfExists(stderr);
                } catch (IOException e) {
                    // A temporary file left behind.
                }
            }
        }
    }
}
