package io.sluice.admin;

import io.sluice.api.BackendSnapshot;
import io.sluice.api.BuildInfo;
import io.sluice.api.ProxyControl;
import io.sluice.api.ReloadResult;
import io.sluice.api.SessionSnapshot;
import io.sluice.balancer.BackendState;
import io.sluice.balancer.BackendStatus;
import io.sluice.balancer.CheckResult;
import io.sluice.capture.CaptureEndpoints;
import io.sluice.capture.TrafficCapture;
import io.sluice.config.AdminConfig;
import io.sluice.config.ConfigException;
import io.sluice.json.Json;
import io.sluice.ops.metrics.SluiceMetrics;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Routes one admin request, on one of the admin server's threads. The JDK's HTTP server parses the request (and
 * answers 400 itself to one it cannot parse); this class reads a body of at most {@link AdminServer#MAX_REQUEST_BYTES}
 * and writes one complete response.
 *
 * <p>Who may do what:
 * <ul>
 *   <li>Probes, metrics, the version and the backends are open to anyone who reaches the port.
 *   <li>Reads that show sessions or configuration ({@code /api/sessions}, {@code /api/config}) need
 *       {@code admin.readToken} or {@code admin.token} once either is set; with neither, they are open on a loopback
 *       {@code admin.address} only.
 *   <li>Every {@code POST} needs {@code admin.token}, and runs one at a time in arrival order, so a drain never
 *       overtakes a reload; reads and probes never wait behind them.
 * </ul>
 */
final class AdminHandler implements AdminPort.Responder {
    private static final Logger log = LoggerFactory.getLogger(AdminHandler.class);

    static final String JSON = "application/json; charset=utf-8";
    private static final String BACKENDS = "/api/backends";

    private static final int OK = 200;
    private static final int BAD_REQUEST = 400;
    private static final int UNAUTHORIZED = 401;
    private static final int FORBIDDEN = 403;
    private static final int NOT_FOUND = 404;
    private static final int METHOD_NOT_ALLOWED = 405;
    private static final int CONFLICT = 409;
    private static final int PAYLOAD_TOO_LARGE = 413;
    private static final int INTERNAL_SERVER_ERROR = 500;
    private static final int SERVICE_UNAVAILABLE = 503;

    private final ProxyControl proxy;
    private final TrafficCapture capture;
    /** {@code null} when metrics are off. */
    private final SluiceMetrics metrics;
    /** The bearer token POST calls need, or {@code null}: POST calls are refused. */
    private final byte[] token;
    /** The bearer token that opens the reads of sessions and configuration only, or {@code null}. */
    private final byte[] readToken;
    /** Whether the sensitive reads are open without a token: no token is set and the port is on loopback. */
    private final boolean readsOpen;
    /** Held by every mutating call, so that they run one at a time whichever thread serves them. */
    private final Object mutations = new Object();

    AdminHandler(ProxyControl proxy, TrafficCapture capture, SluiceMetrics metrics, AdminConfig config) {
        this.proxy = proxy;
        this.capture = capture;
        this.metrics = metrics;
        this.token = bytes(config.token());
        this.readToken = bytes(config.readToken());
        this.readsOpen = !config.hasAnyToken() && config.isLoopback();
    }

    private static byte[] bytes(String secret) {
        return secret == null ? null : secret.getBytes(StandardCharsets.UTF_8);
    }

    /** What routing needs of a request. */
    private record Request(String method, String uri, String path, Map<String, List<String>> parameters,
            String authorization, String body) {
    }

    /** A whole request, read by {@link AdminPort} (which refuses bodies over the limit itself). */
    @Override
    public AdminPort.Response respond(String method, String target, String authorization, String body) {
        Reply reply;
        URI uri;
        try {
            uri = new URI(target);
        } catch (URISyntaxException e) {
            uri = null;
        }
        if (uri == null) {
            reply = Reply.json(400, error("request target: not a URI"));
        } else {
            try {
                reply = route(new Request(method, uri.toString(), decode(uri.getRawPath()),
                        parameters(uri.getRawQuery()), authorization, body));
            } catch (RuntimeException e) {
                log.warn("admin {} {} failed", method, uri, e);
                reply = Reply.json(INTERNAL_SERVER_ERROR, error(e.toString()));
            }
        }
        String header = reply.status() == UNAUTHORIZED ? "WWW-Authenticate: Bearer realm=\"sluice\""
                : reply.allow() != null ? "Allow: " + reply.allow() : null;
        return new AdminPort.Response(reply.status(), reply.contentType(),
                reply.body().getBytes(StandardCharsets.UTF_8), header);
    }

    /** A response; {@code allow} is the method a 405's path takes (the Allow header), else {@code null}. */
    private record Reply(int status, String body, String contentType, String allow) {
        static Reply json(int status, String body) {
            return new Reply(status, body, JSON, null);
        }
    }

    private Reply route(Request request) {
        String path = request.path();
        String method = request.method();
        if (path.equals("/metrics")) {
            if (!method.equals("GET")) {
                return notAllowed("GET");
            }
            if (metrics == null) {
                return Reply.json(NOT_FOUND, error("metrics are disabled (metrics.enabled: false)"));
            }
            return new Reply(OK, metrics.scrape(), SluiceMetrics.contentType(), null);
        }
        if (path.equals("/health")) {
            if (!method.equals("GET")) {
                return notAllowed("GET");
            }
            boolean draining = proxy.isDraining();
            String body = Json.writer().beginObject().member("status", draining ? "draining" : "serving")
                    .member("version", BuildInfo.version())
                    .member("clientConnections", proxy.clientConnections()).endObject().toString();
            return Reply.json(draining ? SERVICE_UNAVAILABLE : OK, body);
        }
        if (path.equals("/livez")) {
            if (!method.equals("GET")) {
                return notAllowed("GET");
            }
            // Alive as long as this thread answers: draining and backends down are no reason to restart Sluice, and a
            // liveness probe that failed during a drain would kill the sessions the drain is waiting for.
            return Reply.json(OK, Json.writer().beginObject().member("status", "alive").endObject().toString());
        }
        if (path.equals("/readyz")) {
            if (!method.equals("GET")) {
                return notAllowed("GET");
            }
            return readiness();
        }
        if (path.equals("/api/version")) {
            if (!method.equals("GET")) {
                return notAllowed("GET");
            }
            return Reply.json(OK, Json.writer().beginObject().member("version", BuildInfo.version())
                    .member("java", BuildInfo.javaVersion()).endObject().toString());
        }
        if (path.equals("/api/config")) {
            if (!method.equals("GET")) {
                return notAllowed("GET");
            }
            Reply denied = authorizeRead(request);
            return denied != null ? denied : Reply.json(OK, ConfigView.json(proxy.config()));
        }
        if (path.equals(BACKENDS)) {
            if (!method.equals("GET")) {
                return notAllowed("GET");
            }
            Json.Writer json = Json.writer().beginArray();
            List<BackendSnapshot> backends = proxy.backends();
            Map<String, SessionsStaying> staying = sessionsStaying(backends);
            for (BackendSnapshot backend : backends) {
                backend(json, backend, staying);
            }
            return Reply.json(OK, json.endArray().toString());
        }
        if (path.startsWith(BACKENDS + "/") && (path.endsWith("/drain") || path.endsWith("/undrain"))) {
            if (!method.equals("POST")) {
                return notAllowed("POST");
            }
            Reply denied = authorize(request);
            if (denied != null) {
                return denied;
            }
            boolean drain = path.endsWith("/drain");
            String name = decode(path.substring(BACKENDS.length() + 1,
                    path.lastIndexOf('/')));
            boolean found;
            synchronized (mutations) {
                found = drain ? proxy.drain(name) : proxy.undrain(name);
            }
            if (!found) {
                return Reply.json(NOT_FOUND, error("no backend named '" + name + "'"));
            }
            log.info("admin API: {} backend {}", drain ? "drained" : "undrained", name);
            List<BackendSnapshot> backends = proxy.backends();
            for (BackendSnapshot backend : backends) {
                if (backend.state().name().equals(name)) {
                    return Reply.json(OK, backend(Json.writer(), backend, sessionsStaying(backends)).toString());
                }
            }
            return Reply.json(OK, "{}");
        }
        if (path.equals("/api/sessions")) {
            if (!method.equals("GET")) {
                return notAllowed("GET");
            }
            Reply denied = authorizeRead(request);
            return denied != null ? denied : Reply.json(OK, sessions(isSet(request.parameters().get("verbose"))));
        }
        if (path.equals("/api/readwrite/route")) {
            List<String> sql = request.parameters().get("sql");
            return !method.equals("GET") ? notAllowed("GET") : sql == null || sql.get(0).isBlank()
                    ? Reply.json(BAD_REQUEST, error("sql: missing (expected: ?sql=<statement>)"))
                    : Reply.json(OK, RouteExplanation.json(sql.get(0)));
        }
        if (path.equals("/api/config/reload")) {
            if (!method.equals("POST")) {
                return notAllowed("POST");
            }
            Reply denied = authorize(request);
            if (denied != null) {
                return denied;
            }
            synchronized (mutations) {
                return reload();
            }
        }
        if (path.equals("/api/digests") || path.equals("/api/digests/reset")) {
            return digests(request);
        }
        if (path.equals("/api/rules/allowlist")) {
            Reply denied = method.equals("GET") ? authorizeRead(request) : notAllowed("GET");
            return denied != null ? denied : Reply.json(OK, AllowListView.json(proxy.queryRules()));
        }
        if (path.equals("/api/rules") || path.equals("/api/rules/explain")) {
            Reply denied = method.equals("GET") ? authorizeRead(request) : notAllowed("GET");
            String refusal = denied != null || path.equals("/api/rules") ? null
                    : RulesView.refusal(request.parameters());
            return denied != null ? denied : refusal != null ? Reply.json(BAD_REQUEST, error(refusal))
                    : Reply.json(OK, path.equals("/api/rules") ? RulesView.json(proxy.queryRules())
                            : RulesView.explain(proxy.queryRules(), request.parameters()));
        }
        if (GroupEndpoints.handles(path)) {
            Reply denied = GroupEndpoints.changes(path) && method.equals("POST") ? authorize(request)
                    : authorizeRead(request);
            if (denied != null) {
                return denied;
            }
            GroupEndpoints.Response response = new GroupEndpoints(proxy).handle(method, path, request.parameters());
            return new Reply(response.status(), response.json(), JSON, response.allow());
        }
        if (CaptureEndpoints.handles(path)) {
            CaptureEndpoints.Response response;
            if (method.equals("POST")) {
                Reply denied = authorize(request);
                if (denied != null) {
                    return denied;
                }
                synchronized (mutations) {
                    response = new CaptureEndpoints(capture).handle(method, path, request.body());
                }
            } else {
                response = new CaptureEndpoints(capture).handle(method, path, request.body());
            }
            return new Reply(response.status(), response.json(), JSON, response.allow());
        }
        return Reply.json(NOT_FOUND, error("no such endpoint: " + path + " (expected: /metrics, /health, /livez,"
                + " /readyz, /api/version, /api/config, /api/backends, /api/backends/{name}/drain,"
                + " /api/backends/{name}/undrain, /api/sessions, /api/readwrite/route, /api/config/reload,"
                + " /api/digests, /api/digests/reset, /api/rules, /api/rules/explain,"
                + " /api/groups, /api/groups/{group}, /api/groups/{group}/events, /api/groups/{group}/switchover,"
                + " /api/groups/{group}/rejoin,"
                + " /api/traffic/capture, /api/traffic/capture/start, /api/traffic/capture/stop)"));
    }

    /** {@code GET /api/digests} (a read, as sessions) and {@code POST /api/digests/reset} (a mutation). */
    private Reply digests(Request request) {
        boolean reset = request.path().endsWith("/reset");
        if (!request.method().equals(reset ? "POST" : "GET")) {
            return notAllowed(reset ? "POST" : "GET");
        }
        Reply denied = reset ? authorize(request) : authorizeRead(request);
        if (denied != null) {
            return denied;
        }
        var statistics = proxy.statistics();
        if (statistics == null) {
            return Reply.json(NOT_FOUND, error("statement statistics are off (statistics.enabled: false)"));
        }
        if (reset) {
            synchronized (mutations) {
                log.info("admin API: statement statistics reset");
                return Reply.json(OK, DigestsView.reset(statistics));
            }
        }
        String orderBy = DigestsView.first(request.parameters().get("orderBy"));
        String limit = DigestsView.first(request.parameters().get("limit"));
        String refusal = DigestsView.refusal(orderBy, limit);
        return refusal != null ? Reply.json(BAD_REQUEST, error(refusal))
                : Reply.json(OK, DigestsView.json(statistics, orderBy, limit));
    }

    /**
     * Ready to take new clients: not draining, and at least one backend up with a weight above 0, so that a login now
     * would find a server. Not ready answers 503, which takes the instance out of a Kubernetes Service or a balancer
     * without restarting it.
     */
    private Reply readiness() {
        boolean draining = proxy.isDraining();
        int up = 0;
        int total = 0;
        for (BackendSnapshot backend : proxy.backends()) {
            total++;
            BackendState state = backend.state();
            if (state.status() == BackendStatus.UP && state.weight() > 0) {
                up++;
            }
        }
        boolean ready = !draining && up > 0;
        String status = ready ? "ready" : draining ? "draining" : "no backend up";
        String body = Json.writer().beginObject().member("status", status).member("backendsUp", up)
                .member("backends", total).endObject().toString();
        return Reply.json(ready ? OK : SERVICE_UNAVAILABLE, body);
    }

    private Reply reload() {
        ReloadResult result;
        try {
            result = proxy.reload();
        } catch (ConfigException e) {
            log.error("admin API: config reload refused, the running config stays: {}", e.getMessage());
            return Reply.json(BAD_REQUEST, error("reload refused, the running config stays: "
                    + e.getMessage()));
        } catch (IllegalStateException e) {
            return Reply.json(CONFLICT, error(e.getMessage()));
        }
        Json.Writer json = Json.writer().beginObject().name("changes").beginArray();
        result.changes().forEach(json::value);
        json.endArray().name("restartRequired").beginArray();
        result.restartRequired().forEach(json::value);
        return Reply.json(OK, json.endArray().endObject().toString());
    }

    /** {@code ?verbose}, {@code ?verbose=true} and {@code ?verbose=1} all ask for the list. */
    private static boolean isSet(List<String> values) {
        if (values == null) {
            return false;
        }
        return values.isEmpty() || values.stream().anyMatch(v -> v.isEmpty() || v.equals("true") || v.equals("1"));
    }

    private String sessions(boolean verbose) {
        Json.Writer json = Json.writer().beginObject().member("total", proxy.clientConnections());
        json.name("byBackend").beginObject();
        for (BackendSnapshot backend : proxy.backends()) {
            json.member(backend.state().name(), backend.state().activeSessions());
        }
        json.endObject();
        if (verbose) {
            List<SessionSnapshot> sessions = proxy.sessions();
            Map<String, Integer> byState = new TreeMap<>();
            Map<String, Integer> byPin = new TreeMap<>();
            json.name("sessions").beginArray();
            for (SessionSnapshot session : sessions) {
                byState.merge(session.state(), 1, Integer::sum);
                if (session.pinnedBy() != null) {
                    byPin.merge(session.pinnedBy(), 1, Integer::sum);
                }
                json.beginObject().member("id", session.id()).member("user", session.user())
                        .member("account", session.account()).member("client", session.client()).member("backend", session.backend())
                        .member("schema", session.schema()).member("state", session.state())
                        .member("connectedAt", session.connectedAtMillis())
                        .member("pinnedBy", session.pinnedBy()).member("moves", session.moves())
                        .member("moveWaiting", session.moveWaiting()).endObject();
            }
            json.endArray().name("byState").beginObject();
            byState.forEach(json::member);
            json.endObject();
            // Transaction pooling: why sessions keep their backend connection between transactions.
            json.name("byPinReason").beginObject();
            byPin.forEach(json::member);
            json.endObject();
        }
        return json.endObject().toString();
    }

    /**
     * Of a drained or down backend's sessions, those asked to move that have not left yet, and those held by
     * something that cannot move (a drain's "how many are still pinned here").
     */
    private static final class SessionsStaying {
        int toMove;
        int pinned;
    }

    /**
     * Counted only while a backend is out of rotation: the count asks every session on its event loop, as
     * {@code /api/sessions} does, which a poll of {@code /api/backends} should not pay otherwise.
     */
    private Map<String, SessionsStaying> sessionsStaying(List<BackendSnapshot> backends) {
        Map<String, SessionsStaying> staying = new HashMap<>();
        if (backends.stream().allMatch(b -> b.state().status() == BackendStatus.UP)) {
            return staying;
        }
        for (SessionSnapshot session : proxy.sessions()) {
            if (session.backend() != null && (session.moveWaiting() != null || session.pinnedBy() != null)) {
                SessionsStaying counts = staying.computeIfAbsent(session.backend(), name -> new SessionsStaying());
                counts.toMove += session.moveWaiting() != null ? 1 : 0;
                counts.pinned += session.pinnedBy() != null ? 1 : 0;
            }
        }
        return staying;
    }

    private static Json.Writer backend(Json.Writer json, BackendSnapshot backend,
            Map<String, SessionsStaying> staying) {
        BackendState state = backend.state();
        json.beginObject().member("name", state.name()).member("address", state.address())
                .member("status", state.status().name()).member("draining", state.draining())
                .member("weight", state.weight()).member("activeSessions", state.activeSessions())
                .member("totalSessions", state.totalSessions());
        if (state.status() != BackendStatus.UP) {
            SessionsStaying here = staying.getOrDefault(state.name(), new SessionsStaying());
            json.member("sessionsToMove", here.toMove).member("sessionsPinned", here.pinned);
        }
        CheckResult check = state.lastCheck();
        json.name("lastCheck");
        if (check == null) {
            json.value((String) null);
        } else {
            json.beginObject().member("ok", check.ok()).name("latencyMillis").value(check.latencyMillis())
                    .member("at", check.atEpochMillis()).member("detail", check.detail()).endObject();
        }
        json.member("consecutiveSuccesses", state.consecutiveSuccesses())
                .member("consecutiveFailures", state.consecutiveFailures());
        json.name("pool").beginObject().member("open", backend.openConnections())
                .member("active", backend.activeConnections()).member("idle", backend.idleConnections())
                .member("pending", backend.pendingAcquires()).member("max", backend.maxPoolSize())
                .member("created", backend.createdConnections()).member("closed", backend.closedConnections())
                .member("errors", backend.connectionErrors()).endObject();
        return json.endObject();
    }

    /**
     * {@code null} when the request may read sessions or configuration: it carries the read or the write token, or
     * neither is configured and the port is on loopback. Else the refusal.
     */
    private Reply authorizeRead(Request request) {
        if (readsOpen) {
            return null;
        }
        if (token == null && readToken == null) {
            return Reply.json(FORBIDDEN, error(request.path() + " shows sessions or configuration: on a"
                    + " non-loopback admin.address it needs admin.readToken or admin.token in config.yaml"));
        }
        String header = request.authorization();
        byte[] presented = bearer(header);
        boolean ok = presented != null && (matches(token, presented) | matches(readToken, presented));
        if (!ok) {
            log.warn("admin API: {} {} refused: {} bearer token", request.method(), request.uri(),
                    header == null ? "no" : "wrong");
            return Reply.json(UNAUTHORIZED, error(header == null
                    ? "missing Authorization: Bearer <admin.readToken or admin.token>" : "wrong token"));
        }
        return null;
    }

    /** The token of an {@code Authorization: Bearer <token>} header, or {@code null} without one. */
    private static byte[] bearer(String header) {
        String prefix = "Bearer ";
        if (header == null || !header.regionMatches(true, 0, prefix, 0, prefix.length())) {
            return null;
        }
        return header.substring(prefix.length()).trim().getBytes(StandardCharsets.UTF_8);
    }

    /** Constant time: the comparison must not tell how much of a guess was right. */
    private static boolean matches(byte[] expected, byte[] presented) {
        return expected != null && MessageDigest.isEqual(expected, presented);
    }

    /** {@code null} when the request carries the configured bearer token, else the refusal. */
    private Reply authorize(Request request) {
        if (token == null) {
            return Reply.json(FORBIDDEN, error("mutating calls are disabled: set admin.token in config.yaml"));
        }
        String header = request.authorization();
        byte[] presented = bearer(header);
        boolean ok = presented != null && matches(token, presented); // the read token never opens a POST
        if (!ok) {
            log.warn("admin API: {} {} refused: {} bearer token", request.method(), request.uri(),
                    header == null ? "no" : "wrong");
            return Reply.json(UNAUTHORIZED, error(header == null
                    ? "missing Authorization: Bearer <admin.token>" : "wrong token"));
        }
        return null;
    }

    private static Reply notAllowed(String allowed) {
        return new Reply(METHOD_NOT_ALLOWED, error("method not allowed (expected: " + allowed + ")"), JSON, allowed);
    }

    static String error(String message) {
        return Json.writer().beginObject().member("error", message).endObject().toString();
    }

    private static String decode(String component) {
        return component == null ? "" : URLDecoder.decode(component, StandardCharsets.UTF_8);
    }

    /** {@code a=1&b&a=2} as {a: [1, 2], b: [""]}. */
    private static Map<String, List<String>> parameters(String rawQuery) {
        Map<String, List<String>> parameters = new HashMap<>();
        if (rawQuery == null || rawQuery.isEmpty()) {
            return parameters;
        }
        for (String pair : rawQuery.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String name = decode(eq < 0 ? pair : pair.substring(0, eq));
            String value = eq < 0 ? "" : decode(pair.substring(eq + 1));
            parameters.computeIfAbsent(name, n -> new ArrayList<>()).add(value);
        }
        return parameters;
    }
}
