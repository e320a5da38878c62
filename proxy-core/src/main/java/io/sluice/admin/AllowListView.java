package io.sluice.admin;

import io.sluice.config.AllowListConfig;
import io.sluice.json.Json;
import io.sluice.rules.QueryRules;

/**
 * {@code GET /api/rules/allowlist}: the running allow-list (decision 188), its mode and the number of digests of each
 * user it names, and the statement shapes it found outside itself since it started, most frequent first: in
 * {@code DRY_RUN} those it would have refused, in {@code ENFORCE} those it refused.
 */
final class AllowListView {

    private AllowListView() {
    }

    static String json(QueryRules rules) {
        AllowListConfig config = rules.allowListConfig();
        Json.Writer json = Json.writer().beginObject();
        if (config == null) {
            return json.name("mode").value((Object) null).endObject().toString();
        }
        json.member("mode", config.mode().name()).name("users").beginObject();
        config.users().forEach((user, digests) -> json.member(user, digests.size()));
        json.endObject().name("outside").beginArray();
        rules.outsideAllowList().stream()
                .sorted((a, b) -> Long.compare(b.count(), a.count()))
                .forEach(shape -> json.beginObject().member("user", shape.user()).member("digest", shape.digest())
                        .member("digestText", shape.digestText()).member("count", shape.count()).endObject());
        return json.endArray().endObject().toString();
    }
}
