package io.sluice.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every decision record says where it stands (decision 123): a line {@code Status: Accepted}, or {@code Status:
 * Superseded by NNN} or {@code Status: Amended by NNN ...}, naming records that exist, among the first lines.
 */
class DecisionRecordStatusTest {

    private static final Pattern STATUS =
            Pattern.compile("(?m)^Status: (Accepted|Superseded by \\d{3}|Amended by \\d{3})(.*)$");
    private static final Pattern NUMBER = Pattern.compile("\\b(\\d{3})\\b");

    @Test
    void everyRecordHasAStatusNamingRecordsThatExist() throws IOException {
        Path decisions = repositoryRoot().resolve("docs/decisions");
        List<Path> records;
        try (Stream<Path> files = Files.list(decisions)) {
            records = files.filter(f -> f.getFileName().toString().matches("\\d{3}-.*\\.md")).sorted().toList();
        }
        Set<String> numbers = new TreeSet<>();
        records.forEach(r -> numbers.add(r.getFileName().toString().substring(0, 3)));
        List<String> problems = new ArrayList<>();
        for (Path record : records) {
            String head = String.join("\n", Files.readAllLines(record, StandardCharsets.UTF_8).stream().limit(8)
                    .toList());
            Matcher status = STATUS.matcher(head);
            if (!status.find()) {
                problems.add(record.getFileName() + ": no 'Status:' line in its first 8 lines");
                continue;
            }
            Matcher number = NUMBER.matcher(status.group(1) + status.group(2));
            while (number.find()) {
                if (!numbers.contains(number.group(1))) {
                    problems.add(record.getFileName() + ": its status names " + number.group(1) + ", no record");
                }
            }
        }
        assertThat(records).hasSizeGreaterThan(50);
        assertThat(problems).isEmpty();
    }

    private static Path repositoryRoot() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isDirectory(dir.resolve("docs/decisions")) && Files.isDirectory(dir.resolve("proxy-core"))) {
                return dir;
            }
        }
        throw new IllegalStateException("no repository root above " + Path.of("").toAbsolutePath());
    }
}
