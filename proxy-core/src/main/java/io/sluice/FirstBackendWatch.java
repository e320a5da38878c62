package io.sluice;

import io.sluice.config.DataSourceConfig;
import io.sluice.frontend.FrontendContext;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sluice started while no backend answered (a database outage, or an ordered bring-up where the proxy comes first):
 * until one does, clients get the provisional greeting and their logins an error, and this thread reads the data
 * sources' greetings again every {@code interval} so that the first backend that answers sets the version, collation
 * and capabilities clients are offered. It ends then, or when Sluice closes. A daemon thread of its own: the probe
 * blocks, and the health checks' loop must not wait for it.
 */
final class FirstBackendWatch {
    private static final Logger log = LoggerFactory.getLogger(FirstBackendWatch.class);

    private FirstBackendWatch() {
    }

    /** @param closed whether Sluice has closed meanwhile: the watch ends */
    static Thread start(List<DataSourceConfig> dataSources, FrontendContext context, long intervalMillis,
            BooleanSupplier closed) {
        Thread watch = new Thread(() -> {
            while (context.isProvisional() && !closed.getAsBoolean()) {
                try {
                    TimeUnit.MILLISECONDS.sleep(intervalMillis);
                } catch (InterruptedException e) {
                    return; // Sluice closed
                }
                ProbeResult probe = ProbeResult.probe(dataSources);
                if (probe.serverInfo() != null) {
                    context.learnServer(probe.serverInfo());
                    log.info("backend {} answers ({}): clients are offered its version and capabilities from now on",
                            probe.reachable(), probe.serverInfo().serverVersion());
                }
            }
        }, "sluice-first-backend");
        watch.setDaemon(true);
        watch.start();
        return watch;
    }
}
