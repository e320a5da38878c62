package io.sluice.testing;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * Hears the exceptions that escaped Sluice's handlers: Netty logs one that reaches the end of a pipeline ("reached at
 * the tail of the pipeline") or escapes a loop task ("A task raised an exception") instead of throwing it, so a
 * scripted test would never see it otherwise. Any ERROR line of Sluice's counts too. Close it to stop listening.
 */
public final class EscapedExceptions extends AppenderBase<ILoggingEvent> implements AutoCloseable {
    private static final String[] LOGGERS = {"io.netty", "io.sluice"};

    private final List<String> escaped = new ArrayList<>();

    private EscapedExceptions() {
    }

    /** Starts listening to Netty's and Sluice's loggers. */
    public static EscapedExceptions listen() {
        EscapedExceptions appender = new EscapedExceptions();
        appender.start();
        for (String name : LOGGERS) {
            ((Logger) LoggerFactory.getLogger(name)).addAppender(appender);
        }
        return appender;
    }

    @Override
    protected synchronized void append(ILoggingEvent event) {
        String message = event.getFormattedMessage();
        boolean escapedNetty = event.getLoggerName().startsWith("io.netty") && event.getLevel().isGreaterOrEqual(
                Level.WARN) && (message.contains("tail of the pipeline") || message.contains("task raised"));
        boolean sluiceError = event.getLoggerName().startsWith("io.sluice") && event.getLevel() == Level.ERROR;
        if (escapedNetty || sluiceError) {
            String cause = event.getThrowableProxy() == null ? ""
                    : ": " + event.getThrowableProxy().getClassName() + ": " + event.getThrowableProxy().getMessage();
            escaped.add(event.getLevel() + " " + event.getLoggerName() + " " + message + cause);
        }
    }

    /** What escaped since the last call, forgotten once returned. */
    public synchronized List<String> drain() {
        List<String> all = new ArrayList<>(escaped);
        escaped.clear();
        return all;
    }

    @Override
    public void close() {
        for (String name : LOGGERS) {
            ((Logger) LoggerFactory.getLogger(name)).detachAppender(this);
        }
        stop();
    }
}
