package io.sluice;

import io.sluice.api.RejoinReport;
import io.sluice.backend.pool.BackendPool;
import io.sluice.balancer.replication.PromotionStatements;
import io.sluice.balancer.replication.ReplicationReading;
import io.sluice.balancer.replication.Roles;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.JdbcUrl;
import io.sluice.config.ServerAccount;
import io.sluice.routing.ReadWriteGroup;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An operator takes a server fenced after a failover back into its group ({@code sluice-ctl rejoin GROUP
 * DATASOURCE}, decision 177): made read-only, its own binary log position taken for where it starts, and pointed at
 * the group's primary by GTID with the {@code replication} account. A server that wrote transactions no replica
 * received stops replicating with the server's own error ({@code gtid_strict_mode}); the operator then decides what
 * to do with them, which Sluice does not.
 */
final class RejoinRun {
    private static final Logger log = LoggerFactory.getLogger(RejoinRun.class);

    private final ReadWriteGroup group;
    private final Function<String, BackendPool> pools;
    private final Map<String, DataSourceConfig> dataSources;
    private final long timeoutMillis;

    RejoinRun(ReadWriteGroup group, Function<String, BackendPool> pools, Map<String, DataSourceConfig> dataSources,
            long timeoutMillis) {
        this.group = group;
        this.pools = pools;
        this.dataSources = dataSources;
        this.timeoutMillis = timeoutMillis;
    }

    /**
     * Runs it.
     *
     * @return the statements run, password masked, with {@code ""} as the error; or the error
     */
    RejoinReport run(String server) {
        List<String> sql = new ArrayList<>();
        Roles roles = group.roles();
        ServerAccount admin = group.config().administration();
        BackendPool pool = pools.apply(server);
        String refusal = admin == null ? "the group has no administration account"
                : !group.topology().servers().contains(server) ? "no server " + server + " in the group (expected: one"
                + " of " + group.topology().servers() + ")"
                : !roles.takesWrites() ? "the group has no primary that takes writes now: " + roles.detail()
                : roles.primary().equals(server) ? server + " is the primary" : pool == null ? "no pool for " + server
                : null;
        if (refusal != null) {
            return new RejoinReport(group.name(), server, roles.primary(), false, sql, refusal);
        }
        ReplicationReading reading = pool.ownConnections().readReplication(timeoutMillis).join();
        if (!reading.reachable()) {
            return new RejoinReport(group.name(), server, roles.primary(), false, sql, server
                    + " does not answer: " + reading.error());
        }
        PromotionStatements statements = PromotionStatements.of(reading);
        JdbcUrl target = JdbcUrl.parse(dataSources.get(roles.primary()).url());
        ServerAccount replication = group.config().replicationAccount();
        sql.add(statements.fence().get(0));
        if (!reading.replica()) { // it was a primary: it starts from what it logged itself
            sql.addAll(statements.demotedPrimaryFirst());
        }
        sql.addAll(statements.replicateFrom(target.host(), target.port(), replication.username(),
                replication.password()));
        List<String> shown = sql.stream().map(PromotionStatements::masked).toList();
        try {
            pool.ownConnections().runAs(admin.username(), admin.password(), sql, timeoutMillis).join();
        } catch (CompletionException e) {
            String why = e.getCause() != null ? e.getCause().getMessage() : e.getMessage();
            group.topology().record("rejoin_failed", server + ": " + why);
            return new RejoinReport(group.name(), server, roles.primary(), false, shown, why);
        }
        group.topology().rejoined(server, "an operator's rejoin: replicates from " + roles.primary());
        log.info("read/write group {}: {} rejoined: replicates from {}", group.name(), server, roles.primary());
        return new RejoinReport(group.name(), server, roles.primary(), true, shown, "");
    }
}
