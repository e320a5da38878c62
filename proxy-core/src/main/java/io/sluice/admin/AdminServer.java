package io.sluice.admin;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.timeout.ReadTimeoutHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.sluice.Sluice;
import io.sluice.config.AdminConfig;
import io.sluice.config.ConfigException;
import io.sluice.transport.RelayEventLoopGroup;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin HTTP port ({@code admin.address:admin.port}, 127.0.0.1:3080 by default), served by Netty's HTTP codec
 * on a thread of its own, so that a scrape or a reload never runs on a thread that relays client traffic.
 *
 * <p>Endpoints: {@code GET /metrics}, {@code GET /health}, {@code GET /api/backends},
 * {@code POST /api/backends/{name}/drain} and {@code /undrain}, {@code GET /api/sessions[?verbose]},
 * {@code POST /api/config/reload}. Every {@code POST} needs {@code Authorization: Bearer <admin.token>}. See
 * docs/operations.md.
 */
public final class AdminServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AdminServer.class);

    /** Requests are small; anything larger is refused with 413 before it is buffered. */
    static final int MAX_REQUEST_BYTES = 16 * 1024;
    /** An idle keep-alive connection is closed after this long. */
    private static final int IDLE_SECONDS = 60;

    private final EventLoopGroup group;
    private final Channel serverChannel;

    private AdminServer(EventLoopGroup group, Channel serverChannel) {
        this.group = group;
        this.serverChannel = serverChannel;
    }

    /**
     * Opens the admin port.
     *
     * @throws ConfigException when the port cannot be bound
     */
    public static AdminServer start(AdminConfig config, Sluice sluice) {
        // NIO on purpose: one thread and a handful of connections, where the native transports gain nothing. A relay
        // group's loop, so that close() also closes kept-alive HTTP connections (decision 058).
        EventLoopGroup group = new RelayEventLoopGroup(1, new DefaultThreadFactory("sluice-admin", true),
                NioIoHandler.newFactory());
        try {
            Channel channel = new ServerBootstrap()
                    .group(group)
                    .channel(NioServerSocketChannel.class)
                    .option(ChannelOption.SO_REUSEADDR, true)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline()
                                    .addLast("idle", new ReadTimeoutHandler(IDLE_SECONDS, TimeUnit.SECONDS))
                                    .addLast("http", new HttpServerCodec())
                                    .addLast("aggregate", new HttpObjectAggregator(MAX_REQUEST_BYTES))
                                    .addLast("api", new AdminHandler(sluice, config.token()));
                        }
                    })
                    .bind(config.address(), config.port())
                    .syncUninterruptibly()
                    .channel();
            AdminServer server = new AdminServer(group, channel);
            log.info("Admin API on http://{}:{} (metrics at /metrics, health at /health){}", config.address(),
                    server.port(), config.token() == null ? "; POST calls are disabled until admin.token is set" : "");
            return server;
        } catch (Exception e) { // Netty rethrows the checked BindException unchecked
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            throw new ConfigException("admin.port: " + config.port() + " on " + config.address()
                    + " cannot be bound: " + e.getMessage(), e);
        }
    }

    /** The port the admin API listens on. */
    public int port() {
        return localAddress().getPort();
    }

    public InetSocketAddress localAddress() {
        return (InetSocketAddress) serverChannel.localAddress();
    }

    @Override
    public void close() {
        serverChannel.close().syncUninterruptibly();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
