package io.sluice.testing;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A command-line program some tests run, and the Debian package that provides it ({@code .ci/run} installs those
 * packages). {@link #path()} finds it or, per {@link Prerequisites}, fails the test on CI and skips it elsewhere.
 */
public enum Tool {
    /** MariaDB's command-line client (libmariadb, as sysbench uses). */
    MARIADB("mariadb", "mariadb-client"),
    /** OpenSSL's command-line tool, for certificates the tests make. */
    OPENSSL("openssl", "openssl"),
    /** sysbench, for a drain under its OLTP load (it links libmariadb, and prepares its statements server-side). */
    SYSBENCH("sysbench", "sysbench");

    private final String command;
    private final String debianPackage;

    Tool(String command, String debianPackage) {
        this.command = command;
        this.debianPackage = debianPackage;
    }

    /** The executable, looked up on the PATH; fails on CI and skips elsewhere when it is not installed. */
    public Path path() {
        TestTier.requireFull("the " + command + " command", TestTier.TOOLS);
        Path found = find();
        Prerequisites.require(found != null, "the " + command + " command",
                "apt-get install " + debianPackage);
        return found;
    }

    private Path find() {
        String pathVariable = System.getenv().getOrDefault("PATH", "/usr/bin");
        for (String dir : pathVariable.split(File.pathSeparator)) {
            Path candidate = Path.of(dir.isEmpty() ? "." : dir, command);
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        return null;
    }
}
