package io.sluice.frontend;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The connection log: one INFO line when a client has logged in (who, from where, to which data source) and one
 * when it disconnects (how long it stayed), under the logger {@code io.sluice.connections}, so that it can be turned
 * off alone ({@code <logger name="io.sluice.connections" level="WARN"/>} in logback.xml). Written once per session,
 * never per command.
 */
final class ConnectionLog {
    private static final Logger log = LoggerFactory.getLogger("io.sluice.connections");

    private ConnectionLog() {
    }

    static void loggedIn(ClientSession session, String dataSource) {
        if (log.isInfoEnabled()) {
            log.info("client {} #{} logged in as '{}' to data source {} (schema {})", session.remoteAddress(),
                    session.connectionId(), session.user(), dataSource, session.schema());
        }
    }

    static void disconnected(ClientSession session) {
        if (log.isInfoEnabled()) {
            log.info("client {} #{} ('{}') disconnected after {} ms", session.remoteAddress(), session.connectionId(),
                    session.user(), System.currentTimeMillis() - session.connectedAtMillis());
        }
    }
}
