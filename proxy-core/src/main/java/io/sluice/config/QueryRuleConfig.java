package io.sluice.config;

import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * One rule of config.yaml's {@code !QUERY_RULES} list (issue #41): what statements it matches and the one thing it
 * does to them. Every matcher given must hold (an absent one holds for all); a list matcher holds when any of its
 * values does. Rules are tried in file order and the first that matches acts (decision 165).
 *
 * @param name the rule's name: errors, counters and {@code /api/rules} use it
 * @param digest the digest hash (16 hex digits, as {@code /api/digests} shows it) the statement must have, or
 *     {@code null}
 * @param pattern a regular expression found anywhere in the digest text, case-insensitive, or {@code null}
 * @param users the client users it is for; empty: any
 * @param schemas the default schemas it is for; empty: any
 * @param networks the client networks (CIDR, such as {@code 10.0.0.0/8}) it is for; empty: any
 * @param statementClasses the statement classes it is for; empty: any
 * @param action what it does
 * @param route where {@link Action#ROUTE} sends the statement, else {@code null}; {@link Target#GROUP}: to
 *     {@code routeGroup}
 * @param block what {@link Action#BLOCK} answers, else {@code null}
 * @param limit the number of the numeric actions ({@code timeoutMilliseconds: 500}); 0 for the others
 * @param mirror the data source or read/write split group {@link Action#MIRROR} copies statements to, else
 *     {@code null}
 * @param maxWait how long a statement {@link Action#MAX_PER_SECOND} or {@link Action#MAX_CONCURRENCY} holds back may wait for its turn before it is
 *     refused, in milliseconds
 * @param routeGroup the read/write split group or data source a {@link Target#GROUP} route sends statements to, else
 *     {@code null} (decision 194)
 */
public record QueryRuleConfig(String name, String digest, String pattern, List<String> users, List<String> schemas,
        List<String> networks, List<StatementClass> statementClasses, Action action, Target route, Block block,
        long limit, String mirror, long maxWait, String routeGroup) {

    /** How long a statement a rate holds back waits by default before it is refused: one second. */
    public static final long DEFAULT_MAX_WAIT = 1000;

    /** A rule that routes to no other group. */
    public QueryRuleConfig(String name, String digest, String pattern, List<String> users, List<String> schemas,
            List<String> networks, List<StatementClass> statementClasses, Action action, Target route, Block block,
            long limit, String mirror, long maxWait) {
        this(name, digest, pattern, users, schemas, networks, statementClasses, action, route, block, limit, mirror,
                maxWait, null);
    }

    /** A {@code route} rule to another group: a read/write split group or a data source (decision 194). */
    public static QueryRuleConfig routeTo(String name, String digest, String pattern, List<String> users,
            List<String> schemas, List<String> networks, List<StatementClass> statementClasses, String group) {
        return new QueryRuleConfig(name, digest, pattern, users, schemas, networks, statementClasses, Action.ROUTE,
                Target.GROUP, null, 0, null, DEFAULT_MAX_WAIT, group);
    }

    /** A rule without a wait of its own. */
    public QueryRuleConfig(String name, String digest, String pattern, List<String> users, List<String> schemas,
            List<String> networks, List<StatementClass> statementClasses, Action action, Target route, Block block,
            long limit, String mirror) {
        this(name, digest, pattern, users, schemas, networks, statementClasses, action, route, block, limit, mirror,
                DEFAULT_MAX_WAIT);
    }

    /** A rule whose action has a number ({@code timeoutMilliseconds}...), or a {@code route} or {@code block}. */
    public QueryRuleConfig(String name, String digest, String pattern, List<String> users, List<String> schemas,
            List<String> networks, List<StatementClass> statementClasses, Action action, Target route, Block block,
            long limit) {
        this(name, digest, pattern, users, schemas, networks, statementClasses, action, route, block, limit, null);
    }

    /** A {@code route} or {@code block} rule. */
    public QueryRuleConfig(String name, String digest, String pattern, List<String> users, List<String> schemas,
            List<String> networks, List<StatementClass> statementClasses, Action action, Target route, Block block) {
        this(name, digest, pattern, users, schemas, networks, statementClasses, action, route, block, 0, null);
    }

    /** What a rule does to the statements it matches: exactly one per rule. */
    public enum Action {
        /** Runs the statement on the primary or a replica of its read/write split group, or on another group. */
        ROUTE("route"),
        /** Answers the statement with a configured error; nothing is sent to a server. */
        BLOCK("block"),
        TIMEOUT("timeoutMilliseconds"),
        MAX_ROWS("maxRows"),
        MAX_CONCURRENCY("maxConcurrency"),
        MAX_PER_SECOND("maxPerSecond"),
        MIRROR("mirror");

        private final String key;

        Action(String key) {
            this.key = key;
        }

        /** The config.yaml key that chooses it. */
        public String key() {
            return key;
        }
    }

    /**
     * Where a {@code route} rule sends a statement: the primary or the replicas of the session's read/write split
     * group (a hint, decision 167), or another group, named by {@link #routeGroup} (decision 194).
     */
    public enum Target {
        PRIMARY, REPLICA, GROUP
    }

    /**
     * The statement classes a rule can name, from each statement's first word; a multi-statement has the classes of
     * all its statements.
     */
    public enum StatementClass {
        /** SELECT, WITH, VALUES, TABLE. */
        SELECT,
        INSERT,
        UPDATE,
        DELETE,
        REPLACE,
        /** LOAD DATA / LOAD XML. */
        LOAD,
        CALL,
        /** INSERT, UPDATE, DELETE, REPLACE and LOAD together. */
        DML,
        /** CREATE, ALTER, DROP, RENAME, TRUNCATE. */
        DDL,
        /** GRANT, REVOKE. */
        DCL,
        SET,
        /** SHOW, DESCRIBE, EXPLAIN, HELP. */
        SHOW,
        /** BEGIN, START TRANSACTION, COMMIT, ROLLBACK, SAVEPOINT, RELEASE SAVEPOINT, XA. */
        TRANSACTION,
        /** Every other statement (USE, DO, LOCK, FLUSH, PREPARE...). */
        OTHER;

        /** The constant named {@code name} in any case, or {@code null}. */
        public static StatementClass of(String name) {
            for (StatementClass each : values()) {
                if (each.name().equals(name.strip().toUpperCase(Locale.ROOT))) {
                    return each;
                }
            }
            return null;
        }
    }

    /**
     * The error a {@code block} rule answers with.
     *
     * @param code the MySQL error code, 1..65535 (default 1148, ER_NOT_ALLOWED_COMMAND, as ProxySQL's blocked queries)
     * @param sqlState five characters (default {@code 42000})
     * @param message the text; it names the rule (the rule's name is added when it does not)
     */
    public record Block(int code, String sqlState, String message) {
        public static final int DEFAULT_CODE = 1148;
        public static final String DEFAULT_SQL_STATE = "42000";

        public Block {
            if (code < 1 || code > 65_535) {
                throw new IllegalArgumentException("code: " + code + " (expected: a MySQL error code, 1..65535)");
            }
            if (sqlState == null || !sqlState.matches("[0-9A-Z]{5}")) {
                throw new IllegalArgumentException("sqlState: " + sqlState
                        + " (expected: five digits or capital letters, such as 42000)");
            }
            Objects.requireNonNull(message, "message");
        }
    }

    public QueryRuleConfig {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(action, "action");
        users = List.copyOf(users);
        schemas = List.copyOf(schemas);
        networks = List.copyOf(networks);
        statementClasses = List.copyOf(statementClasses);
        if (digest != null && !digest.matches("[0-9a-f]{16}")) {
            throw new IllegalArgumentException("digest: " + digest
                    + " (expected: 16 lower-case hex digits, as /api/digests shows a digest)");
        }
        if (pattern != null) {
            compile(pattern);
        }
        for (String network : networks) {
            if (!isNetwork(network)) {
                throw new IllegalArgumentException("network: " + network
                        + " (expected: an address or a CIDR block such as 10.0.0.0/8 or fd00::/8)");
            }
        }
        boolean numeric = action != Action.ROUTE && action != Action.BLOCK && action != Action.MIRROR;
        if (maxWait < 0 || maxWait > 60_000) {
            throw new IllegalArgumentException("maxWaitMilliseconds: " + maxWait + " (expected: 0..60000)");
        }
        if (numeric && limit < 1) {
            throw new IllegalArgumentException(action.key() + ": " + limit + " (expected: at least 1)");
        }
        if ((action == Action.ROUTE) != (route != null) || (action == Action.BLOCK) != (block != null)
                || (action == Action.MIRROR) != (mirror != null)) {
            throw new IllegalArgumentException("rule " + name + ": its action " + action.key()
                    + " has no value of its own");
        }
        if ((route == Target.GROUP) != (routeGroup != null && !routeGroup.isBlank())) {
            throw new IllegalArgumentException("rule " + name + ": route " + route + " with group " + routeGroup
                    + " (expected: a group name exactly with route GROUP)");
        }
    }

    /** The rule's pattern as Sluice matches it: case-insensitive, found anywhere unless anchored. */
    public static Pattern compile(String pattern) {
        try {
            return Pattern.compile(pattern, Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE);
        } catch (PatternSyntaxException e) {
            throw new IllegalArgumentException("pattern: " + pattern + " (expected: a Java regular expression; "
                    + e.getDescription() + " at index " + e.getIndex() + ")", e);
        }
    }

    /** Whether {@code text} is an IPv4 or IPv6 address in numbers, with an optional prefix length. */
    static boolean isNetwork(String text) {
        int slash = text.indexOf('/');
        String address = slash < 0 ? text : text.substring(0, slash);
        boolean v4 = address.matches("\\d{1,3}(\\.\\d{1,3}){3}");
        boolean v6 = !v4 && address.contains(":") && address.matches("[0-9a-fA-F:.]+");
        if (!v4 && !v6) {
            return false;
        }
        if (v4) {
            for (String part : address.split("\\.")) {
                if (Integer.parseInt(part) > 255) {
                    return false;
                }
            }
        }
        if (slash < 0) {
            return true;
        }
        String bits = text.substring(slash + 1);
        return bits.matches("\\d{1,3}") && Integer.parseInt(bits) <= (v4 ? 32 : 128);
    }
}
