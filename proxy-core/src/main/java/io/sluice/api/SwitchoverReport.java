package io.sluice.api;

import java.util.List;

/**
 * What a planned switchover of a read/write split group checked, planned and did (issue #40), for the admin API and
 * {@code sluice-ctl switchover}.
 *
 * @param group the group
 * @param from the primary before
 * @param to the candidate (the primary after, when {@code switched})
 * @param dryRun only the checks and the plan: nothing was changed
 * @param switched the candidate is the primary now
 * @param checks each check made, {@code ok: ...} or {@code FAILED: ...}
 * @param plan the statements it runs, per server, passwords masked
 * @param steps what it did, in order, each with its duration
 * @param error why it did not switch (refused, abandoned, rolled back), or why a repoint failed; {@code ""} if none
 * @param writesHeldMillis how long statements that need the primary were held, -1 when they were not
 */
public record SwitchoverReport(String group, String from, String to, boolean dryRun, boolean switched,
        List<String> checks, List<String> plan, List<Step> steps, String error, long writesHeldMillis) {

    /**
     * One step.
     *
     * @param name what it did ({@code hold writes}, {@code fence primary}...)
     * @param server the data source it ran on, or {@code ""}
     * @param millis how long it took
     * @param outcome {@code ok}, or what went wrong
     */
    public record Step(String name, String server, long millis, String outcome) {
    }

    public SwitchoverReport {
        checks = List.copyOf(checks);
        plan = List.copyOf(plan);
        steps = List.copyOf(steps);
    }
}
