package io.sluice.bootstrap;

import io.sluice.capture.CaptureFormatException;
import io.sluice.capture.CaptureKey;
import io.sluice.config.AllowListConfig;
import io.sluice.config.QueryRulesFile;
import io.sluice.replay.AllowListLearning;
import io.sluice.replay.RuleCheck;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code sluice-ctl rules list} and {@code sluice-ctl rules explain SQL [--user U] [--schema S] [--client ADDRESS]}:
 * the running query rules with their counters, and which rule would act on a statement and what it would do, on
 * every instance {@code --admin} names (issue #41 item 2); {@code sluice-ctl rules learn --capture DIR} and
 * {@code sluice-ctl rules check --capture DIR --rules FILE}: an allow-list learned from a capture, and what a rule
 * set would refuse of a capture, offline (item 3, decision 188).
 */
@Command(name = "rules", mixinStandardHelpOptions = true, versionProvider = SluiceCtl.Version.class,
        separator = " ", description = "query rules: list, and explain what they would do to a statement",
        subcommands = {RuleCommands.List.class, RuleCommands.Explain.class, RuleCommands.Learn.class,
            RuleCommands.Check.class, RuleCommands.AllowList.class})
final class RuleCommands {

    @Command(name = "list", mixinStandardHelpOptions = true, versionProvider = SluiceCtl.Version.class,
            separator = " ", description = "the running query rules in order, with matched, acted and errors")
    static final class List implements Callable<Integer> {
        @Mixin
        private AdminApi admin;

        @Override
        public Integer call() {
            return admin.callEach("GET", "/api/rules", null);
        }
    }

    @Command(name = "explain", mixinStandardHelpOptions = true, versionProvider = SluiceCtl.Version.class,
            separator = " ", sortOptions = false,
            description = "which query rule would act on SQL, and what it would do")
    static final class Explain implements Callable<Integer> {
        @Mixin
        private AdminApi admin;

        @Parameters(paramLabel = "SQL", description = "the statement, as a client would send it")
        private String sql;

        @Option(names = "--user", paramLabel = "USER", description = "the client user it comes from")
        private String user;

        @Option(names = "--schema", paramLabel = "SCHEMA", description = "the session's default schema")
        private String schema;

        @Option(names = "--client", paramLabel = "ADDRESS", description = "the client's IP address")
        private String client;

        @Override
        public Integer call() {
            return admin.callEach("GET", path(sql, user, schema, client), null);
        }
    }

    @Command(name = "allowlist", mixinStandardHelpOptions = true, versionProvider = SluiceCtl.Version.class,
            separator = " ", description = "the running allow-list: its mode, and the shapes found outside it")
    static final class AllowList implements Callable<Integer> {
        @Mixin
        private AdminApi admin;

        @Override
        public Integer call() {
            return admin.callEach("GET", "/api/rules/allowlist", null);
        }
    }

    @Command(name = "learn", mixinStandardHelpOptions = true, versionProvider = SluiceCtl.Version.class,
            separator = " ", sortOptions = false,
            description = "writes the digests each user ran in a capture as a !QUERY_RULES allow-list")
    static final class Learn implements Callable<Integer> {
        @Spec
        private CommandSpec spec;

        @Option(names = "--capture", paramLabel = "DIR", required = true, description = "the capture's directory")
        private Path capture;

        @Option(names = "--output", paramLabel = "FILE", description = "writes the YAML there (default: stdout)")
        private Path output;

        @Option(names = "--mode", paramLabel = "DRY_RUN|ENFORCE", defaultValue = "DRY_RUN",
                description = "the allow-list's mode (default: ${DEFAULT-VALUE})")
        private AllowListConfig.Mode mode;

        @Option(names = "--key-file", paramLabel = "FILE", description = "the key an encrypted capture needs")
        private Path keyFile;

        @Override
        public Integer call() {
            SluiceCtl ctl = SluiceCtl.of(spec);
            try {
                AllowListLearning learning = AllowListLearning.learn(capture,
                        keyFile == null ? null : CaptureKey.load(keyFile));
                String yaml = learning.yaml(mode.name());
                if (output == null) {
                    ctl.out.print(yaml);
                } else {
                    Files.writeString(output, yaml, StandardCharsets.UTF_8);
                    ctl.out.println(learning.summary() + "; written to " + output);
                }
                return 0;
            } catch (CaptureFormatException e) {
                ctl.err.println("sluice-ctl: damaged capture: " + e.getMessage());
                return SluiceCtl.EXIT_FAILED;
            } catch (IOException | RuntimeException e) {
                ctl.err.println("sluice-ctl: rules learn failed: " + e.getMessage());
                return SluiceCtl.EXIT_FAILED;
            }
        }
    }

    @Command(name = "check", mixinStandardHelpOptions = true, versionProvider = SluiceCtl.Version.class,
            separator = " ", sortOptions = false,
            description = "what a rule set (rules and allow-list) would refuse of a capture, offline")
    static final class Check implements Callable<Integer> {
        @Spec
        private CommandSpec spec;

        @Option(names = "--capture", paramLabel = "DIR", required = true, description = "the capture's directory")
        private Path capture;

        @Option(names = "--rules", paramLabel = "FILE", required = true,
                description = "config.yaml, or a file of !QUERY_RULES items as rules learn writes")
        private Path rules;

        @Option(names = "--key-file", paramLabel = "FILE", description = "the key an encrypted capture needs")
        private Path keyFile;

        @Override
        public Integer call() {
            return check(SluiceCtl.of(spec), rules, capture, keyFile, "rules check");
        }
    }

    /**
     * What the rule set in {@code rules} would refuse of the capture in {@code capture}, judged offline and printed:
     * {@code rules check}, and {@code traffic replay --rules}, the same dry run under the name the issue gives it.
     */
    static int check(SluiceCtl ctl, Path rules, Path capture, Path keyFile, String command) {
        try {
            QueryRulesFile file = QueryRulesFile.load(rules);
            RuleCheck.run(file, capture, keyFile == null ? null : CaptureKey.load(keyFile)).print(ctl.out);
            return 0;
        } catch (CaptureFormatException e) {
            ctl.err.println("sluice-ctl: damaged capture: " + e.getMessage());
            return SluiceCtl.EXIT_FAILED;
        } catch (IOException | RuntimeException e) {
            ctl.err.println("sluice-ctl: " + command + " failed: " + e.getMessage());
            return SluiceCtl.EXIT_FAILED;
        }
    }

    /** {@code /api/rules/explain} with the parameters given. */
    static String path(String sql, String user, String schema, String client) {
        StringBuilder path = new StringBuilder("/api/rules/explain?sql=").append(encode(sql));
        if (user != null) {
            path.append("&user=").append(encode(user));
        }
        if (schema != null) {
            path.append("&schema=").append(encode(schema));
        }
        if (client != null) {
            path.append("&client=").append(encode(client));
        }
        return path.toString();
    }

    private static String encode(String text) {
        return URLEncoder.encode(text, StandardCharsets.UTF_8);
    }
}
