package io.sluice.replay;

import io.sluice.capture.CaptureKey;
import io.sluice.protocol.Command;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code sluice-ctl rules learn}: the digests each user ran in a capture, written as a {@code !QUERY_RULES} item with
 * an {@code allowList} (decision 188), each digest commented with how often it ran and its text, for a human to
 * review before it is pasted into config.yaml. Prepared statements count by their SQL's digest, each execution once.
 * Per user, not per schema: the schema is a session's default, which an application moves with {@code USE} while the
 * statements stay the same; a digest's text names the tables it reads.
 */
public final class AllowListLearning {

    /** Per user, per digest hash: what the capture holds. */
    private final Map<String, Map<String, Learned>> users = new TreeMap<>();
    private CapturedStatements.Walk walk;
    private Path source;

    private AllowListLearning() {
    }

    /** Learns from the capture in {@code dir} ({@code key}: {@code null} for a plain one). */
    public static AllowListLearning learn(Path dir, CaptureKey key) throws IOException {
        AllowListLearning learning = new AllowListLearning();
        learning.source = dir;
        learning.walk = CapturedStatements.walk(dir, key, (user, schema, command, digest) -> {
            if (user == null) {
                return; // a session that began before the capture and whose login it did not see
            }
            Learned learned = learning.users.computeIfAbsent(user, u -> new TreeMap<>())
                    .computeIfAbsent(digest.hash(), h -> new Learned(digest.text()));
            if (command != Command.COM_STMT_PREPARE) {
                learned.count++;
            }
        });
        return learning;
    }

    /** The number of users and of distinct digests learned, and of statements read. */
    public String summary() {
        long digests = users.values().stream().mapToLong(Map::size).sum();
        return "learned " + digests + " digest(s) of " + users.size() + " user(s) from " + walk.statements()
                + " statement(s) in " + walk.sessions() + " session(s)"
                + (walk.skipped() > 0 ? "; skipped " + walk.skipped() + " (captured in part, or prepared before"
                + " the capture)" : "");
    }

    /** Digests per user, for tests. */
    public Map<String, java.util.Set<String>> digests() {
        Map<String, java.util.Set<String>> copy = new TreeMap<>();
        users.forEach((user, digests) -> copy.put(user, java.util.Set.copyOf(digests.keySet())));
        return copy;
    }

    /** The allow-list as YAML: a {@code rules:} list of one {@code !QUERY_RULES} item, in {@code mode}. */
    public String yaml(String mode) {
        StringBuilder out = new StringBuilder();
        out.append("# Learned by sluice-ctl rules learn from ").append(source).append(" at ").append(Instant.now())
                .append(":\n# ").append(summary()).append(".\n")
                .append("# Review each digest (the comment: statements in the capture, then its digest text), try it with\n")
                .append("# sluice-ctl rules check, then put the !QUERY_RULES item in config.yaml's rules: list.\n")
                .append("rules:\n- !QUERY_RULES\n  allowList:\n    mode: ").append(mode).append("\n    users:\n");
        users.forEach((user, digests) -> {
            out.append("      ").append(quoted(user)).append(":\n");
            digests.forEach((hash, learned) -> out.append("        - '").append(hash).append("'   # ")
                    .append(learned.count).append("x ").append(oneLine(learned.text)).append('\n'));
        });
        return out.toString();
    }

    private static String quoted(String text) {
        return "'" + text.replace("'", "''") + "'";
    }

    private static String oneLine(String text) {
        return text.replace('\n', ' ').replace('\r', ' ');
    }

    private static final class Learned {
        final String text;
        long count;

        Learned(String text) {
            this.text = text;
        }
    }
}
