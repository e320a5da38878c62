package io.sluice.admin;

import io.sluice.json.Json;
import io.sluice.readwrite.RouteReason;
import io.sluice.readwrite.StatementClassifier;

/**
 * {@code GET /api/readwrite/route?sql=...}: where a read/write split session would send a statement, and why, as
 * the classifier reads it on its own (outside a transaction; inside one every statement goes where the transaction
 * began). For operators checking a query before they rely on the split, and for hints.
 */
final class RouteExplanation {

    private RouteExplanation() {
    }

    static String json(String sql) {
        int statementClass = StatementClassifier.classify(sql);
        RouteReason reason = StatementClassifier.reason(statementClass);
        return Json.writer().beginObject().member("sql", sql).member("route", reason.route().name().toLowerCase(
                java.util.Locale.ROOT)).member("reason", reason.label())
                .member("transaction", StatementClassifier.transaction(statementClass).name()
                        .toLowerCase(java.util.Locale.ROOT))
                .endObject().toString();
    }
}
