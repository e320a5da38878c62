package io.sluice.tls;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import io.sluice.config.ConfigException;
import javax.net.ssl.SSLException;

/**
 * One TLS handshake in memory against a server context, before it replaces the running one: it fails when the
 * certificate and the key do not belong together, which building the context does not always notice.
 */
final class TlsSelfCheck {
    private static final int ROUNDS = 20;

    private TlsSelfCheck() {
    }

    /** @throws ConfigException when the handshake does not complete */
    static void handshake(SslContext server) {
        SslHandler client;
        try {
            client = SslContextBuilder.forClient().trustManager(InsecureTrustManagerFactory.INSTANCE).build()
                    .newHandler(ByteBufAllocator.DEFAULT);
        } catch (SSLException e) {
            throw new ConfigException("server.tls: cannot check the certificate: " + e.getMessage(), e);
        }
        EmbeddedChannel clientSide = new EmbeddedChannel(client);
        EmbeddedChannel serverSide = new EmbeddedChannel(server.newHandler(ByteBufAllocator.DEFAULT));
        try {
            for (int round = 0; round < ROUNDS && !client.handshakeFuture().isDone(); round++) {
                pass(clientSide, serverSide);
                pass(serverSide, clientSide);
            }
        } catch (RuntimeException e) {
            throw new ConfigException("server.tls: the certificate and key do not work together: "
                    + (e.getCause() != null ? e.getCause().getMessage() : e.getMessage()), e);
        } finally {
            clientSide.finishAndReleaseAll();
            serverSide.finishAndReleaseAll();
        }
        if (!client.handshakeFuture().isSuccess()) {
            Throwable cause = client.handshakeFuture().cause();
            throw new ConfigException("server.tls: the certificate and key do not work together"
                    + (cause == null ? "" : ": " + cause.getMessage()), cause);
        }
    }

    private static void pass(EmbeddedChannel from, EmbeddedChannel to) {
        for (ByteBuf bytes; (bytes = from.readOutbound()) != null; ) {
            to.writeInbound(bytes);
        }
    }
}
