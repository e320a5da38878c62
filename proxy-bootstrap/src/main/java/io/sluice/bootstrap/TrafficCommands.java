package io.sluice.bootstrap;

import io.sluice.capture.CaptureException;
import io.sluice.capture.CaptureFormatException;
import io.sluice.capture.CaptureOptions;
import io.sluice.json.Json;
import io.sluice.replay.Replay;
import io.sluice.replay.ReplayOptions;
import io.sluice.replay.ReplayReport;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code sluice-ctl traffic capture start|stop|status}, which call the admin API, and {@code sluice-ctl traffic
 * replay}, which replays a capture against a server itself (docs/traffic-capture.md).
 */
@Command(name = "traffic", mixinStandardHelpOptions = true, versionProvider = SluiceCtl.Version.class,
        separator = " ", description = "traffic capture start|stop|status, and traffic replay",
        subcommands = {TrafficCommands.Capture.class, TrafficCommands.ReplayCommand.class})
final class TrafficCommands {

    @Command(name = "capture", mixinStandardHelpOptions = true, versionProvider = SluiceCtl.Version.class,
            separator = " ", description = "starts, stops or shows the capture of client traffic",
            subcommands = {Start.class, Stop.class, Status.class})
    static final class Capture {
    }

    @Command(name = "start", mixinStandardHelpOptions = true, versionProvider = SluiceCtl.Version.class,
            separator = " ", sortOptions = false, description = "starts capturing client traffic into DIR")
    static final class Start implements Callable<Integer> {
        @Spec
        private CommandSpec spec;

        @Mixin
        private AdminApi admin;

        @Option(names = "--output", paramLabel = "DIR", required = true,
                description = "the directory the capture files go to")
        private Path output;

        @Option(names = "--duration", paramLabel = "DURATION", description = "stops by itself after it (e.g. 10m)")
        private String duration;

        @Option(names = "--compress", paramLabel = "true|false", arity = "1", description = "zstd-compresses blocks")
        private Boolean compress;

        @Option(names = "--max-size", paramLabel = "SIZE", description = "stops after this much written (e.g. 10g)")
        private String maxSize;

        @Option(names = "--file-size", paramLabel = "SIZE", description = "starts a new file after it (e.g. 256m)")
        private String fileSize;

        @Option(names = "--min-free-space", paramLabel = "SIZE", description = "stops when the disk has less free")
        private String minFreeSpace;

        @Option(names = "--key-file", paramLabel = "FILE", description = "encrypts the capture with this key")
        private Path keyFile;

        @Override
        public Integer call() {
            Map<String, Object> body = new LinkedHashMap<>();
            // As given: the proxy takes a relative path from capture.directory (decision 131).
            body.put("output", output.toString());
            if (duration != null) {
                try {
                    CaptureOptions.parseDuration(duration); // refuse a bad one here rather than after a request
                } catch (CaptureException e) {
                    throw new ParameterException(spec.commandLine(), "--" + e.getMessage());
                }
                body.put("duration", duration);
            }
            if (compress != null) {
                body.put("compress", compress);
            }
            putIfGiven(body, "maxSize", maxSize);
            putIfGiven(body, "fileSize", fileSize);
            putIfGiven(body, "minFreeSpace", minFreeSpace);
            if (keyFile != null) {
                body.put("keyFile", keyFile.toString()); // a relative one from capture.keyDirectory
            }
            return admin.callEach("POST", "/api/traffic/capture/start", Json.write(body));
        }

        private static void putIfGiven(Map<String, Object> body, String key, String value) {
            if (value != null) {
                body.put(key, value);
            }
        }
    }

    @Command(name = "stop", mixinStandardHelpOptions = true, versionProvider = SluiceCtl.Version.class,
            separator = " ", description = "stops the running capture")
    static final class Stop implements Callable<Integer> {
        @Mixin
        private AdminApi admin;

        @Override
        public Integer call() {
            return admin.callEach("POST", "/api/traffic/capture/stop", "");
        }
    }

    @Command(name = "status", mixinStandardHelpOptions = true, versionProvider = SluiceCtl.Version.class,
            separator = " ", description = "the capture's state, files and counts")
    static final class Status implements Callable<Integer> {
        @Mixin
        private AdminApi admin;

        @Override
        public Integer call() {
            return admin.callEach("GET", "/api/traffic/capture", null);
        }
    }

    @Command(name = "replay", mixinStandardHelpOptions = true, versionProvider = SluiceCtl.Version.class,
            separator = " ", sortOptions = false, description = "replays a capture's sessions against a server")
    static final class ReplayCommand implements Callable<Integer> {
        @Spec
        private CommandSpec spec;

        @Option(names = "--input", paramLabel = "DIR", required = true, description = "the capture's directory")
        private Path input;

        @Option(names = "--target", paramLabel = "HOST:PORT", description = "the server to replay on")
        private String target;

        @Option(names = "--user", paramLabel = "USER", description = "the account to log in with")
        private String user;

        @Option(names = "--rules", paramLabel = "FILE", description = "a dry run instead: what this rule set (config.yaml"
                + " or the !QUERY_RULES items rules learn writes) would refuse of the capture, judged offline as the"
                + " proxy judges; no server, so not with --target")
        private Path rules;

        @Option(names = "--password", paramLabel = "PASSWORD",
                description = "its password (default: $SLUICE_REPLAY_PASSWORD)")
        private String password;

        @Option(names = "--speed", paramLabel = "FACTOR", defaultValue = "1.0",
                description = "how much faster than captured (default: ${DEFAULT-VALUE})")
        private double speed;

        @Option(names = "--read-only", description = "replays only the statements that do not write")
        private boolean readOnly;

        @Option(names = "--report", paramLabel = "FILE", description = "writes the full report there")
        private Path report;

        @Option(names = "--key-file", paramLabel = "FILE", description = "the key an encrypted capture needs")
        private Path keyFile;

        @Option(names = "--progress", paramLabel = "SECONDS", defaultValue = "5",
                description = "prints progress this often (default: ${DEFAULT-VALUE})")
        private double progress;

        @Override
        public Integer call() {
            SluiceCtl ctl = SluiceCtl.of(spec);
            if (rules != null) {
                if (target != null || user != null) {
                    throw new ParameterException(spec.commandLine(), "--rules is a dry run that needs no server:"
                            + " give it without --target and --user");
                }
                return RuleCommands.check(ctl, rules, input, keyFile, "traffic replay --rules");
            }
            if (target == null || user == null) {
                throw new ParameterException(spec.commandLine(), "--target and --user are required (or --rules FILE"
                        + " for a dry run of a rule set)");
            }
            ReplayOptions replay = options(ctl.env);
            try {
                ReplayReport summary = Replay.run(replay, ctl.err);
                summary.printSummary(ctl.out);
                if (replay.report() != null) {
                    ctl.out.println("Report: " + replay.report());
                }
                return 0;
            } catch (CaptureFormatException e) {
                ctl.err.println("sluice-ctl: damaged capture: " + e.getMessage());
                return SluiceCtl.EXIT_FAILED;
            } catch (IOException | RuntimeException e) {
                ctl.err.println("sluice-ctl: replay failed: " + e.getMessage());
                return SluiceCtl.EXIT_FAILED;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return SluiceCtl.EXIT_FAILED;
            }
        }

        /** The options checked: a bad one is a usage error (status 2), found before anything is read. */
        private ReplayOptions options(Map<String, String> env) {
            int colon = target.lastIndexOf(':');
            int port = -1;
            if (colon > 0) {
                try {
                    port = Integer.parseInt(target.substring(colon + 1));
                } catch (NumberFormatException e) {
                    port = -1;
                }
            }
            if (port < 0) {
                throw new ParameterException(spec.commandLine(), "--target: " + target + " (expected: HOST:PORT)");
            }
            String secret = password != null ? password : env.get("SLUICE_REPLAY_PASSWORD");
            if (secret == null) {
                throw new ParameterException(spec.commandLine(),
                        "--password is required (or set SLUICE_REPLAY_PASSWORD)");
            }
            try {
                return new ReplayOptions(input, target.substring(0, colon), port, user, secret, speed, readOnly,
                        report, keyFile, (long) (progress * 1000));
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), e.getMessage());
            }
        }
    }
}
