package io.sluice.capture;

import io.sluice.json.Json;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How one traffic capture runs: where it writes, when it stops, how it stores. Built from the admin request
 * {@code {"output": DIR, "duration": "10m", "compress": true}} by {@link #fromJson}, or in code with
 * {@link #of(Path)} and the {@code with} methods.
 *
 * @param output the directory the capture files go to; created if missing, and must hold no earlier capture
 * @param duration the capture stops by itself after this long
 * @param compress whether blocks are compressed: with zstd, or gzip where zstd's native library does not load
 * @param maxSize the capture stops once its files hold this many bytes in total
 * @param fileSize a file is closed and the next one begun once it holds this many bytes
 * @param minFreeSpace the capture refuses to start, or stops, when the file system has less free space than this
 * @param keyFile a file holding an AES key (16, 24 or 32 raw bytes, or as many in hex); {@code null} for none
 * @param queueRecords the most records waiting for the writer; more are dropped and counted, a chunk of records
 *     (about 32 KiB, encoded) at a time
 * @param queueBytes the most bytes of encoded records waiting for the writer; more are dropped and counted
 * @param maxPayload the most payload bytes kept per command; longer ones are marked truncated and not replayed
 */
public record CaptureOptions(Path output, Duration duration, boolean compress, long maxSize, long fileSize,
        long minFreeSpace, Path keyFile, int queueRecords, long queueBytes, int maxPayload) {

    public static final Duration DEFAULT_DURATION = Duration.ofHours(1);
    public static final long DEFAULT_MAX_SIZE = 10L << 30;
    public static final long DEFAULT_FILE_SIZE = 256L << 20;
    public static final long DEFAULT_MIN_FREE_SPACE = 1L << 30;
    public static final int DEFAULT_QUEUE_RECORDS = 65_536;
    public static final long DEFAULT_QUEUE_BYTES = 64L << 20;
    public static final int DEFAULT_MAX_PAYLOAD = 1 << 20;

    private static final Set<String> KEYS = Set.of("output", "duration", "compress", "maxSize", "fileSize",
            "minFreeSpace", "keyFile", "queueRecords", "queueBytes", "maxPayload");
    private static final Pattern DURATION_PART = Pattern.compile("(\\d+)(ms|s|m|h|d)");
    private static final Pattern SIZE = Pattern.compile("(\\d+)\\s*([kmgt]?)(i?b)?", Pattern.CASE_INSENSITIVE);

    public CaptureOptions {
        if (output == null) {
            throw invalid("output: missing (expected: a directory path)");
        }
        if (duration == null || duration.isNegative() || duration.isZero()) {
            throw invalid("duration: " + duration + " (expected: more than 0)");
        }
        if (maxSize <= 0) {
            throw invalid("maxSize: " + maxSize + " (expected: more than 0)");
        }
        if (fileSize < 4096) {
            throw invalid("fileSize: " + fileSize + " (expected: at least 4096)");
        }
        if (minFreeSpace < 0) {
            throw invalid("minFreeSpace: " + minFreeSpace + " (expected: 0 or more)");
        }
        if (queueRecords < 16) {
            throw invalid("queueRecords: " + queueRecords + " (expected: at least 16)");
        }
        if (queueBytes < 4096) {
            throw invalid("queueBytes: " + queueBytes + " (expected: at least 4096)");
        }
        if (maxPayload < 64) {
            throw invalid("maxPayload: " + maxPayload + " (expected: at least 64)");
        }
    }

    /** The defaults, writing to {@code output}. */
    public static CaptureOptions of(Path output) {
        return new CaptureOptions(output, DEFAULT_DURATION, true, DEFAULT_MAX_SIZE, DEFAULT_FILE_SIZE,
                DEFAULT_MIN_FREE_SPACE, null, DEFAULT_QUEUE_RECORDS, DEFAULT_QUEUE_BYTES, DEFAULT_MAX_PAYLOAD);
    }

    public CaptureOptions withDuration(Duration value) {
        return new CaptureOptions(output, value, compress, maxSize, fileSize, minFreeSpace, keyFile, queueRecords,
                queueBytes, maxPayload);
    }

    public CaptureOptions withCompress(boolean value) {
        return new CaptureOptions(output, duration, value, maxSize, fileSize, minFreeSpace, keyFile, queueRecords,
                queueBytes, maxPayload);
    }

    public CaptureOptions withMaxSize(long value) {
        return new CaptureOptions(output, duration, compress, value, fileSize, minFreeSpace, keyFile, queueRecords,
                queueBytes, maxPayload);
    }

    public CaptureOptions withFileSize(long value) {
        return new CaptureOptions(output, duration, compress, maxSize, value, minFreeSpace, keyFile, queueRecords,
                queueBytes, maxPayload);
    }

    public CaptureOptions withMinFreeSpace(long value) {
        return new CaptureOptions(output, duration, compress, maxSize, fileSize, value, keyFile, queueRecords,
                queueBytes, maxPayload);
    }

    public CaptureOptions withKeyFile(Path value) {
        return new CaptureOptions(output, duration, compress, maxSize, fileSize, minFreeSpace, value, queueRecords,
                queueBytes, maxPayload);
    }

    public CaptureOptions withQueue(int records, long bytes) {
        return new CaptureOptions(output, duration, compress, maxSize, fileSize, minFreeSpace, keyFile, records,
                bytes, maxPayload);
    }

    public CaptureOptions withMaxPayload(int value) {
        return new CaptureOptions(output, duration, compress, maxSize, fileSize, minFreeSpace, keyFile, queueRecords,
                queueBytes, value);
    }

    /**
     * Reads the start request's body. Only {@code output} is required; unknown keys are refused, so that a misspelt
     * limit cannot silently leave the default in place.
     *
     * @throws CaptureException of kind {@link CaptureException.Kind#INVALID} naming the key at fault
     */
    public static CaptureOptions fromJson(String body) {
        Map<String, Object> json;
        try {
            json = Json.parseObject(body == null || body.isBlank() ? "{}" : body);
        } catch (IllegalArgumentException e) {
            throw invalid("request body: " + e.getMessage());
        }
        for (String key : json.keySet()) {
            if (!KEYS.contains(key)) {
                throw invalid(key + ": unknown key (expected: one of " + String.join(", ", KEYS.stream().sorted()
                        .toList()) + ")");
            }
        }
        Object output = json.get("output");
        if (!(output instanceof String dir) || dir.isBlank()) {
            throw invalid("output: " + describe(output) + " (expected: a directory path)");
        }
        CaptureOptions options = of(Path.of(dir));
        if (json.get("duration") != null) {
            options = options.withDuration(parseDuration(text(json, "duration")));
        }
        if (json.get("compress") != null) {
            if (!(json.get("compress") instanceof Boolean b)) {
                throw invalid("compress: " + describe(json.get("compress")) + " (expected: true or false)");
            }
            options = options.withCompress(b);
        }
        if (json.get("maxSize") != null) {
            options = options.withMaxSize(size(json, "maxSize"));
        }
        if (json.get("fileSize") != null) {
            options = options.withFileSize(size(json, "fileSize"));
        }
        if (json.get("minFreeSpace") != null) {
            options = options.withMinFreeSpace(size(json, "minFreeSpace"));
        }
        if (json.get("keyFile") != null) {
            options = options.withKeyFile(Path.of(text(json, "keyFile")));
        }
        if (json.get("queueRecords") != null || json.get("queueBytes") != null) {
            long records = json.get("queueRecords") != null ? size(json, "queueRecords") : DEFAULT_QUEUE_RECORDS;
            long bytes = json.get("queueBytes") != null ? size(json, "queueBytes") : DEFAULT_QUEUE_BYTES;
            options = options.withQueue((int) Math.min(records, 1 << 24), bytes);
        }
        if (json.get("maxPayload") != null) {
            options = options.withMaxPayload((int) Math.min(size(json, "maxPayload"), 1 << 30));
        }
        return options;
    }

    /**
     * Parses {@code 10m}, {@code 90s}, {@code 1h30m}, {@code 500ms} or {@code 2d}.
     *
     * @throws CaptureException when the text is none of those
     */
    public static Duration parseDuration(String text) {
        String s = text.trim().toLowerCase(Locale.ROOT);
        Matcher m = DURATION_PART.matcher(s);
        Duration total = Duration.ZERO;
        int end = 0;
        while (m.find() && m.start() == end) {
            long n = Long.parseLong(m.group(1));
            total = total.plus(switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(n);
                case "s" -> Duration.ofSeconds(n);
                case "m" -> Duration.ofMinutes(n);
                case "h" -> Duration.ofHours(n);
                default -> Duration.ofDays(n);
            });
            end = m.end();
        }
        if (end == 0 || end != s.length() || total.isZero()) {
            throw invalid("duration: \"" + text + "\" (expected: e.g. 10m, 90s, 1h30m)");
        }
        return total;
    }

    /**
     * Parses a byte size: a number, optionally followed by k, m, g or t (powers of 1024) and an optional b or ib.
     *
     * @throws CaptureException when the text is not a size
     */
    public static long parseSize(String text) {
        Matcher m = SIZE.matcher(text.trim());
        if (!m.matches()) {
            throw invalid("size: \"" + text + "\" (expected: e.g. 512m, 10g, 1048576)");
        }
        int shift = switch (m.group(2).toLowerCase(Locale.ROOT)) {
            case "k" -> 10;
            case "m" -> 20;
            case "g" -> 30;
            case "t" -> 40;
            default -> 0;
        };
        return Long.parseLong(m.group(1)) << shift;
    }

    private static long size(Map<String, Object> json, String key) {
        Object value = json.get(key);
        if (value instanceof Long n) {
            return n;
        }
        if (value instanceof String s) {
            try {
                return parseSize(s);
            } catch (CaptureException e) {
                throw invalid(key + ": \"" + s + "\" (expected: e.g. 512m, 10g, 1048576)");
            }
        }
        throw invalid(key + ": " + describe(value) + " (expected: a size such as 512m or a number of bytes)");
    }

    private static String text(Map<String, Object> json, String key) {
        Object value = json.get(key);
        if (!(value instanceof String s) || s.isBlank()) {
            throw invalid(key + ": " + describe(value) + " (expected: a string)");
        }
        return s;
    }

    private static String describe(Object value) {
        return value instanceof String s ? "\"" + s + "\"" : String.valueOf(value);
    }

    private static CaptureException invalid(String message) {
        return new CaptureException(CaptureException.Kind.INVALID, message);
    }
}
