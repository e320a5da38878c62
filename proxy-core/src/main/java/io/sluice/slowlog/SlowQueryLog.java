package io.sluice.slowlog;

import io.sluice.config.SlowQueryLogConfig;
import io.sluice.sql.Secrets;
import io.sluice.sql.SqlDigest;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logs commands whose response took at least the configured threshold, to the logger {@value #LOGGER} (in the
 * distribution: {@code logs/slow.log}). Each line has the time taken, the command, who sent it and where it went,
 * the digest of the statement with its literals replaced and its text cut to {@code maxSqlLength} characters. The
 * digest is {@link SqlDigest}, the one traffic replay reports, so a slow statement can be found in a replay's report.
 *
 * <p>Credentials are hidden before the line is written, by the one redaction every writer of statements uses
 * ({@link Secrets}, decision 130): a password's literal reads {@value Secrets#MASK}. The settings can change on config
 * reload.
 */
public final class SlowQueryLog {

    /** The logger name, for logback.xml. */
    public static final String LOGGER = "sluice.slowlog";

    private static final Logger log = LoggerFactory.getLogger(LOGGER);

    private volatile SlowQueryLogConfig config;
    private volatile long thresholdNanos;

    public SlowQueryLog(SlowQueryLogConfig config) {
        update(config);
    }

    /** Applies new settings (config reload). */
    public void update(SlowQueryLogConfig newConfig) {
        this.config = Objects.requireNonNull(newConfig, "config");
        this.thresholdNanos = TimeUnit.MILLISECONDS.toNanos(newConfig.thresholdMilliseconds());
    }

    public boolean enabled() {
        return config.enabled();
    }

    /** Whether a response that took this long is logged. */
    public boolean isSlow(long nanos) {
        return nanos >= thresholdNanos && config.enabled();
    }

    /** The most bytes of SQL text worth keeping per command. */
    public int maxSqlLength() {
        return config.maxSqlLength();
    }

    /**
     * Writes one slow command.
     *
     * @param who the session and backend, for the operator
     * @param sql the first bytes of the statement (UTF-8), or {@code null} when not kept
     * @param sqlLength how many of them are valid
     * @param totalLength the statement's whole length in bytes
     */
    public void record(String who, String command, long nanos, boolean failed, byte[] sql, int sqlLength,
            int totalLength) {
        double millis = nanos / 1e6;
        if (sql == null) {
            log.warn("{} ms {}{} {}", String.format("%.1f", millis), command, failed ? " (error)" : "", who);
            return;
        }
        int max = config.maxSqlLength();
        String text = new String(sql, 0, Math.min(sqlLength, sql.length), StandardCharsets.UTF_8);
        boolean truncated = totalLength > sqlLength;
        if (text.length() > max) {
            text = text.substring(0, max);
            truncated = true;
        }
        SqlDigest digest = SqlDigest.of(text);
        String redacted = Secrets.redact(text);
        String shown = redacted == text ? text : redacted + " [literals hidden: may hold a password]";
        log.warn("{} ms {}{} {} digest={} sql={}{} digest_text={}", String.format("%.1f", millis), command,
                failed ? " (error)" : "", who, digest.hash(), oneLine(shown),
                truncated ? " [cut at " + max + " of " + totalLength + " bytes]" : "", digest.text());
    }

    /** Line breaks inside SQL would split one record over several log lines. */
    private static String oneLine(String text) {
        return text.replace('\n', ' ').replace('\r', ' ');
    }
}
