package io.sluice.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** Talks to Sluice's admin API over real HTTP, as curl or Prometheus would. */
public final class AdminClient {
    private final String base;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    public AdminClient(String host, int port) {
        this.base = "http://" + host + ":" + port;
    }

    /** A response: status, body and the value of one header asked for. */
    public record Response(int status, String body, HttpResponse<String> raw) {
        public String header(String name) {
            return raw.headers().firstValue(name).orElse(null);
        }
    }

    public Response get(String path) {
        return get(path, null);
    }

    /** A GET with {@code Authorization: Bearer token}, or none when {@code token} is null. */
    public Response get(String path, String token) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path)).GET();
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        return send(request);
    }

    /** A POST with {@code Authorization: Bearer token}, or none when {@code token} is null. */
    public Response post(String path, String token) {
        return post(path, token, null);
    }

    /** A POST of a JSON {@code body} (none when null) with {@code Authorization: Bearer token}. */
    public Response post(String path, String token, String body) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path))
                .POST(body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
                .header("Content-Type", "application/json");
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        return send(request);
    }

    /** {@code GET /metrics}, parsed. */
    public PrometheusText scrape() {
        Response response = get("/metrics");
        if (response.status() != 200) {
            throw new AssertionError("/metrics answered " + response.status() + ": " + response.body());
        }
        return PrometheusText.parse(response.body());
    }

    private Response send(HttpRequest.Builder request) {
        try {
            HttpResponse<String> response = http.send(request.timeout(Duration.ofSeconds(30)).build(),
                    HttpResponse.BodyHandlers.ofString());
            return new Response(response.statusCode(), response.body(), response);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
