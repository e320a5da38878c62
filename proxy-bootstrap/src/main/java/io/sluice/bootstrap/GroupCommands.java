package io.sluice.bootstrap;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code sluice-ctl groups [GROUP]}, {@code events GROUP} and {@code switchover GROUP [--to DS] [--dry-run]
 * [--force] [--timeout MS]}: a read/write split group's topology, its history, and a planned switchover (issue #40);
 * {@code rejoin GROUP DATASOURCE}: a server fenced after a failover taken back as a replica of the primary.
 */
final class GroupCommands {
    private GroupCommands() {
    }

    @Command(name = "groups", mixinStandardHelpOptions = true, versionProvider = SluiceCtl.Version.class,
            separator = " ", description = "read/write split groups: primary, state, replicas (one with GROUP)")
    static final class Groups implements Callable<Integer> {
        @Mixin
        private AdminApi admin;

        @Parameters(paramLabel = "GROUP", arity = "0..1", description = "one group, with its event history")
        private String group;

        @Override
        public Integer call() {
            return admin.callEach("GET", group == null ? "/api/groups" : groupPath(group, ""), null);
        }
    }

    @Command(name = "events", mixinStandardHelpOptions = true, versionProvider = SluiceCtl.Version.class,
            separator = " ", description = "a group's topology history: primary changes, split brains, switchovers")
    static final class Events implements Callable<Integer> {
        @Mixin
        private AdminApi admin;

        @Parameters(paramLabel = "GROUP", description = "the group, as config.yaml names it")
        private String group;

        @Override
        public Integer call() {
            return admin.callEach("GET", groupPath(group, "/events"), null);
        }
    }

    @Command(name = "switchover", mixinStandardHelpOptions = true, versionProvider = SluiceCtl.Version.class,
            separator = " ", description = "makes another server the group's primary, holding writes meanwhile")
    static final class Switchover implements Callable<Integer> {
        @Mixin
        private AdminApi admin;

        @Parameters(paramLabel = "GROUP", description = "the group, as config.yaml names it")
        private String group;

        @Option(names = "--to", paramLabel = "DATASOURCE",
                description = "the server to promote (default: the usable replica that applied the most)")
        private String to;

        @Option(names = "--dry-run", description = "only print the checks and the statements it would run")
        private boolean dryRun;

        @Option(names = "--force", description = "go on when write transactions are still open after --timeout")
        private boolean force;

        @Option(names = "--timeout", paramLabel = "MILLISECONDS",
                description = "how long open write transactions, then the candidate's catching up, may take"
                        + " (default: 5000)")
        private Long timeout;

        @Override
        public Integer call() {
            List<String> query = new ArrayList<>();
            if (to != null) {
                query.add("to=" + URLEncoder.encode(to, StandardCharsets.UTF_8));
            }
            if (dryRun) {
                query.add("dryRun=true");
            }
            if (force) {
                query.add("force=true");
            }
            if (timeout != null) {
                query.add("timeout=" + timeout);
            }
            String path = groupPath(group, "/switchover") + (query.isEmpty() ? "" : "?" + String.join("&", query));
            return admin.callEach("POST", path, "");
        }
    }

    @Command(name = "rejoin", mixinStandardHelpOptions = true, versionProvider = SluiceCtl.Version.class,
            separator = " ", description = "takes a server fenced after a failover back as a replica of the primary")
    static final class Rejoin implements Callable<Integer> {
        @Mixin
        private AdminApi admin;

        @Parameters(index = "0", paramLabel = "GROUP", description = "the group, as config.yaml names it")
        private String group;

        @Parameters(index = "1", paramLabel = "DATASOURCE", description = "the fenced server (the old primary)")
        private String dataSource;

        @Override
        public Integer call() {
            return admin.callEach("POST", groupPath(group, "/rejoin") + "?datasource="
                    + URLEncoder.encode(dataSource, StandardCharsets.UTF_8), "");
        }
    }

    private static String groupPath(String group, String action) {
        return "/api/groups/" + URLEncoder.encode(group, StandardCharsets.UTF_8) + action;
    }
}
