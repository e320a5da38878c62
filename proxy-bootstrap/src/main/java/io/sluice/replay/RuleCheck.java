package io.sluice.replay;

import io.sluice.capture.CaptureKey;
import io.sluice.config.AllowListConfig;
import io.sluice.config.QueryRuleConfig;
import io.sluice.config.QueryRulesFile;
import io.sluice.rules.QueryRules;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code sluice-ctl rules check}: tries a rule set (its rules and its allow-list) against a capture offline, with the
 * same decisions the running proxy makes, and reports what it would refuse: each statement shape a {@code block} rule
 * matches, and each shape outside the allow-list (whatever its mode: this is the dry run before {@code ENFORCE}),
 * per user and digest with its count. Nothing is sent anywhere.
 */
public final class RuleCheck {

    private final Map<Refused, long[]> refused = new LinkedHashMap<>();
    private CapturedStatements.Walk walk;
    private String description;

    private RuleCheck() {
    }

    /** Checks {@code rules} against the capture in {@code dir} ({@code key}: {@code null} for a plain one). */
    public static RuleCheck run(QueryRulesFile rules, Path dir, CaptureKey key) throws IOException {
        RuleCheck check = new RuleCheck();
        AllowListConfig list = rules.allowList();
        check.description = rules.rules().size() + " rule(s)" + (list == null ? ", no allow-list"
                : ", an allow-list (" + list.mode() + ") for " + list.users().size() + " user(s)");
        QueryRules running = new QueryRules(rules.rules(), list);
        check.walk = CapturedStatements.walk(dir, key, (user, schema, command, digest) -> {
            QueryRules.Verdict verdict = running.judge(digest, user, schema);
            String by;
            if (verdict.outsideAllowList()) {
                by = "allow-list";
            } else if (verdict.rule() != null && verdict.rule().config().action() == QueryRuleConfig.Action.BLOCK) {
                by = "rule " + verdict.rule().name();
            } else {
                return;
            }
            check.refused.computeIfAbsent(new Refused(user, digest.hash(), digest.text(), by), r -> new long[1])[0]++;
        });
        return check;
    }

    /** A statement shape the rule set would refuse, and what would refuse it. */
    public record Refused(String user, String digest, String digestText, String by) {
    }

    /** The shapes it would refuse, with their counts, most frequent first. */
    public List<Map.Entry<Refused, Long>> refused() {
        List<Map.Entry<Refused, Long>> entries = new ArrayList<>();
        refused.forEach((shape, count) -> entries.add(Map.entry(shape, count[0])));
        entries.sort(Comparator.comparing((Map.Entry<Refused, Long> e) -> e.getValue()).reversed());
        return entries;
    }

    /** The statements it would refuse. */
    public long refusedStatements() {
        return refused.values().stream().mapToLong(count -> count[0]).sum();
    }

    /** The report sluice-ctl prints. */
    public void print(PrintStream out) {
        out.println("Checked " + walk.statements() + " statement(s) of " + walk.sessions() + " session(s) against "
                + description + (walk.skipped() > 0 ? "; skipped " + walk.skipped() + " (captured in part, or"
                + " prepared before the capture)" : ""));
        List<Map.Entry<Refused, Long>> shapes = refused();
        out.println("Would refuse " + refusedStatements() + " statement(s) of " + shapes.size() + " shape(s)"
                + (shapes.isEmpty() ? "" : ":"));
        if (!shapes.isEmpty()) {
            out.printf("%10s  %-16s  %-16s  %-20s  %s%n", "count", "user", "digest", "refused by", "digest text");
            for (Map.Entry<Refused, Long> entry : shapes) {
                Refused shape = entry.getKey();
                out.printf("%10d  %-16s  %-16s  %-20s  %s%n", entry.getValue(), shape.user(), shape.digest(),
                        shape.by(), shape.digestText().replace('\n', ' '));
            }
        }
    }
}
