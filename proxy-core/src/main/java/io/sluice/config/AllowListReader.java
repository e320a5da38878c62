package io.sluice.config;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Reads the {@code allowList} of a {@code !QUERY_RULES} item (decision 188). Its mode must be given: an operator who
 * pastes a learned list has to say whether it refuses, rather than find out from the application's errors.
 */
final class AllowListReader {

    private AllowListReader() {
    }

    static AllowListConfig read(YamlSection section) {
        AllowListConfig.Mode mode = section.oneOf("mode", AllowListConfig.Mode.class, null);
        if (mode == null && !section.has("mode")) {
            section.missing("mode", "DRY_RUN (count and log what would be refused) or ENFORCE (refuse it)");
        }
        Map<String, List<String>> listed = section.stringLists("users");
        Map<String, Set<String>> users = new LinkedHashMap<>();
        listed.forEach((user, digests) -> {
            java.util.Set<String> hashes = new java.util.LinkedHashSet<>();
            for (String digest : digests) {
                String hash = digest == null ? "" : digest.strip().toLowerCase(Locale.ROOT);
                if (!hash.matches("[0-9a-f]{16}")) {
                    section.refuse("users", "allowList.users." + user + ": " + digest
                            + " (expected: 16 hex digits, as sluice-ctl rules learn writes a digest)");
                } else {
                    hashes.add(hash);
                }
            }
            users.put(user, hashes);
        });
        return section.done(() -> new AllowListConfig(mode, users));
    }
}
