package io.sluice.balancer.replication;

import java.util.List;
import java.util.Objects;

/**
 * Who does what in a read/write split group now: the server writes go to, the others, and whether writes may go at
 * all. Immutable; a {@link Topology} swaps in a new one when something changes.
 *
 * @param state whether the group has exactly one writable server, none, two or more, or is switching over
 * @param primary the server writes go to once they may: the writable one, else the last one that was (or the
 *     preferred one, before any was seen), so that connections can still be told apart from replicas'
 * @param replicas every other server of the group, in configuration order
 * @param writable the servers last read writable (two or more in a split brain)
 * @param detail a sentence for logs, errors and the admin API
 */
public record Roles(State state, String primary, List<String> replicas, List<String> writable, String detail) {

    /** Whether writes may go to the primary now. */
    public enum State {
        /** Exactly one server is writable: it is the primary. */
        PRIMARY,
        /** No server is writable (a promotion under way, or the primary unreachable): writes wait. */
        NO_PRIMARY,
        /** Two or more servers are writable: writes go to neither until exactly one is. */
        SPLIT_BRAIN,
        /** A planned switchover holds writes until the new primary takes them. */
        SWITCHING;

        /** The admin and metrics label: {@code split_brain}. */
        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    public Roles {
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(primary, "primary");
        replicas = List.copyOf(replicas);
        writable = List.copyOf(writable);
        Objects.requireNonNull(detail, "detail");
    }

    /** Whether statements that need the primary may take its connections now. */
    public boolean takesWrites() {
        return state == State.PRIMARY;
    }
}
