package io.sluice.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test class when Netty reported a leaked reference-counted object while it ran.
 *
 * <p>Netty's leak detector only notices a leak when the leaked object has been garbage collected and a later
 * allocation polls the detector's reference queue, and it only logs what it finds. This extension installs a
 * {@link ResourceLeakDetectorFactory} whose detectors record every report instead; after the class it forces a few
 * collections, allocates and releases buffers so the queue is polled, and fails with the recorded access traces.
 *
 * <p>The factory must be installed before {@code AbstractByteBuf} is initialized, because that class keeps the
 * detector it got at initialization. {@link Installer} is auto-detected by JUnit (see
 * {@code src/test/resources/junit-platform.properties}) so that happens before any test class runs; this class
 * checks it and says so when it did not.
 */
public final class LeakDetection implements BeforeAllCallback, AfterAllCallback {

    private static final ConcurrentLinkedQueue<String> LEAKS = new ConcurrentLinkedQueue<>();
    private static final RecordingFactory FACTORY = new RecordingFactory();
    private static final int FLUSH_ROUNDS = 4;

    static {
        install();
    }

    /** Installs the recording factory and paranoid sampling; idempotent. */
    public static synchronized void install() {
        if (ResourceLeakDetectorFactory.instance() != FACTORY) {
            ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(FACTORY);
        }
        if (ResourceLeakDetector.getLevel().ordinal() < ResourceLeakDetector.Level.PARANOID.ordinal()) {
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
        }
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        checkInstalledInTime();
        List<String> earlier = collectLeaks();
        if (!earlier.isEmpty()) {
            throw new AssertionError(earlier.size() + " leak(s) detected before " + context.getDisplayName()
                    + " started, so caused by an earlier test class:\n" + String.join("\n\n", earlier));
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        assertNoLeaks(context.getDisplayName());
    }

    /** Forces the detector to look for leaks now and fails, with their traces, if there were any since the last call. */
    public static void assertNoLeaks(String scope) {
        List<String> leaks = collectLeaks();
        if (!leaks.isEmpty()) {
            throw new AssertionError(leaks.size() + " Netty leak(s) detected in " + scope + ":\n"
                    + String.join("\n\n", leaks));
        }
    }

    /** Runs the garbage collector, polls the detectors and returns (and forgets) every leak recorded so far. */
    public static List<String> collectLeaks() {
        for (int round = 0; round < FLUSH_ROUNDS; round++) {
            System.gc();
            try {
                Thread.sleep(20); // lets the reference handler enqueue what the collection found
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            // Each tracked allocation polls its detector's reference queue, which is what reports a leak.
            for (ByteBufAllocator allocator : new ByteBufAllocator[] {
                    PooledByteBufAllocator.DEFAULT, ByteBufAllocator.DEFAULT, UnpooledByteBufAllocator.DEFAULT}) {
                for (int i = 0; i < 8; i++) {
                    allocator.buffer(16).release();
                    allocator.directBuffer(16).release();
                }
            }
        }
        List<String> leaks = new ArrayList<>();
        for (String leak; (leak = LEAKS.poll()) != null; ) {
            leaks.add(leak);
        }
        return leaks;
    }

    private static void checkInstalledInTime() {
        install();
        Object byteBufDetector;
        try {
            Field field = Class.forName("io.netty.buffer.AbstractByteBuf").getDeclaredField("leakDetector");
            field.setAccessible(true);
            byteBufDetector = field.get(null);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return; // Netty's internals moved; the end-to-end LeakDetectionTest still proves detection works.
        }
        if (!(byteBufDetector instanceof RecordingDetector)) {
            throw new AssertionError("ByteBuf leak detector is " + byteBufDetector.getClass().getName()
                    + " (expected: LeakDetection's): a ByteBuf was allocated before LeakDetection was installed;"
                    + " enable junit.jupiter.extensions.autodetection.enabled so LeakDetection.Installer runs first");
        }
    }

    /** Registered through {@code META-INF/services}: loading it installs the factory before any test runs. */
    public static final class Installer implements org.junit.jupiter.api.extension.Extension {
        static {
            install();
        }
    }

    private static final class RecordingFactory extends ResourceLeakDetectorFactory {
        @Override
        public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval) {
            return new RecordingDetector<>(resource, samplingInterval);
        }

        @Override
        @SuppressWarnings("deprecation")
        public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval,
                                                                   long maxActive) {
            return new RecordingDetector<>(resource, samplingInterval);
        }
    }

    private static final class RecordingDetector<T> extends ResourceLeakDetector<T> {
        RecordingDetector(Class<T> resource, int samplingInterval) {
            super(resource, samplingInterval);
        }

        @Override
        protected boolean needReport() {
            return true; // record even when logging for Netty is switched off
        }

        @Override
        protected void reportTracedLeak(String resourceType, String records) {
            LEAKS.add("LEAK: " + resourceType + ".release() was not called before it was garbage-collected." + records);
            super.reportTracedLeak(resourceType, records);
        }

        @Override
        protected void reportUntracedLeak(String resourceType) {
            LEAKS.add("LEAK: " + resourceType + ".release() was not called before it was garbage-collected"
                    + " (no access records: run with -Dio.netty.leakDetection.level=paranoid)");
            super.reportUntracedLeak(resourceType);
        }
    }

}
