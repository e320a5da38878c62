package io.sluice;

import io.sluice.backend.BackendProbe;
import io.sluice.backend.BackendServerInfo;
import io.sluice.config.DataSourceConfig;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What reading the data sources' greetings learned: what all reachable backends offer, and which data sources
 * answered. Read at start and for data sources a config reload adds.
 *
 * @param serverInfo the first reachable backend's, with only the capabilities every reachable backend offers;
 *     {@code null} when none answered
 * @param reachable the names of the data sources that answered
 * @param failures one line per data source that did not, naming it and why
 */
record ProbeResult(BackendServerInfo serverInfo, List<String> reachable, List<String> failures) {
    private static final Logger log = LoggerFactory.getLogger(ProbeResult.class);
    private static final int PROBE_TIMEOUT_MILLIS = 5_000;

    /**
     * Reads the greeting of each data source; unreachable ones are logged and listed. Clients are offered only what
     * every reachable backend offers, which holds wherever their session lands (a MariaDB 10.5 next to a 10.11 during
     * a rolling upgrade has no metadata caching, decision 062).
     */
    static ProbeResult probe(Iterable<DataSourceConfig> dataSources) {
        BackendServerInfo shared = null;
        List<String> reachable = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        for (DataSourceConfig dataSource : dataSources) {
            int timeout = (int) Math.min(PROBE_TIMEOUT_MILLIS, dataSource.connectionTimeoutMilliseconds());
            try {
                BackendServerInfo info = BackendProbe.probe(dataSource.jdbcUrl(), timeout);
                shared = shared == null ? info : shared.sharedWith(info);
                reachable.add(dataSource.name());
            } catch (IOException e) {
                String failure = "dataSources." + dataSource.name() + ".url: " + dataSource.url()
                        + " is unreachable (" + e.getMessage() + ")";
                failures.add(failure);
                log.warn("{}", failure);
            }
        }
        return new ProbeResult(shared, reachable, failures);
    }
}
