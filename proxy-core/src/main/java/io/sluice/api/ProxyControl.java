package io.sluice.api;

import io.sluice.config.ProxyConfig;
import io.sluice.rules.QueryRules;
import io.sluice.statistics.DigestStatistics;
import java.util.List;

/**
 * What the admin API reads of a running proxy and may change in it: its backends, sessions, configuration and
 * draining state, drain and undrain, and config reload. Implemented by {@code Sluice}; the admin server knows only this, so that it can sit
 * above the proxy without the proxy knowing of it.
 */
public interface ProxyControl {

    /** Every backend's status, sessions, last health check and pool, in configuration order. */
    List<BackendSnapshot> backends();

    /** Client connections open now. */
    int clientConnections();

    /** Every client session now; may take up to a couple of seconds, since each is described on its own loop. */
    List<SessionSnapshot> sessions();

    /** The configuration the proxy runs with now, as the latest reload left it; shown masked by {@code /api/config}. */
    ProxyConfig config();

    /** Whether graceful shutdown has begun: {@code /health} then answers 503. */
    boolean isDraining();

    /**
     * Takes a backend out of rotation for maintenance.
     *
     * @return false when there is no backend of that name
     */
    boolean drain(String name);

    /**
     * Puts a drained backend back into rotation.
     *
     * @return false when there is no backend of that name
     */
    boolean undrain(String name);

    /**
     * Reads the configuration again from its source and applies what can change without a restart.
     *
     * @throws io.sluice.config.ConfigException when the source refuses the file; nothing changes then
     * @throws IllegalStateException when there is nothing to reload from, or the proxy is shutting down
     */
    ReloadResult reload();

    /** The running query rules ({@code /api/rules}); empty when none are configured. */
    default QueryRules queryRules() {
        return new QueryRules(List.of());
    }

    /** Statement statistics by digest ({@code /api/digests}), or {@code null} when {@code statistics} is off. */
    default DigestStatistics statistics() {
        return null;
    }

    /** Every read/write split group's topology, in configuration order (issue #40). */
    default List<GroupTopology> groups() {
        return List.of();
    }

    /**
     * Switches a read/write split group's primary over to another server, or with {@code dryRun} only says what it
     * would check and run (issue #40). Blocks until it is done.
     *
     * @param to the candidate, or {@code null} to let Sluice choose the most advanced usable replica
     * @param force go on when write transactions are still open after {@code timeoutMillis}
     * @param timeoutMillis how long open write transactions, then the candidate's catching up, may take
     * @return the report; {@code null} when there is no such group
     */
    default SwitchoverReport switchover(String group, String to, boolean dryRun, boolean force, long timeoutMillis) {
        return null;
    }

    /**
     * Takes a server fenced after a failover back into a read/write split group as a replica of its primary (issue
     * #40, decision 177). Blocks until done.
     *
     * @return the report; {@code null} when there is no such group
     */
    default RejoinReport rejoin(String group, String server) {
        return null;
    }
}
