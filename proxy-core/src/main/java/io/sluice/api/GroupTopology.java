package io.sluice.api;

import io.sluice.balancer.replication.Roles;
import io.sluice.balancer.replication.TopologyEvent;
import java.util.List;

/**
 * One read/write split group's topology as the admin API shows it (issue #40): who is the primary, whether it takes
 * writes, and what changed lately.
 *
 * @param group the group's name
 * @param discovery {@code READ_ONLY} when the servers' {@code read_only} decides the primary, else {@code NONE}
 * @param switchover whether a switchover may run (the group has an {@code administration} account)
 * @param roles the roles now
 * @param waiting statements waiting now for a primary that takes writes
 * @param primaryChanges times the primary changed to another server since start
 * @param events the history, oldest first
 * @param autoFailover whether Sluice promotes a replica itself when the primary is gone
 * @param failovers unplanned failovers this instance promoted since start
 * @param fenced the servers fenced after a failover, until an operator rejoins them
 */
public record GroupTopology(String group, String discovery, boolean switchover, Roles roles, int waiting,
        long primaryChanges, List<TopologyEvent> events, boolean autoFailover, long failovers, List<String> fenced) {

    public GroupTopology {
        events = List.copyOf(events);
        fenced = List.copyOf(fenced);
    }
}
