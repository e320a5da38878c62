package io.sluice.state;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The session variables a client session has set, or that a backend connection holds, as the server's
 * {@code session_track_system_variables} tracker reported them: only what changed since login is kept. User
 * variables are kept beside them, named {@code @name}, each with the SQL literal that gives it its value and type
 * (read back from MariaDB). A session and a connection match when their maps are equal; otherwise
 * {@link #syncStatement} writes the one statement that makes the connection match. Not thread-safe: each lives on
 * its event loop.
 */
public final class SessionVariables {

    /**
     * The variables a handshake sets: a connection's values for them at login are its own (the client's collation;
     * IGNORE_SPACE in sql_mode for CLIENT_IGNORE_SPACE; interactive_timeout as wait_timeout for
     * CLIENT_INTERACTIVE), so returning to them means setting those values, not the server's global DEFAULT.
     */
    public static final List<String> HANDSHAKE_VARIABLES = List.of("character_set_client",
            "character_set_connection", "character_set_results", "collation_connection", "sql_mode", "wait_timeout");

    /**
     * Variables that the next statement alone uses ({@code SET insert_id} before an INSERT, as mysqlbinlog writes):
     * state of the connection they were set on, never carried to another (issue #38).
     */
    private static final Set<String> STATEMENT_SCOPED = Set.of("insert_id", "last_insert_id", "identity",
            "rand_seed1", "rand_seed2");

    /** Reported but not carried: derived from the schema (which moves by itself), or {@link #STATEMENT_SCOPED}. */
    private static final Set<String> FROM_THE_SCHEMA = Set.of("character_set_database", "collation_database");

    /**
     * The session's transaction access mode, under each server's name for it: MariaDB's {@code tx_read_only} (before
     * 11.1), MySQL's and MariaDB 11.1's {@code transaction_read_only}. A replica's connection keeps its own, READ ONLY
     * (decision 110): {@link #syncStatement(SessionVariables, SessionVariables, Map, boolean)} never carries a
     * session's to it, nor returns it to the server's default.
     */
    public static final Set<String> ACCESS_MODE = Set.of("tx_read_only", "transaction_read_only");

    private static final Pattern NUMBER = Pattern.compile("-?[0-9]+(\\.[0-9]+)?");

    private final HashMap<String, String> values = new HashMap<>();
    /** How many of {@link #values} are user variables ({@code @name}). */
    private int userVariableCount;

    /** Whether the variable (by lower-case name) is one the next statement alone uses: {@link #STATEMENT_SCOPED}. */
    public static boolean isStatementScoped(String lowerCaseName) {
        return STATEMENT_SCOPED.contains(lowerCaseName);
    }

    /** Records a change the tracker reported; names are kept in lower case. */
    public void put(String name, String value) {
        String key = name.toLowerCase(java.util.Locale.ROOT);
        if (!FROM_THE_SCHEMA.contains(key) && !STATEMENT_SCOPED.contains(key)) {
            values.put(key, value);
        }
    }

    /** Forgets a variable (by lower-case name): it is back to its login value, as after a SET to DEFAULT. */
    public void remove(String lowerCaseName) {
        values.remove(lowerCaseName);
    }

    /** Replaces the user variables with {@code literals} (by lower-case name, without {@code @}). */
    public void userVariables(Map<String, String> literals) {
        values.keySet().removeIf(name -> name.startsWith("@"));
        for (Map.Entry<String, String> entry : literals.entrySet()) {
            values.put("@" + entry.getKey(), entry.getValue());
        }
        userVariableCount = literals.size();
    }

    /**
     * Whether user variables are recorded here. On a connection they outlive a SET to NULL (their name and type
     * stay, in {@code information_schema.USER_VARIABLES} and in a result's column type): only a reset removes them.
     */
    public boolean hasUserVariables() {
        return userVariableCount > 0;
    }

    /** Back to what a fresh connection has (after COM_RESET_CONNECTION, COM_CHANGE_USER). */
    public void clear() {
        values.clear();
        userVariableCount = 0;
    }

    /** The value recorded for {@code lowerCaseName}, or {@code null}; allocates nothing. */
    public String get(String lowerCaseName) {
        return values.get(lowerCaseName);
    }

    public boolean isEmpty() {
        return values.isEmpty();
    }

    /** Makes this hold exactly what {@code other} holds. */
    public void copyFrom(SessionVariables other) {
        values.clear();
        values.putAll(other.values);
        userVariableCount = other.userVariableCount;
    }

    /**
     * Makes this hold what {@code other} holds but the access mode, which stays as it is: a replica's connection
     * takes a session's variables, never its access mode (decision 110).
     */
    public void copyFromButAccessMode(SessionVariables other) {
        String tx = values.get("tx_read_only");
        String transaction = values.get("transaction_read_only");
        copyFrom(other);
        forgetAccessMode();
        if (tx != null) {
            values.put("tx_read_only", tx);
        }
        if (transaction != null) {
            values.put("transaction_read_only", transaction);
        }
    }

    /** The access mode is the connection's login value again (a replica's READ ONLY, restored). */
    public void forgetAccessMode() {
        values.remove("tx_read_only");
        values.remove("transaction_read_only");
    }

    /** Whether a connection holding this matches a session holding {@code wanted}. */
    public boolean matches(SessionVariables wanted) {
        return values.equals(wanted.values);
    }

    /** The variables and their values, for the admin API and tests. */
    public Map<String, String> asMap() {
        return Map.copyOf(values);
    }

    /**
     * The statement that turns a connection holding {@code have} into one holding {@code want}: variables only the
     * connection set go back to their login value ({@code initial}, for the handshake variables) or to
     * {@code DEFAULT}, user variables only the connection holds to NULL; variables the session set take its values.
     * Character sets come before collations, since setting a character set resets its collation, and user variables
     * come last ({@code SET SESSION @x = 1} is not valid SQL).
     *
     * @return {@code SET SESSION ...} (or {@code SET @...}), or {@code null} when they already match
     */
    public static String syncStatement(SessionVariables have, SessionVariables want, Map<String, String> initial) {
        return syncStatement(have, want, initial, false);
    }

    /**
     * As {@link #syncStatement(SessionVariables, SessionVariables, Map)}, for a connection whose access mode is not
     * the session's to set ({@code readOnly}: a replica's, READ ONLY for good): {@link #ACCESS_MODE} is left out on
     * both sides, so that neither a session's {@code READ WRITE} nor a return to the server's default turns it
     * writable.
     */
    public static String syncStatement(SessionVariables have, SessionVariables want, Map<String, String> initial,
            boolean readOnly) {
        List<String> assignments = new ArrayList<>();
        List<String> collations = new ArrayList<>();
        List<String> userVariables = new ArrayList<>();
        for (Map.Entry<String, String> entry : have.values.entrySet()) {
            String name = entry.getKey();
            if (readOnly && ACCESS_MODE.contains(name)) {
                continue;
            }
            if (!want.values.containsKey(name)) {
                String login = initial.get(name);
                String assignment = name + " = " + (name.startsWith("@") ? "NULL"
                        : login != null ? literal(name, login) : "DEFAULT");
                listFor(name, assignments, collations, userVariables).add(assignment);
            }
        }
        for (Map.Entry<String, String> entry : want.values.entrySet()) {
            String name = entry.getKey();
            if (readOnly && ACCESS_MODE.contains(name)) {
                continue;
            }
            if (!entry.getValue().equals(have.values.get(name))) {
                String assignment = name + " = " + literal(name, entry.getValue());
                listFor(name, assignments, collations, userVariables).add(assignment);
            }
        }
        assignments.addAll(collations);
        if (assignments.isEmpty() && userVariables.isEmpty()) {
            return null;
        }
        String names = names(want, assignments);
        if (names != null) {
            assignments.addAll(userVariables);
            return "SET " + names + (assignments.isEmpty() ? "" : ", " + String.join(", ", assignments));
        }
        String prefix = assignments.isEmpty() ? "SET " : "SET SESSION ";
        assignments.addAll(userVariables);
        return prefix + String.join(", ", assignments);
    }

    /**
     * {@code NAMES 'cs' COLLATE 'coll'} when the statement changes the connection's character sets and the session's
     * results are in the character set of its connection collation, which is what {@code SET NAMES} and a login
     * leave; the assignments it stands for are taken out of {@code assignments} ({@code character_set_client} stays,
     * after it, when the client's differs). MariaDB keeps a collation with {@code character_set_results} that no
     * variable shows: {@code SET NAMES utf8mb4 COLLATE utf8mb4_bin} gives result columns utf8mb4_bin, where
     * {@code SET character_set_results = 'utf8mb4', collation_connection = 'utf8mb4_bin'}, which reads back the
     * same, gives them utf8mb4_general_ci (the column definitions differ: with MariaDB's metadata caching a session
     * could not move, and a client would see the other collation after a change of connection).
     *
     * @return {@code null} when the character sets are not changed, or are not as {@code SET NAMES} leaves them
     */
    private static String names(SessionVariables want, List<String> assignments) {
        String results = want.values.get("character_set_results");
        String collation = want.values.get("collation_connection");
        if (results == null || collation == null || results.isEmpty()
                || assignments.stream().noneMatch(SessionVariables::namesVariable)) {
            return null;
        }
        int cut = collation.indexOf('_');
        if (!(cut < 0 ? collation : collation.substring(0, cut)).equalsIgnoreCase(results)) {
            return null;
        }
        assignments.removeIf(SessionVariables::namesVariable);
        String client = want.values.get("character_set_client");
        if (client != null && !client.equalsIgnoreCase(results)) {
            assignments.add(0, "character_set_client = " + literal("character_set_client", client));
        }
        return "NAMES " + literal("character_set_results", results) + " COLLATE "
                + literal("collation_connection", collation);
    }

    private static boolean namesVariable(String assignment) {
        return assignment.startsWith("character_set_client ") || assignment.startsWith("character_set_connection ")
                || assignment.startsWith("character_set_results ") || assignment.startsWith("collation_connection ");
    }

    private static List<String> listFor(String name, List<String> assignments, List<String> collations,
            List<String> userVariables) {
        return name.startsWith("@") ? userVariables : name.startsWith("collation") ? collations : assignments;
    }

    /**
     * A value as SQL: numbers bare (integer variables refuse strings), NULL bare, everything else quoted. The
     * tracker reports every value as text, enums and booleans included ('ON', 'REPEATABLE-READ'), which MySQL and
     * MariaDB accept quoted.
     */
    static String literal(String name, String value) {
        if (name.startsWith("@") || NUMBER.matcher(value).matches() || value.equals("NULL")) {
            return value;
        }
        if (value.isEmpty() && name.startsWith("character_set")) {
            return "NULL"; // SET character_set_results = NULL is reported with an empty value
        }
        StringBuilder quoted = new StringBuilder(value.length() + 2).append('\'');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '\'' || c == '\\') {
                quoted.append('\\');
            }
            quoted.append(c);
        }
        return quoted.append('\'').toString();
    }

    @Override
    public String toString() {
        return values.toString();
    }
}
