package io.sluice.api;

import java.util.List;

/**
 * What {@code sluice-ctl rejoin GROUP DATASOURCE} did: a server fenced after a failover pointed at the group's primary
 * (issue #40, decision 177).
 *
 * @param group the read/write split group
 * @param server the server rejoined
 * @param primary the primary it replicates from now
 * @param rejoined whether it was pointed at the primary and taken back into the group
 * @param statements what ran on it, passwords masked
 * @param error why it was not rejoined, or {@code ""}
 */
public record RejoinReport(String group, String server, String primary, boolean rejoined, List<String> statements,
        String error) {
    public RejoinReport {
        statements = List.copyOf(statements);
    }
}
