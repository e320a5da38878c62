package io.sluice.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.uring.IoUring;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.sluice.config.Transport;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Sluice does not set {@code TCP_NODELAY} itself on client or server sockets: every Netty transport already sets it
 * when it creates a socket channel's config, and setting it again costs one {@code setsockopt} per connection on
 * the short-connection path (workload d of issue #3). This checks, on real sockets of each transport available
 * here, that the accepted and the connected channel have it on without being asked, as Sluice's bootstraps leave
 * them.
 */
class NoDelayByDefaultTest {

    @Test
    void acceptedAndConnectedChannelsHaveNoDelayWithoutTheOption() throws Exception {
        List<Transport> transports = new ArrayList<>(List.of(Transport.NIO));
        if (Epoll.isAvailable()) {
            transports.add(Transport.EPOLL);
        }
        if (IoUring.isAvailable()) {
            transports.add(Transport.IO_URING);
        }
        for (Transport transport : transports) {
            TransportKind kind = TransportKind.of(transport);
            EventLoopGroup group = kind.newEventLoopGroup(1, new DefaultThreadFactory("nodelay-" + kind.name()));
            try {
                CompletableFuture<Boolean> accepted = new CompletableFuture<>();
                Channel server = new ServerBootstrap()
                        .group(group, group)
                        .channelFactory(kind.serverChannelFactory())
                        .childOption(ChannelOption.SO_KEEPALIVE, true)
                        .childHandler(new ChannelInboundHandlerAdapter() {
                            @Override
                            public void channelActive(ChannelHandlerContext ctx) {
                                // left open: closing it here would race the client's own check below
                                accepted.complete(ctx.channel().config().getOption(ChannelOption.TCP_NODELAY));
                            }
                        })
                        .bind("127.0.0.1", 0).sync().channel();
                try {
                    Channel client = new Bootstrap()
                            .group(group)
                            .channelFactory(kind.socketChannelFactory())
                            .option(ChannelOption.SO_KEEPALIVE, true)
                            .handler(new ChannelInboundHandlerAdapter())
                            .connect((InetSocketAddress) server.localAddress()).sync().channel();
                    try {
                        assertThat(client.config().getOption(ChannelOption.TCP_NODELAY))
                                .as("connected %s channel", kind.name()).isTrue();
                        assertThat(accepted.get(10, TimeUnit.SECONDS))
                                .as("accepted %s channel", kind.name()).isTrue();
                    } finally {
                        client.close().sync();
                    }
                } finally {
                    server.close().sync();
                }
            } finally {
                group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
            }
        }
    }
}
