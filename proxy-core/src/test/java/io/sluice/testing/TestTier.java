package io.sluice.testing;

/**
 * Which tier of the suite runs (decision 122). {@code ./mvnw test -Pfast} sets {@code sluice.test.tier=fast} and
 * leaves out the classes tagged {@code server} (a real MariaDB, on 127.0.0.1:3306 or started by the test) and
 * {@code tools} (external programs, a network namespace). The fixtures that reach outside the JVM call
 * {@link #requireFull}, so that an untagged test that needs one fails in the fast tier, naming the tag it lacks,
 * rather than slipping a server into the quick loop.
 */
public final class TestTier {

    /** The tag of a test class that needs a real MariaDB server. */
    public static final String SERVER = "server";
    /** The tag of a test class that needs programs outside the JVM or a network namespace. */
    public static final String TOOLS = "tools";

    private TestTier() {
    }

    /** True in the fast tier: {@code -Dsluice.test.tier=fast}, which the {@code fast} profile sets. */
    public static boolean fast() {
        return "fast".equals(System.getProperty("sluice.test.tier"));
    }

    /**
     * Fails in the fast tier: the caller is a fixture that needs {@code what}, so its test belongs to the full suite.
     *
     * @param what what the fixture reaches, e.g. "a MariaDB server"
     * @param tag the tag the test class lacks, {@link #SERVER} or {@link #TOOLS}
     */
    public static void requireFull(String what, String tag) {
        if (fast()) {
            throw new IllegalStateException("this test needs " + what + " and the fast tier (-Pfast) runs none:"
                    + " tag its class @Tag(\"" + tag + "\") (decision 122)");
        }
    }
}
