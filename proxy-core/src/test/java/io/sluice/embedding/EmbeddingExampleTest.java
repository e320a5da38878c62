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
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Runs the embedding example of the README, line for line, and checks that the README still shows those lines. */
@ExtendWith(LeakDetection.class)
class EmbeddingExampleTest {

    /** The example's lines, as the README shows them between its java fences. */
    private static final List<String> EXAMPLE = List.of(
            "ProxyConfig config = ProxyConfig.builder()",
            "        .dataSource(\"ds_0\", backendUrl, \"root\", \"\")      // e.g. jdbc:mysql://127.0.0.1:3306/test",
            "        .user(\"app\", \"secret\")                           // who clients log in as",
            "        .port(0)                                         // any free port",
            "        .build();",
            "try (Sluice sluice = Sluice.start(config)) {",
            "    String url = \"jdbc:mariadb://127.0.0.1:\" + sluice.port() + \"/test\";",
            "    try (Connection connection = DriverManager.getConnection(url, \"app\", \"secret\");",
            "         ResultSet rs = connection.createStatement().executeQuery(\"SELECT 6 * 7\")) {",
            "        rs.next();",
            "        answer = rs.getInt(1);                           // 42, answered by the backend",
            "    }",
            "}");

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
    void theReadmeShowsExactlyThisExample() throws IOException {
        Path readme = Path.of("..", "README.md");
        List<String> lines = Files.readAllLines(readme, StandardCharsets.UTF_8);
        int start = lines.indexOf("<!-- embedding-example: kept identical to EmbeddingExampleTest -->");
        assertThat(start).as("the README's embedding example marker").isNotNegative();
        assertThat(lines.get(start + 1)).isEqualTo("```java");
        assertThat(lines.subList(start + 2, start + 2 + EXAMPLE.size())).isEqualTo(EXAMPLE);
        assertThat(lines.get(start + 2 + EXAMPLE.size())).isEqualTo("```");
    }
}
