package io.sluice.api;

import java.util.List;

/**
 * What a config reload did.
 *
 * @param changes what was applied, one line each ("dataSources.ds_1: added (up)", "authority.users: 3 users")
 * @param restartRequired what differs in the file but only takes effect after a restart; the running values stay
 */
public record ReloadResult(List<String> changes, List<String> restartRequired) {

    public ReloadResult {
        changes = List.copyOf(changes);
        restartRequired = List.copyOf(restartRequired);
    }
}
