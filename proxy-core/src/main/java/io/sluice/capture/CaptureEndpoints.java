package io.sluice.capture;

import io.sluice.json.Json;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The admin API's traffic-capture routes, independent of any HTTP server: an admin server hands each request's
 * method, path and body to {@link #handle} and sends back the status code and JSON it returns.
 *
 * <ul>
 *   <li>{@code POST /api/traffic/capture/start} with {@code {"output": DIR, "duration": "10m", "compress": true}}:
 *       200 and the status; 400 for bad options, 409 when a capture runs or DIR holds one, 507 when DIR cannot be
 *       written or lacks free space.
 *   <li>{@code POST /api/traffic/capture/stop}: 200 and the final status; 409 when none runs.
 *   <li>{@code GET /api/traffic/capture}: 200 and the status.
 * </ul>
 * Errors are {@code {"error": "..."}}. Other methods on these paths get 405; other paths under
 * {@code /api/traffic/} get 404.
 */
public final class CaptureEndpoints {
    public static final String STATUS_PATH = "/api/traffic/capture";
    public static final String START_PATH = "/api/traffic/capture/start";
    public static final String STOP_PATH = "/api/traffic/capture/stop";

    private final TrafficCapture capture;

    public CaptureEndpoints(TrafficCapture capture) {
        this.capture = capture;
    }

    /**
     * What to send back: an HTTP status code, a JSON body, and for a 405 the method the path takes (the HTTP
     * {@code Allow} header), else {@code null}.
     */
    public record Response(int status, String json, String allow) {
        public Response(int status, String json) {
            this(status, json, null);
        }
    }

    /** Whether {@code path} is one of these routes (an admin server may dispatch on it). */
    public static boolean handles(String path) {
        String p = stripQuery(path);
        return p.equals(STATUS_PATH) || p.equals(START_PATH) || p.equals(STOP_PATH);
    }

    /**
     * Serves one request.
     *
     * @param body the request body, {@code null} or empty for none
     */
    public Response handle(String method, String path, String body) {
        String p = stripQuery(path);
        try {
            switch (p) {
                case START_PATH:
                    if (!"POST".equals(method)) {
                        return methodNotAllowed("POST");
                    }
                    return ok(capture.start(CaptureOptions.fromJson(body)));
                case STOP_PATH:
                    if (!"POST".equals(method)) {
                        return methodNotAllowed("POST");
                    }
                    return ok(capture.stop());
                case STATUS_PATH:
                    if (!"GET".equals(method)) {
                        return methodNotAllowed("GET");
                    }
                    return ok(capture.status());
                default:
                    return error(404, "no such resource: " + p);
            }
        } catch (CaptureException e) {
            int status = switch (e.kind()) {
                case INVALID -> 400;
                case CONFLICT -> 409;
                case STORAGE -> 507;
            };
            return error(status, e.getMessage());
        }
    }

    private static Response ok(CaptureStatus status) {
        return new Response(200, Json.write(status.toJson()));
    }

    private static Response methodNotAllowed(String allowed) {
        return new Response(405, errorJson("method not allowed (expected: " + allowed + ")"), allowed);
    }

    private static Response error(int status, String message) {
        return new Response(status, errorJson(message));
    }

    private static String errorJson(String message) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("error", message);
        return Json.write(json);
    }

    private static String stripQuery(String path) {
        int q = path.indexOf('?');
        return q < 0 ? path : path.substring(0, q);
    }
}
