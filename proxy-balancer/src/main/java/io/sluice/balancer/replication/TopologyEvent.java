package io.sluice.balancer.replication;

import java.time.Instant;

/**
 * One entry of a group's topology history: what changed, when, and why.
 *
 * @param at when Sluice saw or made the change
 * @param kind {@code primary_changed}, {@code no_primary}, {@code split_brain}, {@code switchover_step}...
 * @param primary the primary after the change (the last known one when there is none)
 * @param detail a sentence: the readings or the step that led to it
 */
public record TopologyEvent(Instant at, String kind, String primary, String detail) {
}
