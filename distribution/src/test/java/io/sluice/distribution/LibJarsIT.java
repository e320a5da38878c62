package io.sluice.distribution;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Checks the jars in the tarball's {@code lib/} against decision 064: one Netty version, none of the jars left out
 * on purpose, and no jar below the release that fixed the CVEs known for it. A dependency change that brings back an
 * old transitive jar fails the build here instead of shipping.
 */
class LibJarsIT {

    /**
     * The lowest release of each artifact without a CVE known to decision 064 (where it names the CVEs). An artifact
     * missing from lib/ passes: only what ships is checked.
     */
    private static final Map<String, String> FIXED_IN = new TreeMap<>(Map.ofEntries(
            Map.entry("commons-lang3", "3.18.0"),
            Map.entry("guava", "32.0.0"),
            Map.entry("snakeyaml", "2.0"),
            Map.entry("logback-classic", "1.5.25"),
            Map.entry("logback-core", "1.5.25"),
            Map.entry("bcprov-jdk18on", "1.86"),
            Map.entry("bcpkix-jdk18on", "1.86"),
            Map.entry("bcutil-jdk18on", "1.86"),
            Map.entry("micrometer-core", "1.16.7"),
            Map.entry("zstd-jni", "1.5.7-14"),
            Map.entry("netty-common", "4.2.17.Final"),
            Map.entry("netty-handler", "4.2.17.Final")));

    /** Jars the protocol classes do not need at runtime, excluded in the root pom (decision 064). */
    private static final List<String> EXCLUDED = List.of("commons-lang3", "failureaccess", "listenablefuture",
            "jsr305", "checker-qual", "error_prone_annotations", "j2objc-annotations");

    /** artifact-version[-classifier].jar, where the artifact's parts never start with a digit and the version does. */
    private static final Pattern JAR = Pattern.compile(
            "(?<artifact>[A-Za-z][\\w.]*(?:-[A-Za-z_][\\w.]*)*)-(?<version>\\d[\\w.]*(?:-(?:\\d+|jre|SNAPSHOT))?)"
                    + "(?:-(?<classifier>(?:linux|osx|windows)-\\w+))?\\.jar");

    private static List<Jar> jars;

    private record Jar(String file, String artifact, String version) {
    }

    @BeforeAll
    static void listLib() throws Exception {
        Path tarball = Path.of(System.getProperty("sluice.tarball"));
        Process tar = new ProcessBuilder("tar", "-tzf", tarball.toString()).redirectErrorStream(true).start();
        String listing = new String(tar.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(tar.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(tar.exitValue()).as(listing).isZero();
        jars = new ArrayList<>();
        for (String entry : listing.split("\n")) {
            int lib = entry.indexOf("/lib/");
            if (lib >= 0 && entry.endsWith(".jar")) {
                jars.add(parse(entry.substring(lib + "/lib/".length())));
            }
        }
        assertThat(jars).as("jars in lib/").isNotEmpty();
    }

    @Test
    void everyNettyJarIsTheBomsVersion() {
        String netty = System.getProperty("sluice.netty.version");
        // netty-tcnative has its own version line (2.0.x), paired with this Netty by the BOM
        assertThat(jars.stream().filter(jar -> jar.artifact().startsWith("netty-")
                && !jar.artifact().startsWith("netty-tcnative")).map(Jar::version).distinct())
                .containsExactly(netty);
    }

    @Test
    void noArtifactShipsInTwoVersions() {
        Map<String, List<String>> versions = jars.stream().collect(Collectors.groupingBy(Jar::artifact, TreeMap::new,
                Collectors.mapping(Jar::version, Collectors.collectingAndThen(Collectors.toSet(), ArrayList::new))));
        assertThat(versions).allSatisfy((artifact, found) -> assertThat(found).as(artifact).hasSize(1));
    }

    @Test
    void leavesOutWhatTheProtocolClassesDoNotNeed() {
        assertThat(jars).extracting(Jar::artifact).doesNotContainAnyElementsOf(EXCLUDED);
    }

    @Test
    void shipsNoJarBelowTheReleaseThatFixedItsKnownCves() {
        List<String> belowTheirFix = jars.stream()
                .filter(jar -> FIXED_IN.containsKey(jar.artifact())
                        && compareVersions(jar.version(), FIXED_IN.get(jar.artifact())) < 0)
                .map(jar -> jar.file() + " (fixed in " + FIXED_IN.get(jar.artifact()) + ")")
                .toList();
        assertThat(belowTheirFix).as("jars below the release that fixed their known CVEs").isEmpty();
    }

    /** Apache-2.0 §4: whoever redistributes the jars passes on their notices; NOTICE names every one of them. */
    @Test
    void noticeNamesEveryBundledArtifact() throws Exception {
        Path tarball = Path.of(System.getProperty("sluice.tarball"));
        Process tar = new ProcessBuilder("tar", "-xzOf", tarball.toString(),
                "sluice-" + System.getProperty("sluice.version") + "/NOTICE").start();
        String notice = new String(tar.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(tar.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(tar.exitValue()).isZero();

        // a whole name: netty-transport must be named itself, not only as part of netty-transport-classes-epoll
        List<String> unnamed = jars.stream().map(Jar::artifact).distinct()
                .filter(artifact -> !Pattern.compile("(?<![\\w-])" + Pattern.quote(artifact) + "(?![\\w-])")
                        .matcher(notice).find())
                .toList();
        assertThat(unnamed).as("artifacts in lib/ that NOTICE does not name").isEmpty();
    }

    @Test
    void comparesVersionsByTheirNumbers() {
        assertThat(compareVersions("3.12.0", "3.18.0")).isNegative();
        assertThat(compareVersions("3.22.0", "3.18.0")).isPositive();
        assertThat(compareVersions("1.5.7-28", "1.5.7-14")).isPositive();
        assertThat(compareVersions("32.1.2-jre", "32.0.0")).isPositive();
        assertThat(compareVersions("4.2.18.Final", "4.2.17.Final")).isPositive();
        assertThat(compareVersions("2.0", "2.0.0")).isZero();
        assertThat(parse("netty-transport-native-epoll-4.2.18.Final-linux-x86_64.jar"))
                .isEqualTo(new Jar("netty-transport-native-epoll-4.2.18.Final-linux-x86_64.jar",
                        "netty-transport-native-epoll", "4.2.18.Final"));
        assertThat(parse("guava-33.8.0-jre.jar").version()).isEqualTo("33.8.0-jre");
        assertThat(parse("bcprov-jdk18on-1.87.jar").artifact()).isEqualTo("bcprov-jdk18on");
    }

    private static Jar parse(String file) {
        Matcher m = JAR.matcher(file);
        assertThat(m.matches()).as("artifact and version of lib/%s", file).isTrue();
        return new Jar(file, m.group("artifact"), m.group("version"));
    }

    /** Compares the leading numbers of two versions ("1.5.7-28": 1, 5, 7, 28); a missing number counts as 0. */
    static int compareVersions(String a, String b) {
        List<Integer> left = numbers(a);
        List<Integer> right = numbers(b);
        for (int i = 0; i < Math.max(left.size(), right.size()); i++) {
            int cmp = Integer.compare(i < left.size() ? left.get(i) : 0, i < right.size() ? right.get(i) : 0);
            if (cmp != 0) {
                return cmp;
            }
        }
        return 0;
    }

    private static List<Integer> numbers(String version) {
        List<Integer> numbers = new ArrayList<>();
        for (String part : version.split("[.-]")) {
            if (!part.chars().allMatch(Character::isDigit) || part.isEmpty()) {
                break; // Final, jre, SNAPSHOT: a qualifier ends the numbers
            }
            numbers.add(Integer.parseInt(part));
        }
        return numbers;
    }
}
