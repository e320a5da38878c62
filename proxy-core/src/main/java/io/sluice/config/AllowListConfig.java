package io.sluice.config;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The allow-list of a {@code !QUERY_RULES} item (issue #41 item 3, decision 188): per client user, the statement
 * shapes (digests) it may run, as {@code sluice-ctl rules learn} writes them from a capture. A user it does not name
 * is not restricted by it.
 *
 * <pre>
 * - !QUERY_RULES
 *   allowList:
 *     mode: DRY_RUN
 *     users:
 *       app:
 *         - 3f1c0a9e5b7d2c41   # SELECT c FROM sbtest1 WHERE id = ?
 * </pre>
 *
 * @param mode whether statements outside the list are only counted and logged, or refused
 * @param users the digests (16 lower-case hex digits) each user may run, by user name
 */
public record AllowListConfig(Mode mode, Map<String, Set<String>> users) {

    /** What the allow-list does with a statement of a listed user whose digest it does not list. */
    public enum Mode {
        /** Counts and logs (rate-limited) what would have been refused; the statement runs. */
        DRY_RUN,
        /** Refuses the statement with ERR 1148 naming the allow-list, the user and the digest. */
        ENFORCE
    }

    public AllowListConfig {
        Objects.requireNonNull(mode, "mode");
        Map<String, Set<String>> copy = new LinkedHashMap<>();
        users.forEach((user, digests) -> {
            for (String digest : digests) {
                if (!digest.matches("[0-9a-f]{16}")) {
                    throw new IllegalArgumentException("allowList.users." + user + ": " + digest
                            + " (expected: 16 lower-case hex digits, as sluice-ctl rules learn writes a digest)");
                }
            }
            copy.put(user, Set.copyOf(digests));
        });
        users = java.util.Collections.unmodifiableMap(copy);
    }
}
