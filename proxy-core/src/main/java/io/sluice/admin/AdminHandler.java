package io.sluice.admin;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.timeout.ReadTimeoutException;
import io.sluice.BackendSnapshot;
import io.sluice.ReloadResult;
import io.sluice.Sluice;
import io.sluice.balancer.BackendState;
import io.sluice.balancer.CheckResult;
import io.sluice.capture.CaptureEndpoints;
import io.sluice.config.ConfigException;
import io.sluice.frontend.SessionSnapshot;
import io.sluice.metrics.SluiceMetrics;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Routes one admin request. The request is released by {@link SimpleChannelInboundHandler}; every response is a
 * {@link FullHttpResponse} that Netty releases once written.
 */
final class AdminHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
    private static final Logger log = LoggerFactory.getLogger(AdminHandler.class);

    private static final String JSON = "application/json; charset=utf-8";
    private static final String TEXT = "text/plain; charset=utf-8";
    private static final String BACKENDS = "/api/backends";

    private final Sluice sluice;
    private final byte[] token;

    /** @param token the bearer token POST calls need, or {@code null}: POST calls are refused */
    AdminHandler(Sluice sluice, String token) {
        this.sluice = sluice;
        this.token = token == null ? null : token.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
        if (request.decoderResult().isFailure()) {
            send(ctx, request, HttpResponseStatus.BAD_REQUEST, error("bad request: "
                    + request.decoderResult().cause().getMessage()), JSON, false);
            return;
        }
        Reply reply;
        try {
            reply = route(request);
        } catch (RuntimeException e) {
            log.warn("admin {} {} failed", request.method(), request.uri(), e);
            reply = new Reply(HttpResponseStatus.INTERNAL_SERVER_ERROR, error(e.toString()), JSON);
        }
        send(ctx, request, reply.status(), reply.body(), reply.contentType(), HttpUtil.isKeepAlive(request));
    }

    private record Reply(HttpResponseStatus status, String body, String contentType) {
        static Reply json(HttpResponseStatus status, String body) {
            return new Reply(status, body, JSON);
        }
    }

    private Reply route(FullHttpRequest request) {
        QueryStringDecoder uri = new QueryStringDecoder(request.uri());
        String path = uri.path();
        HttpMethod method = request.method();
        if (path.equals("/metrics")) {
            if (!method.equals(HttpMethod.GET)) {
                return notAllowed("GET");
            }
            SluiceMetrics metrics = sluice.metrics();
            if (metrics == null) {
                return Reply.json(HttpResponseStatus.NOT_FOUND, error("metrics are disabled (metrics.enabled: false)"));
            }
            return new Reply(HttpResponseStatus.OK, metrics.scrape(), SluiceMetrics.contentType());
        }
        if (path.equals("/health")) {
            if (!method.equals(HttpMethod.GET)) {
                return notAllowed("GET");
            }
            boolean draining = sluice.isDraining();
            String body = new Json().beginObject().member("status", draining ? "draining" : "serving")
                    .member("clientConnections", sluice.clientConnections()).endObject().toString();
            return Reply.json(draining ? HttpResponseStatus.SERVICE_UNAVAILABLE : HttpResponseStatus.OK, body);
        }
        if (path.equals(BACKENDS)) {
            if (!method.equals(HttpMethod.GET)) {
                return notAllowed("GET");
            }
            Json json = new Json().beginArray();
            for (BackendSnapshot backend : sluice.backends()) {
                backend(json, backend);
            }
            return Reply.json(HttpResponseStatus.OK, json.endArray().toString());
        }
        if (path.startsWith(BACKENDS + "/") && (path.endsWith("/drain") || path.endsWith("/undrain"))) {
            if (!method.equals(HttpMethod.POST)) {
                return notAllowed("POST");
            }
            Reply denied = authorize(request);
            if (denied != null) {
                return denied;
            }
            boolean drain = path.endsWith("/drain");
            String name = QueryStringDecoder.decodeComponent(path.substring(BACKENDS.length() + 1,
                    path.lastIndexOf('/')));
            boolean found = drain ? sluice.drain(name) : sluice.undrain(name);
            if (!found) {
                return Reply.json(HttpResponseStatus.NOT_FOUND, error("no backend named '" + name + "'"));
            }
            log.info("admin API: {} backend {}", drain ? "drained" : "undrained", name);
            for (BackendSnapshot backend : sluice.backends()) {
                if (backend.state().name().equals(name)) {
                    return Reply.json(HttpResponseStatus.OK, backend(new Json(), backend).toString());
                }
            }
            return Reply.json(HttpResponseStatus.OK, "{}");
        }
        if (path.equals("/api/sessions")) {
            if (!method.equals(HttpMethod.GET)) {
                return notAllowed("GET");
            }
            return Reply.json(HttpResponseStatus.OK, sessions(isSet(uri.parameters().get("verbose"))));
        }
        if (path.equals("/api/config/reload")) {
            if (!method.equals(HttpMethod.POST)) {
                return notAllowed("POST");
            }
            Reply denied = authorize(request);
            if (denied != null) {
                return denied;
            }
            return reload();
        }
        if (CaptureEndpoints.handles(path)) {
            if (method.equals(HttpMethod.POST)) {
                Reply denied = authorize(request);
                if (denied != null) {
                    return denied;
                }
            }
            CaptureEndpoints.Response response = new CaptureEndpoints(sluice.trafficCapture())
                    .handle(method.name(), path, request.content().toString(StandardCharsets.UTF_8));
            return Reply.json(HttpResponseStatus.valueOf(response.status()), response.json());
        }
        return Reply.json(HttpResponseStatus.NOT_FOUND, error("no such endpoint: " + path + " (expected: /metrics,"
                + " /health, /api/backends, /api/backends/{name}/drain, /api/backends/{name}/undrain, /api/sessions,"
                + " /api/config/reload, /api/traffic/capture, /api/traffic/capture/start, /api/traffic/capture/stop)"));
    }

    private Reply reload() {
        ReloadResult result;
        try {
            result = sluice.reload();
        } catch (ConfigException e) {
            log.error("admin API: config reload refused, the running config stays: {}", e.getMessage());
            return Reply.json(HttpResponseStatus.BAD_REQUEST, error("reload refused, the running config stays: "
                    + e.getMessage()));
        } catch (IllegalStateException e) {
            return Reply.json(HttpResponseStatus.CONFLICT, error(e.getMessage()));
        }
        Json json = new Json().beginObject().name("changes").beginArray();
        result.changes().forEach(json::value);
        json.endArray().name("restartRequired").beginArray();
        result.restartRequired().forEach(json::value);
        return Reply.json(HttpResponseStatus.OK, json.endArray().endObject().toString());
    }

    /** {@code ?verbose}, {@code ?verbose=true} and {@code ?verbose=1} all ask for the list. */
    private static boolean isSet(List<String> values) {
        if (values == null) {
            return false;
        }
        return values.isEmpty() || values.stream().anyMatch(v -> v.isEmpty() || v.equals("true") || v.equals("1"));
    }

    private String sessions(boolean verbose) {
        Json json = new Json().beginObject().member("total", sluice.clientConnections());
        json.name("byBackend").beginObject();
        for (BackendSnapshot backend : sluice.backends()) {
            json.member(backend.state().name(), backend.state().activeSessions());
        }
        json.endObject();
        if (verbose) {
            List<SessionSnapshot> sessions = sluice.sessions();
            Map<String, Integer> byState = new TreeMap<>();
            Map<String, Integer> byPin = new TreeMap<>();
            json.name("sessions").beginArray();
            for (SessionSnapshot session : sessions) {
                byState.merge(session.state(), 1, Integer::sum);
                if (session.pinnedBy() != null) {
                    byPin.merge(session.pinnedBy(), 1, Integer::sum);
                }
                json.beginObject().member("id", session.id()).member("user", session.user())
                        .member("client", session.client()).member("backend", session.backend())
                        .member("schema", session.schema()).member("state", session.state())
                        .member("connectedAt", session.connectedAtMillis())
                        .member("pinnedBy", session.pinnedBy()).endObject();
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

    private static Json backend(Json json, BackendSnapshot backend) {
        BackendState state = backend.state();
        json.beginObject().member("name", state.name()).member("address", state.address())
                .member("status", state.status().name()).member("draining", state.draining())
                .member("weight", state.weight()).member("activeSessions", state.activeSessions())
                .member("totalSessions", state.totalSessions());
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

    /** {@code null} when the request carries the configured bearer token, else the refusal. */
    private Reply authorize(FullHttpRequest request) {
        if (token == null) {
            return Reply.json(HttpResponseStatus.FORBIDDEN,
                    error("mutating calls are disabled: set admin.token in config.yaml"));
        }
        String header = request.headers().get(HttpHeaderNames.AUTHORIZATION);
        String prefix = "Bearer ";
        boolean ok = header != null && header.regionMatches(true, 0, prefix, 0, prefix.length())
                // constant time: the comparison must not tell how much of a guess was right
                && MessageDigest.isEqual(token, header.substring(prefix.length()).trim()
                        .getBytes(StandardCharsets.UTF_8));
        if (!ok) {
            log.warn("admin API: {} {} refused: {} bearer token", request.method(), request.uri(),
                    header == null ? "no" : "wrong");
            return Reply.json(HttpResponseStatus.UNAUTHORIZED, error(header == null
                    ? "missing Authorization: Bearer <admin.token>" : "wrong token"));
        }
        return null;
    }

    private static Reply notAllowed(String allowed) {
        return new Reply(HttpResponseStatus.METHOD_NOT_ALLOWED, error("method not allowed (expected: " + allowed
                + ")"), JSON);
    }

    private static String error(String message) {
        return new Json().beginObject().member("error", message).endObject().toString();
    }

    private static void send(ChannelHandlerContext ctx, FullHttpRequest request, HttpResponseStatus status,
            String body, String contentType, boolean keepAlive) {
        ByteBuf content = ByteBufUtil.writeUtf8(ctx.alloc(), body);
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, content);
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, content.readableBytes())
                .set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_STORE);
        if (status == HttpResponseStatus.UNAUTHORIZED) {
            response.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer realm=\"sluice\"");
        }
        if (status == HttpResponseStatus.METHOD_NOT_ALLOWED) {
            response.headers().set(HttpHeaderNames.ALLOW, request.uri().startsWith("/api/config")
                    || request.uri().matches("/api/backends/.+")
                    || request.uri().startsWith(CaptureEndpoints.STATUS_PATH + "/") ? "POST" : "GET");
        }
        if (keepAlive) {
            HttpUtil.setKeepAlive(response, true);
            ctx.writeAndFlush(response, ctx.voidPromise());
        } else {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (!(cause instanceof ReadTimeoutException)) {
            log.debug("admin connection {}: {}", ctx.channel().remoteAddress(), cause.toString());
        }
        ctx.close();
    }
}
