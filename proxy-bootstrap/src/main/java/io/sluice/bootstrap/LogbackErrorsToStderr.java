package io.sluice.bootstrap;

import ch.qos.logback.core.status.Status;
import ch.qos.logback.core.status.StatusListener;

/**
 * Logback's status listener for conf/logback.xml: its own errors (a malformed file, an appender that cannot open its
 * file) go to stderr, one line each; its information and warnings go nowhere. Without a listener, logback prints its
 * whole start-up status as soon as one warning occurs, and conf/logback.xml causes one on every start by design: the
 * appenders of the log target not chosen are never referenced (decision 076).
 */
public final class LogbackErrorsToStderr implements StatusListener {

    @Override
    public void addStatusEvent(Status status) {
        if (status.getLevel() < Status.ERROR) {
            return;
        }
        Throwable cause = status.getThrowable();
        System.err.println("sluice: logback: " + status.getMessage() + (cause == null ? "" : " (" + cause + ")"));
    }
}
