package io.sluice.metrics;

import io.netty.util.internal.OutOfDirectMemoryError;
import io.netty.util.internal.PlatformDependent;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.util.Locale;

/**
 * How much direct memory Sluice's buffers hold, and the limit ({@code -XX:MaxDirectMemorySize}, by default the heap's
 * maximum): what the exporter shows and what new connections are admitted by. Netty counts its own direct memory
 * when it allocates without the JDK's cleaner; otherwise (the default on Java 17, whose DirectByteBuffer constructor
 * Netty may not reach) its buffers are the JDK's, counted in the JDK's {@code direct} buffer pool.
 */
public final class DirectMemory {
    private static final BufferPoolMXBean JDK_DIRECT_POOL = ManagementFactory
            .getPlatformMXBeans(BufferPoolMXBean.class).stream()
            .filter(pool -> pool.getName().equals("direct")).findFirst().orElse(null);

    private DirectMemory() {
    }

    /** Direct memory in use now, in bytes; -1 when neither Netty nor the JDK counts it. */
    public static long used() {
        long netty = PlatformDependent.usedDirectMemory();
        if (netty >= 0) {
            return netty;
        }
        return JDK_DIRECT_POOL == null ? -1 : JDK_DIRECT_POOL.getMemoryUsed();
    }

    /** The most direct memory this JVM may use, in bytes. */
    public static long max() {
        return PlatformDependent.maxDirectMemory();
    }

    /**
     * Whether {@code failure} (or its cause) says direct memory ran out: Netty's {@link OutOfDirectMemoryError}, or
     * the JDK's {@code OutOfMemoryError: Cannot reserve ... bytes of direct buffer memory} (Java 8: "Direct buffer
     * memory").
     */
    public static boolean ranOut(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof OutOfDirectMemoryError
                    || t instanceof OutOfMemoryError
                    && String.valueOf(t.getMessage()).toLowerCase(Locale.ROOT).contains("direct buffer memory")) {
                return true;
            }
        }
        return false;
    }
}
