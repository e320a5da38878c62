package io.sluice.statistics;

import java.util.Comparator;
import java.util.Locale;

/** How {@code /api/digests?orderBy=} and {@code sluice-ctl top} sort: the largest first. */
public enum DigestOrder {
    TOTAL_TIME("totalTime", Comparator.comparingLong(DigestSummary::totalMicros)),
    COUNT("count", Comparator.comparingLong(DigestSummary::count)),
    ERRORS("errors", Comparator.comparingLong(DigestSummary::errors)),
    AVG_TIME("avgTime", Comparator.comparingLong(DigestSummary::avgMicros)),
    MAX_TIME("maxTime", Comparator.comparingLong(DigestSummary::maxMicros)),
    P99("p99", Comparator.comparingLong(DigestSummary::p99Micros)),
    ROWS_SENT("rowsSent", Comparator.comparingLong(DigestSummary::rowsSent)),
    ROWS_AFFECTED("rowsAffected", Comparator.comparingLong(DigestSummary::rowsAffected)),
    WARNINGS("warnings", Comparator.comparingLong(DigestSummary::warnings)),
    LAST_SEEN("lastSeen", Comparator.comparingLong(DigestSummary::lastSeenMillis));

    private final String key;
    private final Comparator<DigestSummary> largestFirst;

    DigestOrder(String key, Comparator<DigestSummary> ascending) {
        this.key = key;
        this.largestFirst = ascending.reversed().thenComparing(DigestSummary::digest)
                .thenComparing(DigestSummary::user).thenComparing(DigestSummary::schema);
    }

    /** The name the API takes: {@code totalTime}, {@code count}... */
    public String key() {
        return key;
    }

    Comparator<DigestSummary> comparator() {
        return largestFirst;
    }

    /**
     * The order named {@code key}, in any case, or {@code null} when none is.
     */
    public static DigestOrder of(String key) {
        for (DigestOrder order : values()) {
            if (order.key.toLowerCase(Locale.ROOT).equals(key.toLowerCase(Locale.ROOT))) {
                return order;
            }
        }
        return null;
    }

    /** Every name, for an error message. */
    public static String keys() {
        StringBuilder all = new StringBuilder();
        for (DigestOrder order : values()) {
            all.append(all.length() == 0 ? "" : ", ").append(order.key);
        }
        return all.toString();
    }
}
