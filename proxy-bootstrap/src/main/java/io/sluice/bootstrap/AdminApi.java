package io.sluice.bootstrap;

import io.sluice.json.Json;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The admin APIs a {@code sluice-ctl} command calls ({@code --admin}, {@code --token}), mixed into every command
 * but replay, and the call itself: one request to each instance in turn, its answer printed as pretty JSON.
 */
final class AdminApi {
    @Spec(Spec.Target.MIXEE)
    private CommandSpec command;

    @Option(names = "--admin", paramLabel = "HOST:PORT[,HOST:PORT...]",
            description = "where the instances' admin APIs listen, each called in turn (default: $SLUICE_ADMIN or "
                    + SluiceCtl.DEFAULT_ADMIN + ")")
    private String admin;

    @Option(names = "--token", paramLabel = "TOKEN", description = "their bearer token (default: $SLUICE_ADMIN_TOKEN)")
    private String token;

    /**
     * One call on each instance {@code --admin} names, each answer headed by its address when there are several.
     *
     * @param body the JSON to send, or null for a GET
     * @return 0 when every one succeeded, else {@link SluiceCtl#EXIT_FAILED}
     */
    int callEach(String method, String path, String body) {
        SluiceCtl ctl = SluiceCtl.of(command);
        String admins = admin != null ? admin : ctl.env.getOrDefault("SLUICE_ADMIN", SluiceCtl.DEFAULT_ADMIN);
        String bearer = token != null ? token : ctl.env.get("SLUICE_ADMIN_TOKEN");
        List<String> targets = new ArrayList<>();
        for (String one : admins.split(",")) {
            if (!one.isBlank()) {
                targets.add(one.strip());
            }
        }
        if (targets.isEmpty()) {
            throw new ParameterException(command.commandLine(), "--admin: no HOST:PORT given");
        }
        int status = 0;
        for (String target : targets) {
            if (targets.size() > 1) {
                ctl.out.println("== " + target);
            }
            status = Math.max(status, call(target, bearer, method, path, body, ctl.out, ctl.err));
        }
        return status;
    }

    /**
     * GET {@code path} from the first instance {@code --admin} names, for a command that reads the answer itself
     * ({@code top}).
     *
     * @return the body of a 2xx answer
     * @throws IOException when the instance cannot be reached or answers otherwise (the message says why)
     */
    String get(String path) throws IOException, InterruptedException {
        SluiceCtl ctl = SluiceCtl.of(command);
        String admins = admin != null ? admin : ctl.env.getOrDefault("SLUICE_ADMIN", SluiceCtl.DEFAULT_ADMIN);
        String bearer = token != null ? token : ctl.env.get("SLUICE_ADMIN_TOKEN");
        String target = admins.split(",")[0].strip();
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://" + target + path))
                .timeout(Duration.ofSeconds(30)).header("Accept", "application/json").GET();
        if (bearer != null && !bearer.isEmpty()) {
            request.header("Authorization", "Bearer " + bearer);
        }
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        HttpResponse<String> response;
        try {
            response = client.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (ConnectException e) {
            throw new IOException("cannot reach the admin API at http://" + target
                    + " (is Sluice running with its admin server? --admin HOST:PORT)", e);
        }
        if (response.statusCode() / 100 != 2) {
            throw new IOException(target + ": GET " + path + ": HTTP " + response.statusCode() + ": "
                    + error(response));
        }
        return response.body();
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
            return SluiceCtl.EXIT_FAILED;
        } catch (IOException e) {
            err.println("sluice-ctl: " + uri + ": " + e);
            return SluiceCtl.EXIT_FAILED;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return SluiceCtl.EXIT_FAILED;
        }
        if (response.statusCode() / 100 == 2) {
            out.print(pretty(response.body()));
            return 0;
        }
        err.println("sluice-ctl: " + admin + ": " + method + " " + path + ": HTTP " + response.statusCode() + ": "
                + error(response));
        return SluiceCtl.EXIT_FAILED;
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
}
