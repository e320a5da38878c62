package io.sluice.bootstrap;

import io.sluice.capture.CaptureException;
import io.sluice.capture.CaptureFormatException;
import io.sluice.capture.CaptureOptions;
import io.sluice.json.Json;
import io.sluice.replay.Replay;
import io.sluice.replay.ReplayOptions;
import io.sluice.replay.ReplayReport;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code bin/sluice-ctl}: operates a running Sluice through its admin API, and replays captures.
 *
 * <pre>
 * sluice-ctl backends | sessions [--verbose] | version | reload | drain NAME | undrain NAME
 * sluice-ctl traffic capture start --output DIR [--duration 10m] [--compress true|false] [--max-size 10g] ...
 * sluice-ctl traffic capture stop
 * sluice-ctl traffic capture status
 * sluice-ctl traffic replay --input DIR --target HOST:PORT --user U --password P [--speed 1.0] [--read-only]
 *                           [--report FILE] [--key-file FILE]
 * </pre>
 *
 * <p>Exit status: 0 on success, 1 when the request or the replay failed, 2 for bad arguments.
 */
public final class SluiceCtl {
    static final int EXIT_FAILED = 1;
    static final int EXIT_BAD_ARGUMENTS = 2;
    static final String DEFAULT_ADMIN = "127.0.0.1:3080";

    static final String USAGE = """
            Usage:
              sluice-ctl backends                 the backends: status, weight, sessions, pool
              sluice-ctl sessions [--verbose]     sessions by backend (every session with --verbose)
              sluice-ctl version                  the running version
              sluice-ctl reload                   reads config.yaml again and applies it
              sluice-ctl drain NAME               takes backend NAME out of rotation; its sessions finish
              sluice-ctl undrain NAME             puts it back
              sluice-ctl traffic capture start --output DIR [--duration 10m] [--compress true|false]
                                               [--max-size 10g] [--file-size 256m] [--min-free-space 1g]
                                               [--key-file FILE]
              sluice-ctl traffic capture stop
              sluice-ctl traffic capture status
              sluice-ctl traffic replay --input DIR --target HOST:PORT --user USER --password PASSWORD
                                        [--speed 1.0] [--read-only] [--report FILE] [--key-file FILE]
                                        [--progress SECONDS]

            Every command but replay calls the admin API of running Sluice instances:
              --admin HOST:PORT[,HOST:PORT...]  where they listen, each in turn (default: $SLUICE_ADMIN or
                                                127.0.0.1:3080)
              --token TOKEN      their bearer token (default: $SLUICE_ADMIN_TOKEN)
            With several instances each answer is headed by its address; the exit status is 1 if any failed.
            Replay reads the password from $SLUICE_REPLAY_PASSWORD when --password is not given.
            See docs/traffic-capture.md.""";

    private static final Map<String, String> CAPTURE_KEYS = Map.of("--output", "output", "--duration", "duration",
            "--compress", "compress", "--max-size", "maxSize", "--file-size", "fileSize", "--min-free-space",
            "minFreeSpace", "--key-file", "keyFile");

    /** Commands that are one call of the admin API each. */
    static final List<String> ADMIN_COMMANDS = List.of("backends", "sessions", "version", "reload", "drain",
            "undrain");

    private SluiceCtl() {
    }

    /** {@code backends}, {@code sessions}, {@code version}, {@code reload}, {@code drain NAME}, {@code undrain NAME}. */
    private static int admin(String command, List<String> args, PrintStream out, PrintStream err,
            Map<String, String> env) {
        String backend = null;
        List<String> rest = args;
        if (command.equals("drain") || command.equals("undrain")) {
            if (args.isEmpty() || args.get(0).startsWith("--")) {
                throw new IllegalArgumentException(command + ": the backend's name is required (sluice-ctl "
                        + command + " NAME)");
            }
            backend = args.get(0);
            rest = args.subList(1, args.size());
        }
        boolean verbose = command.equals("sessions") && rest.contains("--verbose");
        if (verbose) {
            rest = new ArrayList<>(rest);
            rest.remove("--verbose");
        }
        Map<String, String> options = options(rest);
        for (String name : options.keySet()) {
            if (!name.equals("--admin") && !name.equals("--token")) {
                throw new IllegalArgumentException(name + ": unknown option for " + command);
            }
        }
        String method = "GET";
        String body = null;
        String path = switch (command) {
            case "backends" -> "/api/backends";
            case "sessions" -> verbose ? "/api/sessions?verbose" : "/api/sessions";
            case "version" -> "/api/version";
            default -> null;
        };
        if (path == null) {
            method = "POST";
            body = "";
            path = command.equals("reload") ? "/api/config/reload"
                    : "/api/backends/" + java.net.URLEncoder.encode(backend, java.nio.charset.StandardCharsets.UTF_8)
                            + "/" + command;
        }
        return onEach(options, env, out, err, method, path, body);
    }

    /** One call on each instance {@code --admin} names; 0 when every one succeeded. */
    private static int onEach(Map<String, String> options, Map<String, String> env, PrintStream out,
            PrintStream err, String method, String path, String body) {
        String admins = options.getOrDefault("--admin", env.getOrDefault("SLUICE_ADMIN", DEFAULT_ADMIN));
        String token = options.getOrDefault("--token", env.get("SLUICE_ADMIN_TOKEN"));
        List<String> targets = new ArrayList<>();
        for (String admin : admins.split(",")) {
            if (!admin.isBlank()) {
                targets.add(admin.strip());
            }
        }
        if (targets.isEmpty()) {
            throw new IllegalArgumentException("--admin: no HOST:PORT given");
        }
        int status = 0;
        for (String admin : targets) {
            if (targets.size() > 1) {
                out.println("== " + admin);
            }
            int one = call(admin, token, method, path, body, out, err);
            status = Math.max(status, one);
        }
        return status;
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
        List<String> list = List.of(args);
        if (list.isEmpty() || list.contains("--help") || list.contains("-h")) {
            (list.isEmpty() ? err : out).println(USAGE);
            return list.isEmpty() ? EXIT_BAD_ARGUMENTS : 0;
        }
        try {
            if (ADMIN_COMMANDS.contains(list.get(0))) {
                return admin(list.get(0), list.subList(1, list.size()), out, err, env);
            }
            if (list.size() >= 3 && list.get(0).equals("traffic") && list.get(1).equals("capture")) {
                return capture(list.get(2), options(list.subList(3, list.size())), out, err, env);
            }
            if (list.size() >= 2 && list.get(0).equals("traffic") && list.get(1).equals("replay")) {
                return replay(options(list.subList(2, list.size())), out, err, env);
            }
            throw new IllegalArgumentException("unknown command: " + String.join(" ", list)
                    + " (expected: " + String.join(", ", ADMIN_COMMANDS)
                    + ", traffic capture start|stop|status, or traffic replay)");
        } catch (IllegalArgumentException e) {
            err.println("sluice-ctl: " + e.getMessage());
            err.println(USAGE);
            return EXIT_BAD_ARGUMENTS;
        }
    }

    /** {@code --name value} pairs; {@code --read-only} alone. */
    private static Map<String, String> options(List<String> args) {
        Map<String, String> options = new LinkedHashMap<>();
        for (int i = 0; i < args.size(); i++) {
            String name = args.get(i);
            if (!name.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument: " + name);
            }
            if (name.equals("--read-only")) {
                options.put(name, "true");
                continue;
            }
            if (i + 1 >= args.size()) {
                throw new IllegalArgumentException(name + ": missing value");
            }
            if (options.put(name, args.get(++i)) != null) {
                throw new IllegalArgumentException(name + ": given twice");
            }
        }
        return options;
    }

    private static int capture(String action, Map<String, String> options, PrintStream out, PrintStream err,
            Map<String, String> env) {
        List<String> allowed = new ArrayList<>(List.of("--admin", "--token"));
        String method;
        String path;
        String body = null;
        switch (action) {
            case "start" -> {
                allowed.addAll(CAPTURE_KEYS.keySet());
                method = "POST";
                path = "/api/traffic/capture/start";
                body = Json.write(startBody(options));
            }
            case "stop" -> {
                method = "POST";
                path = "/api/traffic/capture/stop";
                body = "";
            }
            case "status" -> {
                method = "GET";
                path = "/api/traffic/capture";
            }
            default -> throw new IllegalArgumentException("traffic capture " + action
                    + " (expected: start, stop or status)");
        }
        for (String name : options.keySet()) {
            if (!allowed.contains(name)) {
                throw new IllegalArgumentException(name + ": unknown option for traffic capture " + action);
            }
        }
        return onEach(options, env, out, err, method, path, body);
    }

    /** One request to one admin API; prints the answer (pretty JSON) or the error. */
    private static int call(String admin, String token, String method, String path, String body, PrintStream out,
            PrintStream err) {
        URI uri = URI.create("http://" + admin + path);
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(60))
                .header("Accept", "application/json");
        if (token != null && !token.isEmpty()) {
            request.header("Authorization", "Bearer " + token);
        }
        if (body != null) {
            request.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(body));
        } else {
            request.GET();
        }
        HttpResponse<String> response;
        try {
            HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
            response = client.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (ConnectException e) {
            err.println("sluice-ctl: cannot reach the admin API at http://" + admin
                    + " (is Sluice running with its admin server? --admin HOST:PORT)");
            return EXIT_FAILED;
        } catch (IOException e) {
            err.println("sluice-ctl: " + uri + ": " + e);
            return EXIT_FAILED;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return EXIT_FAILED;
        }
        if (response.statusCode() / 100 == 2) {
            out.print(pretty(response.body()));
            return 0;
        }
        err.println("sluice-ctl: " + admin + ": " + method + " " + path + ": HTTP " + response.statusCode() + ": "
                + error(response));
        return EXIT_FAILED;
    }

    private static Map<String, Object> startBody(Map<String, String> options) {
        if (!options.containsKey("--output")) {
            throw new IllegalArgumentException("traffic capture start: --output DIR is required");
        }
        Map<String, Object> body = new LinkedHashMap<>();
        for (Map.Entry<String, String> option : options.entrySet()) {
            String key = CAPTURE_KEYS.get(option.getKey());
            if (key == null) {
                continue;
            }
            String value = option.getValue();
            switch (key) {
                case "compress" -> {
                    if (!value.equals("true") && !value.equals("false")) {
                        throw new IllegalArgumentException("--compress: " + value + " (expected: true or false)");
                    }
                    body.put(key, Boolean.parseBoolean(value));
                }
                // The admin server resolves relative paths against its own directory: send absolute ones.
                case "output", "keyFile" -> body.put(key, Path.of(value).toAbsolutePath().toString());
                case "duration" -> {
                    try {
                        CaptureOptions.parseDuration(value); // refuse a bad one here rather than after a request
                    } catch (CaptureException e) {
                        throw new IllegalArgumentException("--" + e.getMessage());
                    }
                    body.put(key, value);
                }
                default -> body.put(key, value);
            }
        }
        return body;
    }

    private static String pretty(String json) {
        try {
            return Json.writePretty(Json.parse(json));
        } catch (IllegalArgumentException e) {
            return json + "\n";
        }
    }

    private static String error(HttpResponse<String> response) {
        try {
            Object message = Json.parseObject(response.body()).get("error");
            if (message != null) {
                return message.toString();
            }
        } catch (IllegalArgumentException e) {
            // not JSON: show it as it is
        }
        return response.body();
    }

    private static int replay(Map<String, String> options, PrintStream out, PrintStream err, Map<String, String> env) {
        List<String> allowed = List.of("--input", "--target", "--user", "--password", "--speed", "--read-only",
                "--report", "--key-file", "--progress");
        for (String name : options.keySet()) {
            if (!allowed.contains(name)) {
                throw new IllegalArgumentException(name + ": unknown option for traffic replay");
            }
        }
        String input = required(options, "--input");
        String target = required(options, "--target");
        int colon = target.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("--target: " + target + " (expected: HOST:PORT)");
        }
        int port;
        try {
            port = Integer.parseInt(target.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--target: " + target + " (expected: HOST:PORT)");
        }
        String password = options.getOrDefault("--password", env.get("SLUICE_REPLAY_PASSWORD"));
        if (password == null) {
            throw new IllegalArgumentException("--password is required (or set SLUICE_REPLAY_PASSWORD)");
        }
        double speed = number(options.getOrDefault("--speed", "1.0"), "--speed");
        double progress = number(options.getOrDefault("--progress", "5"), "--progress");
        ReplayOptions replay = new ReplayOptions(Path.of(input), target.substring(0, colon), port,
                required(options, "--user"), password, speed, options.containsKey("--read-only"),
                options.containsKey("--report") ? Path.of(options.get("--report")) : null,
                options.containsKey("--key-file") ? Path.of(options.get("--key-file")) : null,
                (long) (progress * 1000));
        try {
            ReplayReport report = Replay.run(replay, err);
            report.printSummary(out);
            if (replay.report() != null) {
                out.println("Report: " + replay.report());
            }
            return 0;
        } catch (CaptureFormatException e) {
            err.println("sluice-ctl: damaged capture: " + e.getMessage());
            return EXIT_FAILED;
        } catch (IOException | RuntimeException e) {
            err.println("sluice-ctl: replay failed: " + e.getMessage());
            return EXIT_FAILED;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return EXIT_FAILED;
        }
    }

    private static String required(Map<String, String> options, String name) {
        String value = options.get(name);
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(name + " is required");
        }
        return value;
    }

    private static double number(String value, String name) {
        try {
            return Double.parseDouble(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + ": " + value + " (expected: a number)");
        }
    }
}
