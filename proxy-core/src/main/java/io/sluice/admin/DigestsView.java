package io.sluice.admin;

import io.sluice.json.Json;
import io.sluice.statistics.DigestOrder;
import io.sluice.statistics.DigestStatistics;
import io.sluice.statistics.DigestSummary;
import java.util.List;

/**
 * {@code GET /api/digests?orderBy=totalTime&limit=20}: statement statistics by digest as a JSON array, the largest
 * first, as ProxySQL's {@code stats_mysql_query_digest} reads; {@code POST /api/digests/reset} empties them.
 */
final class DigestsView {

    /** Rows returned without {@code limit}. */
    static final int DEFAULT_LIMIT = 20;
    /** The most rows one call returns. */
    static final int MAX_LIMIT = 10_000;

    private DigestsView() {
    }

    /** Why {@code orderBy} or {@code limit} cannot be served, or {@code null} when they can. */
    static String refusal(String orderBy, String limit) {
        if (orderBy != null && DigestOrder.of(orderBy) == null) {
            return "orderBy: " + orderBy + " (expected: one of " + DigestOrder.keys() + ")";
        }
        if (limit != null) {
            try {
                int n = Integer.parseInt(limit);
                if (n < 1 || n > MAX_LIMIT) {
                    return "limit: " + limit + " (expected: 1.." + MAX_LIMIT + ")";
                }
            } catch (NumberFormatException e) {
                return "limit: " + limit + " (expected: 1.." + MAX_LIMIT + ")";
            }
        }
        return null;
    }

    /** The rows, as {@link #refusal} accepted the parameters ({@code null}: their defaults). */
    static String json(DigestStatistics statistics, String orderBy, String limit) {
        DigestOrder order = orderBy == null ? DigestOrder.TOTAL_TIME : DigestOrder.of(orderBy);
        int n = limit == null ? DEFAULT_LIMIT : Integer.parseInt(limit);
        List<DigestSummary> rows = statistics.top(order, n);
        Json.Writer json = Json.writer().beginArray();
        for (DigestSummary row : rows) {
            json.beginObject().member("digest", row.digest()).member("digestText", row.digestText())
                    .member("user", row.user()).member("schema", row.schema()).member("group", row.group())
                    .member("count", row.count()).member("errors", row.errors()).member("warnings", row.warnings())
                    .member("rowsSent", row.rowsSent()).member("rowsAffected", row.rowsAffected())
                    .member("totalMicros", row.totalMicros()).member("avgMicros", row.avgMicros())
                    .member("minMicros", row.minMicros()).member("maxMicros", row.maxMicros())
                    .member("p50Micros", row.p50Micros()).member("p95Micros", row.p95Micros())
                    .member("p99Micros", row.p99Micros()).member("firstSeen", row.firstSeenMillis())
                    .member("lastSeen", row.lastSeenMillis()).member("primary", row.primary())
                    .member("replica", row.replica()).member("pins", row.pins()).endObject();
        }
        return json.endArray().toString();
    }

    /** What {@code POST /api/digests/reset} answers: the rows and memory left (none). */
    static String reset(DigestStatistics statistics) {
        statistics.reset();
        return Json.writer().beginObject().member("reset", true).member("entries", statistics.entries())
                .member("memoryBytes", statistics.memoryBytes()).endObject().toString();
    }

    /** The first value of a parameter, or {@code null}. */
    static String first(List<String> values) {
        return values == null || values.isEmpty() ? null : values.get(0);
    }
}
