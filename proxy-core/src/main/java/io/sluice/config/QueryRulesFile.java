package io.sluice.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The query rules and allow-list of a file, for {@code sluice-ctl rules check} to try against a capture before they
 * run: either a whole config.yaml, or a file with only a {@code rules:} list of {@code !QUERY_RULES} items, as
 * {@code sluice-ctl rules learn} writes one.
 *
 * @param rules the rules in file order
 * @param allowList the allow-list, or {@code null}: none
 */
public record QueryRulesFile(List<QueryRuleConfig> rules, AllowListConfig allowList) {

    public QueryRulesFile {
        rules = List.copyOf(rules);
    }

    /**
     * Reads {@code file}.
     *
     * @throws ConfigException when it cannot be read or holds rules Sluice refuses
     */
    public static QueryRulesFile load(Path file) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new ConfigException(file + ": cannot be read (" + e.getMessage() + ")", e);
        }
        YamlSection top = ConfigYaml.document(text, file.toString());
        if (top.has("dataSources")) {
            ProxyConfig config = ConfigYaml.load(file);
            return new QueryRulesFile(config.queryRules(), config.allowList());
        }
        RuleReaders readers = new RuleReaders(Set.of(), null);
        List<QueryRuleConfig> rules = new ArrayList<>();
        top.list("rules", "a list of !QUERY_RULES items", item -> {
            if (!QueryRuleReader.QUERY_RULES.equals(item.tag())) {
                throw item.refusal((item.tag() == null ? "an item without a type" : item.tag())
                        + " (expected: " + QueryRuleReader.QUERY_RULES + " in a file without dataSources)");
            }
            return readers.rule(item, rules);
        });
        top.done();
        return new QueryRulesFile(rules, readers.allowList());
    }
}
