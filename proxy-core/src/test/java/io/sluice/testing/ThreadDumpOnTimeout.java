package io.sluice.testing;

import java.util.Map;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.LifecycleMethodExecutionExceptionHandler;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

/**
 * Adds a dump of every thread's stack to a test that failed on JUnit's timeout.
 *
 * <p>Why: every test has a default timeout (junit-platform.properties) so that a hang fails the build instead of
 * running into CI's limit with nothing printed. A hang in a proxy is usually on another thread than the test's (a relay
 * loop, a pool, a shutdown waiting for either), and the test's own output goes to a file CI does not show. The dump is
 * attached as a suppressed exception, so the console's failure report carries it. Registered for every test class
 * through META-INF/services.
 */
public final class ThreadDumpOnTimeout implements TestExecutionExceptionHandler,
        LifecycleMethodExecutionExceptionHandler {

    @Override
    public void handleTestExecutionException(ExtensionContext context, Throwable throwable) throws Throwable {
        throw withDump(throwable);
    }

    @Override
    public void handleBeforeAllMethodExecutionException(ExtensionContext context, Throwable throwable)
            throws Throwable {
        throw withDump(throwable);
    }

    @Override
    public void handleBeforeEachMethodExecutionException(ExtensionContext context, Throwable throwable)
            throws Throwable {
        throw withDump(throwable);
    }

    @Override
    public void handleAfterEachMethodExecutionException(ExtensionContext context, Throwable throwable)
            throws Throwable {
        throw withDump(throwable);
    }

    @Override
    public void handleAfterAllMethodExecutionException(ExtensionContext context, Throwable throwable)
            throws Throwable {
        throw withDump(throwable);
    }

    private static Throwable withDump(Throwable throwable) {
        if (throwable instanceof TimeoutException) {
            throwable.addSuppressed(new ThreadDump(dump()));
        }
        return throwable;
    }

    static String dump() {
        StringBuilder out = new StringBuilder("threads at the timeout:\n");
        for (Map.Entry<Thread, StackTraceElement[]> entry : Thread.getAllStackTraces().entrySet()) {
            Thread thread = entry.getKey();
            out.append('"').append(thread.getName()).append("\" ").append(thread.getState()).append('\n');
            for (StackTraceElement frame : entry.getValue()) {
                out.append("\tat ").append(frame).append('\n');
            }
        }
        return out.toString();
    }

    /** Carries the dump in its message; its own stack says nothing, so it has none. */
    static final class ThreadDump extends Throwable {
        private static final long serialVersionUID = 1L;

        ThreadDump(String dump) {
            super(dump, null, false, false);
        }
    }
}
