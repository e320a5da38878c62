package io.sluice.embedding;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Sluice;
import io.sluice.config.ProxyConfig;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.TestMariaDb;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs the embedding example of the README, and checks that the README shows exactly the code that ran.
 *
 * <p>One source of truth: the lines between the markers in {@link #theReadmeExampleRunsAndAnswers()} are read from
 * this file's own source and compared with the java block under the README's embedding-example marker. Change one
 * without the other and {@link #theReadmeShowsExactlyTheCodeThatRuns()} fails.
 */
@ExtendWith(LeakDetection.class)
@Tag("server")
class EmbeddingExampleTest {

    private static final String BEGIN = "// --- the README's example, unchanged ---";
    private static final String END = "// --- end of the example ---";
    private static final String README_MARKER = "<!-- embedding-example: kept identical to EmbeddingExampleTest -->";
    /** Surefire runs the tests in the module's directory. */
    private static final Path SOURCE = Path.of("src", "test", "java", "io", "sluice", "embedding",
            "EmbeddingExampleTest.java");
    private static final Path README = Path.of("..", "README.md");

    @Test
    void theReadmeExampleRunsAndAnswers() throws Exception {
        TestMariaDb mariaDb = TestMariaDb.get();
        mariaDb.execute("CREATE DATABASE IF NOT EXISTS test");
        String backendUrl = mariaDb.jdbcUrl("test");
        int answer;

        // --- the README's example, unchanged ---
        ProxyConfig config = ProxyConfig.builder()
                .dataSource("ds_0", backendUrl, "root", "")      // e.g. jdbc:mysql://127.0.0.1:3306/test
                .user("app", "secret")                           // who clients log in as
                .port(0)                                         // any free port
                .build();
        try (Sluice sluice = Sluice.start(config)) {
            String url = "jdbc:mariadb://127.0.0.1:" + sluice.port() + "/test";
            try (Connection connection = DriverManager.getConnection(url, "app", "secret");
                 ResultSet rs = connection.createStatement().executeQuery("SELECT 6 * 7")) {
                rs.next();
                answer = rs.getInt(1);                           // 42, answered by the backend
            }
        }
        // --- end of the example ---

        assertThat(answer).isEqualTo(42);
    }

    @Test
    void theReadmeShowsExactlyTheCodeThatRuns() throws IOException {
        List<String> source = Files.readAllLines(SOURCE, StandardCharsets.UTF_8);
        int method = indexOfOnly(source,
                line -> line.trim().equals("void theReadmeExampleRunsAndAnswers() throws Exception {"));
        int begin = indexOfOnly(source, line -> line.trim().equals(BEGIN));
        int end = indexOfOnly(source, line -> line.trim().equals(END));
        assertThat(begin).as("the example's start, inside theReadmeExampleRunsAndAnswers").isGreaterThan(method);
        assertThat(source.subList(method + 1, begin)).as("no other method before the example starts")
                .noneMatch(line -> line.contains("@Test"));
        assertThat(end).as("the example's end").isGreaterThan(begin + 1);
        String indent = source.get(begin).substring(0, source.get(begin).indexOf(BEGIN));
        List<String> ran = new ArrayList<>();
        for (String line : source.subList(begin + 1, end)) {
            assertThat(line).as("a line of the example, indented as its start marker").startsWith(indent);
            ran.add(line.substring(indent.length()));
        }

        List<String> readme = Files.readAllLines(README, StandardCharsets.UTF_8);
        int marker = indexOfOnly(readme, line -> line.equals(README_MARKER));
        assertThat(readme.get(marker + 1)).isEqualTo("```java");
        int fence = readme.subList(marker + 2, readme.size()).indexOf("```");
        assertThat(fence).as("the end of the README's java block").isNotNegative();
        List<String> shown = readme.subList(marker + 2, marker + 2 + fence);

        assertThat(shown).as("the README's example vs the code theReadmeExampleRunsAndAnswers runs").isEqualTo(ran);
    }

    /** The index of the one line that matches; fails when none or several do. */
    private static int indexOfOnly(List<String> lines, Predicate<String> match) {
        List<Integer> found = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            if (match.test(lines.get(i))) {
                found.add(i);
            }
        }
        assertThat(found).as("lines matching").hasSize(1);
        return found.get(0);
    }
}
