package io.sluice.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.netty.channel.ServerChannel;
import io.sluice.Sluice;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.TestMariaDb;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * New clients are accepted on the relay loops themselves (decision 057): the listening socket is registered on a
 * {@code sluice-relay} loop, Sluice starts no thread but its relay loops and its health-check loop, and clients logging
 * in at once, spread over both loops, are all served.
 *
 * <p>Before 057 an accept group of its own held the listening socket; brought back under any name, its thread is a
 * thread Sluice started beyond those, and the listening socket's loop is not a relay loop.
 */
@ExtendWith(LeakDetection.class)
@Tag("server")
class AcceptOnRelayLoopsTest {

    private static final int LOOPS = 2;
    private static final int CLIENTS = 8;
    private static final String CLIENT_THREAD = "accept-test-client-";

    @Test
    void clientsAreAcceptedOnTheRelayLoopsAndSluiceStartsNoOtherThread() throws Exception {
        assumeFalse(ProxyUnderTest.isDirect(), "about the proxy's threads");
        warmUpTheDriver();
        Set<Thread> before = liveThreads();
        try (ProxyUnderTest proxy = ProxyUnderTest.builder().workerThreads(LOOPS).start()) {
            logInAtOnce(proxy);

            List<String> started = new ArrayList<>();
            for (Thread thread : liveThreads()) {
                if (!before.contains(thread) && !thread.getName().startsWith(CLIENT_THREAD)) {
                    started.add(thread.getName());
                }
            }
            assertThat(started).as("threads started since Sluice.start").filteredOn(AcceptOnRelayLoopsTest::isRelayLoop)
                    .hasSize(LOOPS);
            assertThat(started).as("threads started since Sluice.start")
                    .filteredOn(n -> n.startsWith("sluice-health-"))
                    .hasSize(1);
            assertThat(started).as("threads started since Sluice.start, other than its relay and health loops")
                    .allMatch(n -> isRelayLoop(n) || n.startsWith("sluice-health-") || isJdkPool(n));

            ServerChannel listening = listeningChannel(proxy.sluice());
            Thread acceptor = listening.eventLoop().submit(Thread::currentThread).get(10, TimeUnit.SECONDS);
            assertThat(acceptor.getName()).as("the thread of the listening socket's loop, which accepts")
                    .matches(AcceptOnRelayLoopsTest::isRelayLoop)
                    .isIn(started);
        }
    }

    private static boolean isRelayLoop(String threadName) {
        return threadName.startsWith("sluice-relay-");
    }

    /** The JDK's shared pool starts its workers on first use by anyone; they are not Sluice's threads. */
    private static boolean isJdkPool(String threadName) {
        return threadName.startsWith("ForkJoinPool.commonPool-worker-");
    }

    /** A first connection starts whatever threads the driver keeps, so they are not counted as Sluice's. */
    private static void warmUpTheDriver() throws Exception {
        try (Connection c = TestMariaDb.get().connect(JdbcDriver.MARIADB, null, "")) {
            assertThat(c.isValid(5)).isTrue();
        }
    }

    private static void logInAtOnce(ProxyUnderTest proxy) throws Exception {
        AtomicInteger n = new AtomicInteger();
        ExecutorService clients = Executors.newFixedThreadPool(CLIENTS,
                r -> new Thread(r, CLIENT_THREAD + n.incrementAndGet()));
        try {
            List<Future<Long>> logins = new ArrayList<>();
            for (int i = 0; i < CLIENTS; i++) {
                logins.add(clients.submit(() -> {
                    try (Connection connection = proxy.connect(JdbcDriver.MARIADB, null, "");
                            Statement statement = connection.createStatement();
                            ResultSet rs = statement.executeQuery("SELECT CONNECTION_ID()")) {
                        rs.next();
                        return rs.getLong(1);
                    }
                }));
            }
            for (Future<Long> login : logins) {
                assertThat(login.get(30, TimeUnit.SECONDS)).isPositive();
            }
        } finally {
            clients.shutdownNow();
        }
    }

    private static Set<Thread> liveThreads() {
        return new HashSet<>(Thread.getAllStackTraces().keySet());
    }

    /**
     * Sluice's listening channel. No public API exposes it, and adding one for this test alone was ruled out, so it
     * is found by type among the objects Sluice holds in its own classes' fields (a few levels deep, so that moving it
     * into a helper class does not break the test).
     */
    private static ServerChannel listeningChannel(Sluice sluice) throws IllegalAccessException {
        Set<Object> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        Deque<Object> level = new ArrayDeque<>(List.of(sluice));
        for (int depth = 0; depth < 4 && !level.isEmpty(); depth++) {
            Deque<Object> next = new ArrayDeque<>();
            for (Object holder : level) {
                if (!seen.add(holder)) {
                    continue;
                }
                for (Class<?> type = holder.getClass(); type != null && type.getName().startsWith("io.sluice.");
                        type = type.getSuperclass()) {
                    for (Field field : type.getDeclaredFields()) {
                        if (Modifier.isStatic(field.getModifiers()) || field.getType().isPrimitive()) {
                            continue;
                        }
                        field.setAccessible(true);
                        Object value = field.get(holder);
                        if (value instanceof ServerChannel channel) {
                            return channel;
                        }
                        if (value != null && value.getClass().getName().startsWith("io.sluice.")) {
                            next.add(value);
                        }
                    }
                }
            }
            level = next;
        }
        throw new AssertionError("no ServerChannel among the fields of Sluice and the io.sluice objects it holds");
    }
}
