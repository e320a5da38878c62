package io.sluice.replay;

import java.nio.file.Path;

/**
 * What {@code sluice-ctl traffic replay} was asked to do.
 *
 * @param input the capture directory
 * @param host the target server (or proxy)
 * @param port its port
 * @param user the account replayed sessions log in as (captured users are not replayed: their passwords are unknown)
 * @param password that account's password
 * @param speed how much faster than captured to replay: 2.0 halves every wait between commands
 * @param readOnly whether to skip statements that change data
 * @param report where to write the JSON report, or {@code null}
 * @param keyFile the capture's key file when it is encrypted, or {@code null}
 * @param progressMillis how often progress is printed; 0 for never
 */
public record ReplayOptions(Path input, String host, int port, String user, String password, double speed,
        boolean readOnly, Path report, Path keyFile, long progressMillis) {

    public ReplayOptions {
        if (!(speed > 0) || Double.isInfinite(speed)) {
            throw new IllegalArgumentException("--speed: " + speed + " (expected: a number above 0, e.g. 1.0 or 2)");
        }
    }

    /** {@code host:port}, for messages and the report. */
    public String target() {
        return host + ":" + port;
    }
}
