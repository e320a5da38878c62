package io.sluice.admin;

import io.sluice.api.GroupTopology;
import io.sluice.api.ProxyControl;
import io.sluice.api.RejoinReport;
import io.sluice.api.SwitchoverReport;
import io.sluice.balancer.replication.Roles;
import io.sluice.balancer.replication.TopologyEvent;
import io.sluice.json.Json;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * The admin API's read/write split group routes (issue #40), apart from the HTTP server: the admin handler checks the
 * token and hands each request's method, path and query parameters to {@link #handle}.
 *
 * <ul>
 *   <li>{@code GET /api/groups}: every group's topology (primary, state, replicas, writable servers);</li>
 *   <li>{@code GET /api/groups/{group}}: one group's, with its event history;</li>
 *   <li>{@code GET /api/groups/{group}/events}: the history alone, oldest first;</li>
 *   <li>{@code POST /api/groups/{group}/switchover?to=DS&dryRun&force&timeout=MS}: a planned switchover (admin
 *       token), 200 when switched or for a dry run whose checks passed, 409 when refused, abandoned or rolled
 *       back, each with the report;</li>
 *   <li>{@code POST /api/groups/{group}/rejoin?datasource=DS}: a server fenced after a failover pointed at the
 *       primary and taken back into the group (admin token), 200 when rejoined, 409 when not, with the report.</li>
 * </ul>
 */
final class GroupEndpoints {
    static final String PREFIX = "/api/groups";
    /** How long open write transactions, then the candidate's catching up, may take by default. */
    static final long DEFAULT_TIMEOUT_MILLIS = 5_000;

    /** What to send back: status, JSON, and the method a 405 allows (else {@code null}). */
    record Response(int status, String json, String allow) {
    }

    private final ProxyControl proxy;

    GroupEndpoints(ProxyControl proxy) {
        this.proxy = proxy;
    }

    static boolean handles(String path) {
        return path.equals(PREFIX) || path.startsWith(PREFIX + "/");
    }

    /** Whether the request changes something, and so needs the admin token rather than the read one. */
    static boolean changes(String path) {
        return path.endsWith("/switchover") || path.endsWith("/rejoin");
    }

    Response handle(String method, String path, Map<String, List<String>> parameters) {
        if (path.equals(PREFIX)) {
            if (!method.equals("GET")) {
                return new Response(405, error("method not allowed (expected: GET)"), "GET");
            }
            Json.Writer json = Json.writer().beginArray();
            for (GroupTopology group : proxy.groups()) {
                topology(json, group, false);
            }
            return new Response(200, json.endArray().toString(), null);
        }
        String rest = path.substring(PREFIX.length() + 1);
        int slash = rest.indexOf('/');
        String name = URLDecoder.decode(slash < 0 ? rest : rest.substring(0, slash), StandardCharsets.UTF_8);
        String action = slash < 0 ? "" : rest.substring(slash + 1);
        GroupTopology group = proxy.groups().stream().filter(g -> g.group().equals(name)).findFirst().orElse(null);
        if (group == null) {
            return new Response(404, error("no read/write group named '" + name + "'"), null);
        }
        switch (action) {
            case "" -> {
                return method.equals("GET") ? new Response(200, topology(Json.writer(), group, true).toString(), null)
                        : new Response(405, error("method not allowed (expected: GET)"), "GET");
            }
            case "events" -> {
                if (!method.equals("GET")) {
                    return new Response(405, error("method not allowed (expected: GET)"), "GET");
                }
                Json.Writer json = Json.writer().beginArray();
                group.events().forEach(e -> event(json, e));
                return new Response(200, json.endArray().toString(), null);
            }
            case "switchover" -> {
                if (!method.equals("POST")) {
                    return new Response(405, error("method not allowed (expected: POST)"), "POST");
                }
                return switchover(name, parameters);
            }
            case "rejoin" -> {
                if (!method.equals("POST")) {
                    return new Response(405, error("method not allowed (expected: POST)"), "POST");
                }
                return rejoin(name, first(parameters, "datasource"));
            }
            default -> {
                return new Response(404, error("no such endpoint: " + path + " (expected: " + PREFIX + "/{group},"
                        + " /events, /switchover or /rejoin)"), null);
            }
        }
    }

    private Response switchover(String name, Map<String, List<String>> parameters) {
        long timeout = DEFAULT_TIMEOUT_MILLIS;
        String timeoutText = first(parameters, "timeout");
        if (timeoutText != null) {
            try {
                timeout = Long.parseLong(timeoutText);
            } catch (NumberFormatException e) {
                timeout = -1;
            }
            if (timeout <= 0) {
                return new Response(400, error("timeout: " + timeoutText + " (expected: milliseconds above 0)"), null);
            }
        }
        SwitchoverReport report = proxy.switchover(name, first(parameters, "to"), isSet(parameters, "dryRun"),
                isSet(parameters, "force"), timeout);
        if (report == null) {
            return new Response(404, error("no read/write group named '" + name + "'"), null);
        }
        boolean ok = report.switched() || report.dryRun() && report.error().isEmpty();
        return new Response(ok ? 200 : 409, report(report), null);
    }

    private Response rejoin(String name, String server) {
        if (server == null || server.isBlank()) {
            return new Response(400, error("datasource: missing (expected: the fenced server to rejoin)"), null);
        }
        RejoinReport report = proxy.rejoin(name, server);
        if (report == null) {
            return new Response(404, error("no read/write group named '" + name + "'"), null);
        }
        Json.Writer json = Json.writer().beginObject().member("group", report.group())
                .member("datasource", report.server()).member("primary", report.primary())
                .member("rejoined", report.rejoined());
        if (!report.error().isEmpty()) {
            json.member("error", report.error());
        }
        json.name("statements").beginArray();
        report.statements().forEach(json::value);
        return new Response(report.rejoined() ? 200 : 409, json.endArray().endObject().toString(), null);
    }

    private static String report(SwitchoverReport report) {
        Json.Writer json = Json.writer().beginObject().member("group", report.group()).member("from", report.from())
                .member("to", report.to()).member("dryRun", report.dryRun()).member("switched", report.switched());
        if (!report.error().isEmpty()) {
            json.member("error", report.error());
        }
        json.member("writesHeldMilliseconds", report.writesHeldMillis());
        json.name("checks").beginArray();
        report.checks().forEach(json::value);
        json.endArray().name("plan").beginArray();
        report.plan().forEach(json::value);
        json.endArray().name("steps").beginArray();
        for (SwitchoverReport.Step step : report.steps()) {
            json.beginObject().member("step", step.name()).member("server", step.server())
                    .member("milliseconds", step.millis()).member("outcome", step.outcome()).endObject();
        }
        return json.endArray().endObject().toString();
    }

    private static Json.Writer topology(Json.Writer json, GroupTopology group, boolean withEvents) {
        Roles roles = group.roles();
        json.beginObject().member("group", group.group()).member("primaryDiscovery", group.discovery())
                .member("switchover", group.switchover()).member("state", roles.state().label())
                .member("primary", roles.primary()).member("takesWrites", roles.takesWrites());
        json.name("replicas").beginArray();
        roles.replicas().forEach(json::value);
        json.endArray().name("writable").beginArray();
        roles.writable().forEach(json::value);
        json.endArray().member("detail", roles.detail()).member("statementsWaiting", group.waiting())
                .member("primaryChanges", group.primaryChanges()).member("autoFailover", group.autoFailover())
                .member("failovers", group.failovers());
        json.name("fenced").beginArray();
        group.fenced().forEach(json::value);
        json.endArray();
        if (withEvents) {
            json.name("events").beginArray();
            group.events().forEach(e -> event(json, e));
            json.endArray();
        }
        return json.endObject();
    }

    private static void event(Json.Writer json, TopologyEvent event) {
        json.beginObject().member("at", event.at().toString()).member("kind", event.kind())
                .member("primary", event.primary()).member("detail", event.detail()).endObject();
    }

    private static String first(Map<String, List<String>> parameters, String name) {
        List<String> values = parameters.get(name);
        return values == null || values.isEmpty() || values.get(0).isEmpty() ? null : values.get(0);
    }

    /** {@code ?force}, {@code ?force=true} and {@code ?force=1} all ask for it. */
    private static boolean isSet(Map<String, List<String>> parameters, String name) {
        List<String> values = parameters.get(name);
        return values != null && (values.isEmpty()
                || values.stream().anyMatch(v -> v.isEmpty() || v.equals("true") || v.equals("1")));
    }

    private static String error(String message) {
        return Json.writer().beginObject().member("error", message).endObject().toString();
    }
}
