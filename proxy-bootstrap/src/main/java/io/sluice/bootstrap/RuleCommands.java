package io.sluice.bootstrap;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code sluice-ctl rules list} and {@code sluice-ctl rules explain SQL [--user U] [--schema S] [--client ADDRESS]}:
 * the running query rules with their counters, and which rule would act on a statement and what it would do, on
 * every instance {@code --admin} names (issue #41 item 2).
 */
@Command(name = "rules", mixinStandardHelpOptions = true, versionProvider = SluiceCtl.Version.class,
        separator = " ", description = "query rules: list, and explain what they would do to a statement",
        subcommands = {RuleCommands.List.class, RuleCommands.Explain.class})
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
