package io.sluice.backend.pool;

import io.sluice.backend.BackendConnection;
import io.sluice.backend.SessionKey;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.ChannelConfig;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.Transport;
import io.sluice.protocol.Capabilities;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.TestMariaDb;
import io.sluice.transport.TransportKind;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * How a pooled server connection reads, on a real connection to MariaDB: up to Netty's 16 reads per readiness event
 * (not 1, which an allocator given as a channel option keeps unless told), starting at 16 KiB per read.
 */
@ExtendWith(LeakDetection.class)
@Tag("server")
class ServerReadsTest {

    @Test
    void aServerConnectionReadsOnWhileItsReadsFillTheirBuffers() throws Exception {
        TestMariaDb mariaDb = TestMariaDb.get();
        String db = mariaDb.createDatabase("sluice_server_reads");
        TransportKind transport = TransportKind.of(Transport.AUTO);
        EventLoopGroup loops = transport.newEventLoopGroup(1, new DefaultThreadFactory("server-reads-test"));
        EventLoopGroup checks = transport.newEventLoopGroup(1, new DefaultThreadFactory("server-reads-check"));
        SessionKey key = new SessionKey(Capabilities.PROXY_SUPPORTED & ~Capabilities.CLIENT_MULTI_STATEMENTS, 45);
        BackendPool pool = new BackendPool(DataSourceConfig.of("reads", mariaDb.jdbcUrl(db), TestMariaDb.ROOT_USER, ""),
                loops, transport, 32 * 1024, key, checks.next());
        try {
            EventLoop loop = (EventLoop) loops.next();
            BackendConnection connection = loop.submit(() -> pool.forLoop(loop).acquire(key, db)).get(10, TimeUnit.SECONDS)
                    .get(10, TimeUnit.SECONDS);

            ChannelConfig config = connection.channel().config();
            assertThat(config.getMaxMessagesPerRead()).isEqualTo(BackendConnector.SERVER_READS_PER_WAKE_UP).isEqualTo(16);
            RecvByteBufAllocator.Handle handle = config.getRecvByteBufAllocator().newHandle();
            assertThat(handle.guess()).isEqualTo(BackendConnector.SERVER_READ_MIN_BYTES);
            loop.submit(() -> pool.forLoop(loop).returnUnused(connection)).get(10, TimeUnit.SECONDS);
        } finally {
            pool.close(10_000);
            loops.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
            checks.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
            mariaDb.dropDatabase(db);
        }
    }
}
