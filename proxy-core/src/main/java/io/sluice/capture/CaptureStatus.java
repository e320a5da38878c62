package io.sluice.capture;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What {@code GET /api/traffic/capture} reports: the running capture, or the last one, or that none ran.
 *
 * @param state {@code idle} (no capture since start), {@code running} or {@code stopped}
 * @param output the capture's directory, {@code null} when idle
 * @param startedAt when it started
 * @param stoppedAt when it stopped, {@code null} while running
 * @param duration the limit on its duration
 * @param maxSize the limit on its size in bytes
 * @param compress whether it compresses
 * @param encrypted whether it encrypts
 * @param sessions client sessions seen
 * @param records records written to the files
 * @param pending records waiting for the writer
 * @param dropped records dropped because the writer could not keep up (or could no longer write)
 * @param bytes bytes written to the files
 * @param files files begun
 * @param stopReason why it stopped, {@code null} while running
 */
public record CaptureStatus(String state, String output, Instant startedAt, Instant stoppedAt, Duration duration,
        long maxSize, boolean compress, boolean encrypted, long sessions, long records, long pending, long dropped,
        long bytes, int files, String stopReason) {

    static final CaptureStatus IDLE = new CaptureStatus("idle", null, null, null, null, 0, false, false, 0, 0, 0, 0,
            0, 0, null);

    public boolean running() {
        return "running".equals(state);
    }

    /** The status as the admin API returns it. */
    public Map<String, Object> toJson() {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("state", state);
        if (output == null) {
            return json;
        }
        json.put("output", output);
        json.put("startedAt", String.valueOf(startedAt));
        json.put("stoppedAt", stoppedAt == null ? null : stoppedAt.toString());
        Instant end = stoppedAt != null ? stoppedAt : Instant.now();
        json.put("elapsedMillis", Duration.between(startedAt, end).toMillis());
        json.put("duration", format(duration));
        json.put("maxSize", maxSize);
        json.put("compress", compress);
        json.put("encrypted", encrypted);
        json.put("sessions", sessions);
        json.put("records", records);
        json.put("pending", pending);
        json.put("dropped", dropped);
        json.put("bytes", bytes);
        json.put("files", files);
        json.put("stopReason", stopReason);
        return json;
    }

    /** {@code 1h30m}, {@code 10m}, {@code 45s}, {@code 500ms}: the form the start request takes. */
    static String format(Duration d) {
        if (d == null) {
            return null;
        }
        if (d.toMillis() % 1000 != 0) {
            return d.toMillis() + "ms";
        }
        long s = d.getSeconds();
        StringBuilder out = new StringBuilder();
        if (s >= 3600) {
            out.append(s / 3600).append('h');
            s %= 3600;
        }
        if (s >= 60) {
            out.append(s / 60).append('m');
            s %= 60;
        }
        if (s > 0 || out.length() == 0) {
            out.append(s).append('s');
        }
        return out.toString();
    }
}
