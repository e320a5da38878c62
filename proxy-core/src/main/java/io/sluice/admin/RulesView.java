package io.sluice.admin;

import io.sluice.config.QueryRuleConfig;
import io.sluice.json.Json;
import io.sluice.rules.QueryRule;
import io.sluice.rules.QueryRules;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Map;

/**
 * {@code GET /api/rules}: the running query rules in order, with what each does and its counters (matched, acted,
 * errors); {@code GET /api/rules/explain?sql=...&user=...&schema=...&client=...}: which rule would act on a statement
 * and what it would do, as ProxySQL users read {@code stats_mysql_query_rules} and test a rule before they trust it.
 */
final class RulesView {

    private RulesView() {
    }

    /** The running rules as a JSON array. */
    static String json(QueryRules rules) {
        Json.Writer json = Json.writer().beginArray();
        int position = 0;
        for (QueryRule rule : rules.rules()) {
            json.beginObject().member("position", position++);
            describe(json, rule);
            QueryRule.Counters counters = rule.counters();
            json.member("matched", counters.matchedCount()).member("acted", counters.actedCount())
                    .member("errors", counters.errorCount());
            if (rule.concurrency() != null) {
                json.member("running", counters.runningCount()); // a maxConcurrency rule's permits in use
            }
            json.endObject();
        }
        return json.endArray().toString();
    }

    /** Why the explain parameters cannot be served, or {@code null}. */
    static String refusal(Map<String, List<String>> parameters) {
        String sql = first(parameters.get("sql"));
        if (sql == null || sql.isBlank()) {
            return "sql: missing (expected: ?sql=<statement>&user=<user>&schema=<schema>&client=<address>)";
        }
        String client = first(parameters.get("client"));
        if (client != null && address(client) == null) {
            return "client: " + client + " (expected: an IPv4 or IPv6 address in numbers)";
        }
        return null;
    }

    /** The explanation, as {@link #refusal} accepted the parameters. */
    static String explain(QueryRules rules, Map<String, List<String>> parameters) {
        String client = first(parameters.get("client"));
        QueryRules.Explanation explanation = rules.explain(first(parameters.get("sql")),
                first(parameters.get("user")), first(parameters.get("schema")),
                client == null ? null : address(client));
        Json.Writer json = Json.writer().beginObject().member("digest", explanation.digest().hash())
                .member("digestText", explanation.digest().text());
        QueryRule rule = explanation.rule();
        if (rule == null) {
            return json.name("rule").value((Object) null).member("does", "nothing: no rule matches; the statement"
                    + " runs as it would without rules").endObject().toString();
        }
        json.member("position", explanation.position());
        describe(json, rule);
        return json.member("does", does(rule.config())).endObject().toString();
    }

    private static void describe(Json.Writer json, QueryRule rule) {
        QueryRuleConfig config = rule.config();
        json.member("rule", config.name()).member("action", config.action().key());
        if (config.routeGroup() != null) {
            json.member("route", config.routeGroup()); // another group (decision 194)
        } else if (config.route() != null) {
            json.member("route", config.route().name());
        }
        if (config.limit() > 0) {
            json.member(config.action().key(), config.limit());
        }
        if (config.mirror() != null) {
            json.member("mirror", config.mirror());
        }
        if (config.block() != null) {
            json.name("block").beginObject().member("code", config.block().code())
                    .member("sqlState", config.block().sqlState()).member("message", config.block().message())
                    .endObject();
        }
        json.name("matchers").beginObject();
        if (config.digest() != null) {
            json.member("digest", config.digest());
        }
        if (config.pattern() != null) {
            json.member("pattern", config.pattern());
        }
        list(json, "user", config.users());
        list(json, "schema", config.schemas());
        list(json, "network", config.networks());
        list(json, "statementClass", config.statementClasses().stream().map(Enum::name).toList());
        json.endObject();
    }

    private static void list(Json.Writer json, String name, List<String> values) {
        if (!values.isEmpty()) {
            json.name(name).beginArray();
            values.forEach(json::value);
            json.endArray();
        }
    }

    private static String does(QueryRuleConfig config) {
        return switch (config.action()) {
            case BLOCK -> "refuses it with ERR " + config.block().code() + " (" + config.block().sqlState() + "): "
                    + config.block().message() + "; no server sees it";
            case ROUTE -> config.routeGroup() != null ? "runs it on " + config.routeGroup() + " (a read on one of"
                    + " its replicas, anything else on its primary) when its session holds no connection: outside a"
                    + " transaction, unpinned, in transaction pooling; else it runs where it would"
                    : "runs it on the " + (config.route() == QueryRuleConfig.Target.PRIMARY ? "primary"
                    : "replicas") + " of its read/write split group when it is a plain read (a write or a"
                    + " transaction's statement runs where it must)";
            case TIMEOUT -> "cancels it on the server (KILL QUERY) when it runs longer than " + config.limit()
                    + " ms; the client gets the server's ERR 1317";
            case MIRROR -> "runs it as it would, and a copy on " + config.mirror() + ", off the client's path, the"
                    + " copy's result discarded";
            default -> config.action().key();
        };
    }

    private static String first(List<String> values) {
        return values == null || values.isEmpty() ? null : values.get(0);
    }

    private static InetAddress address(String text) {
        if (!text.matches("[0-9a-fA-F:.]+")) {
            return null; // numbers only: nothing is resolved
        }
        try {
            return InetAddress.getByName(text);
        } catch (UnknownHostException e) {
            return null;
        }
    }
}
