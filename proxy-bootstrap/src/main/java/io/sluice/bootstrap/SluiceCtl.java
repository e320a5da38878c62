package io.sluice.bootstrap;

import io.sluice.api.BuildInfo;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * {@code bin/sluice-ctl}: operates running Sluice instances through their admin API, and replays captures. The
 * command line is picocli's (decision 092): each command below is a subcommand with its own {@code --help}.
 *
 * <pre>
 * sluice-ctl backends | sessions [--verbose] | version | reload | drain NAME | undrain NAME
 * sluice-ctl top [--order-by totalTime] [--limit 20] [--interval 2] [--once]
 * sluice-ctl rules list | rules explain SQL [--user USER] [--schema SCHEMA] [--client ADDRESS]
 * sluice-ctl traffic capture start --output DIR [--duration 10m] [--compress true|false] [--max-size 10g] ...
 * sluice-ctl traffic capture stop
 * sluice-ctl traffic capture status
 * sluice-ctl traffic replay --input DIR --target HOST:PORT --user U --password P [--speed 1.0] [--read-only]
 *                           [--report FILE] [--key-file FILE]
 * </pre>
 *
 * <p>Exit status: 0 on success, 1 when the request or the replay failed, 2 for bad arguments.
 */
@Command(name = "sluice-ctl", mixinStandardHelpOptions = true, versionProvider = SluiceCtl.Version.class,
        separator = " ", sortOptions = false, synopsisHeading = "",
        customSynopsis = {
            "Usage:",
            "  sluice-ctl backends | sessions [--verbose] | version | reload | drain NAME | undrain NAME",
            "             [--admin HOST:PORT[,HOST:PORT...]] [--token TOKEN]",
            "  sluice-ctl top [--order-by totalTime|count|errors|avgTime|maxTime|p99|rowsSent|lastSeen] [--limit 20]",
            "             [--interval 2] [--once] [--admin HOST:PORT] [--token TOKEN]",
            "  sluice-ctl rules list | rules explain SQL [--user USER] [--schema SCHEMA] [--client ADDRESS]",
            "  sluice-ctl groups [GROUP] | events GROUP",
            "  sluice-ctl switchover GROUP [--to DATASOURCE] [--dry-run] [--force] [--timeout MILLISECONDS]",
            "  sluice-ctl rejoin GROUP DATASOURCE",
            "  sluice-ctl traffic capture start --output DIR [--duration 10m] [--compress true|false]",
            "             [--max-size 10g] [--file-size 256m] [--min-free-space 1g] [--key-file FILE]",
            "  sluice-ctl traffic capture stop | status",
            "  sluice-ctl traffic replay --input DIR --target HOST:PORT --user USER --password PASSWORD",
            "             [--speed 1.0] [--read-only] [--report FILE] [--key-file FILE] [--progress SECONDS]",
            ""},
        description = "Operates running Sluice instances through their admin API, and replays traffic captures.",
        commandListHeading = "%nCommands:%n",
        subcommands = {AdminCommands.Backends.class, AdminCommands.Sessions.class, AdminCommands.Version.class,
            AdminCommands.Reload.class, AdminCommands.Drain.class, AdminCommands.Undrain.class,
            TopCommand.class, RuleCommands.class,
            GroupCommands.Groups.class, GroupCommands.Events.class, GroupCommands.Switchover.class,
            GroupCommands.Rejoin.class,
            TrafficCommands.class},
        footer = {"",
            "Every command but replay calls the admin API of running Sluice instances:",
            "  --admin HOST:PORT[,HOST:PORT...]  where they listen, each in turn (default: $SLUICE_ADMIN or",
            "                                    " + SluiceCtl.DEFAULT_ADMIN + ")",
            "  --token TOKEN      their bearer token (default: $SLUICE_ADMIN_TOKEN)",
            "With several instances each answer is headed by its address; the exit status is 1 if any failed.",
            "Replay reads the password from $SLUICE_REPLAY_PASSWORD when --password is not given.",
            "'sluice-ctl COMMAND --help' shows a command's options. See docs/operations.md and",
            "docs/traffic-capture.md."})
public final class SluiceCtl {
    static final int EXIT_FAILED = 1;
    static final int EXIT_BAD_ARGUMENTS = 2;
    static final String DEFAULT_ADMIN = "127.0.0.1:3080";
    /** Wide enough that the synopsis lines above stay whole (picocli wraps at 80 otherwise). */
    private static final int USAGE_WIDTH = 110;

    /** Where the commands print: the caller's streams, not System's, so that tests can read them. */
    final PrintStream out;
    final PrintStream err;
    /** Where SLUICE_ADMIN, SLUICE_ADMIN_TOKEN and SLUICE_REPLAY_PASSWORD come from. */
    final Map<String, String> env;

    private SluiceCtl(PrintStream out, PrintStream err, Map<String, String> env) {
        this.out = out;
        this.err = err;
        this.env = env;
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err, System.getenv()));
    }

    /**
     * Runs one command line.
     *
     * @return the exit status
     */
    static int run(String[] args, PrintStream out, PrintStream err, Map<String, String> env) {
        CommandLine commandLine = new CommandLine(new SluiceCtl(out, err, env));
        commandLine.setUsageHelpWidth(USAGE_WIDTH);
        commandLine.setOut(new PrintWriter(out, true, StandardCharsets.UTF_8));
        commandLine.setErr(new PrintWriter(err, true, StandardCharsets.UTF_8));
        commandLine.setExitCodeExceptionMapper(e -> e instanceof ParameterException ? EXIT_BAD_ARGUMENTS : EXIT_FAILED);
        commandLine.setParameterExceptionHandler(SluiceCtl::badArguments);
        // A command's own failures are answered in its call(); whatever escapes is a failure, said in one line
        commandLine.setExecutionExceptionHandler((e, failed, parsed) -> {
            failed.getErr().println("sluice-ctl: " + e);
            return EXIT_FAILED;
        });
        int status = commandLine.execute(args);
        out.flush();
        err.flush();
        return status;
    }

    /** The error in one line, then the usage of the command it was given to: on stderr, status 2. */
    private static int badArguments(ParameterException e, String[] args) {
        CommandLine failed = e.getCommandLine();
        PrintWriter err = failed.getErr();
        err.println("sluice-ctl: " + e.getMessage());
        UnmatchedArgumentException.printSuggestions(e, err);
        failed.usage(err);
        return EXIT_BAD_ARGUMENTS;
    }

    /** The root of a parsed command line: the streams and the environment every command uses. */
    static SluiceCtl of(CommandLine.Model.CommandSpec spec) {
        return (SluiceCtl) spec.root().userObject();
    }

    /** {@code sluice-ctl --version}: this client's version; {@code sluice-ctl version} asks the running instances. */
    static final class Version implements IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"sluice-ctl " + BuildInfo.version()};
        }
    }
}
