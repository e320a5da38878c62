package io.sluice.tls;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import io.sluice.config.TlsConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.security.cert.X509Certificate;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Configured certificate files are picked up when they change, without a restart: the next TLS session presents the
 * new certificate. A change that cannot be used yet (a key that does not match its certificate, as when a rotation
 * has written one file and not the other) keeps the running certificate.
 */
class CertificateReloadTest {

    @TempDir
    Path tmp;

    @Test
    void theNextSessionAfterAChangePresentsTheNewCertificate() throws Exception {
        GeneratedCertificates.Paths first = GeneratedCertificates.ensureIn(Files.createDirectory(tmp.resolve("a")));
        GeneratedCertificates.Paths second = GeneratedCertificates.ensureIn(Files.createDirectory(tmp.resolve("b")));
        Path cert = tmp.resolve("server-cert.pem");
        Path key = tmp.resolve("server-key.pem");
        install(first, cert, key, 0);
        ServerTls tls = ServerTls.create(new TlsConfig(true, cert, key, null, TlsConfig.VerifyClient.NONE, false,
                TlsConfig.Provider.JDK, TlsConfig.SUPPORTED_PROTOCOLS, null));
        X509Certificate before = presented(tls);
        assertThat(before.getEncoded()).isEqualTo(certificate(first.certFile()).getEncoded());

        tls.reloadIfChanged();
        assertThat(presented(tls).getEncoded()).as("nothing changed").isEqualTo(before.getEncoded());

        // Half a rotation: the new certificate with the old key cannot be used, and the running one stays.
        Files.copy(second.certFile(), cert, StandardCopyOption.REPLACE_EXISTING);
        Files.setLastModifiedTime(cert, FileTime.fromMillis(System.currentTimeMillis() + 60_000));
        tls.reloadIfChanged();
        assertThat(presented(tls).getEncoded()).as("half rotated").isEqualTo(before.getEncoded());

        install(second, cert, key, 120_000);
        tls.reloadIfChanged();
        assertThat(presented(tls).getEncoded()).isEqualTo(certificate(second.certFile()).getEncoded());
    }

    private static void install(GeneratedCertificates.Paths from, Path cert, Path key, long ahead) throws Exception {
        Files.copy(from.certFile(), cert, StandardCopyOption.REPLACE_EXISTING);
        Files.copy(from.keyFile(), key, StandardCopyOption.REPLACE_EXISTING);
        FileTime time = FileTime.fromMillis(System.currentTimeMillis() + ahead);
        Files.setLastModifiedTime(cert, time);
        Files.setLastModifiedTime(key, time);
    }

    private static X509Certificate certificate(Path pem) throws Exception {
        try (var in = Files.newInputStream(pem)) {
            return (X509Certificate) java.security.cert.CertificateFactory.getInstance("X.509")
                    .generateCertificate(in);
        }
    }

    /** A TLS handshake in memory between a client and a handler from {@code tls}; the server's certificate. */
    private static X509Certificate presented(ServerTls tls) throws Exception {
        SslHandler client = SslContextBuilder.forClient().trustManager(InsecureTrustManagerFactory.INSTANCE)
                .protocols(List.of("TLSv1.3", "TLSv1.2")).build().newHandler(ByteBufAllocator.DEFAULT);
        EmbeddedChannel clientChannel = new EmbeddedChannel(client);
        EmbeddedChannel serverChannel = new EmbeddedChannel(tls.newHandler(ByteBufAllocator.DEFAULT));
        try {
            for (int round = 0; round < 20 && !client.handshakeFuture().isDone(); round++) {
                pump(clientChannel, serverChannel);
                pump(serverChannel, clientChannel);
            }
            assertThat(client.handshakeFuture().isSuccess()).as("handshake").isTrue();
            return (X509Certificate) client.engine().getSession().getPeerCertificates()[0];
        } finally {
            clientChannel.finishAndReleaseAll();
            serverChannel.finishAndReleaseAll();
        }
    }

    private static void pump(EmbeddedChannel from, EmbeddedChannel to) {
        for (ByteBuf out; (out = from.readOutbound()) != null; ) {
            to.writeInbound(out);
        }
    }
}
