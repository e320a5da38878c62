package io.sluice.ops.metrics;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The process's resident set size, read from Linux's {@code /proc/self/status} at each scrape: the figure an attack
 * on direct memory moves (issue #30: 206 to 884 MB), which neither the heap nor the buffer pools show whole. Off
 * Linux it is unknown.
 */
final class ResidentMemory {
    private static final Path STATUS = Path.of("/proc/self/status");

    private ResidentMemory() {
    }

    /** Whether this system reports it. */
    static boolean available() {
        return bytes() >= 0;
    }

    /** Resident bytes now, or -1 when unknown. */
    static double bytes() {
        try {
            for (String line : Files.readAllLines(STATUS, StandardCharsets.US_ASCII)) {
                if (line.startsWith("VmRSS:")) { // "VmRSS:	  123456 kB"
                    return Long.parseLong(line.substring(6).replace("kB", "").trim()) * 1024.0;
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }
}
