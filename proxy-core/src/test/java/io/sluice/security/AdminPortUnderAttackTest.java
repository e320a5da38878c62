package io.sluice.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.sluice.config.AdminConfig;
import io.sluice.testing.ProxyUnderTest;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The admin port under hostile clients (issue #42): clients that trickle their headers (slowloris), more connections
 * than the port takes, and oversized headers and bodies. {@code /livez} keeps answering within 100 ms throughout, and
 * the slow clients are closed at the request timeout.
 */
@Tag("server")
class AdminPortUnderAttackTest {

    private static final int SLOW = 8;
    private static final int MANY = 150;

    @Test
    void livezAnswersWithin100MillisecondsWhileSlowManyAndOversizedClientsAttack() throws Exception {
        assumeFalse(ProxyUnderTest.isDirect(), "the admin port is Sluice's");
        try (ProxyUnderTest proxy = ProxyUnderTest.builder().admin(AdminConfig.on("127.0.0.1", 0, "t0ken")).start()) {
            int port = proxy.adminPort();
            for (int i = 0; i < 5; i++) {
                livezMillis(port); // warm: the first requests load classes
            }
            assertThat(livezMillis(port)).isLessThan(100);
            List<Socket> attackers = new ArrayList<>();
            try {
                // Slowloris: more than the old 4 threads, each sending a byte of its headers now and then.
                for (int i = 0; i < SLOW; i++) {
                    Socket s = open(port);
                    s.getOutputStream().write("GET /livez HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII));
                    attackers.add(s);
                }
                // Many: connections that send nothing, past the connection limit.
                for (int i = 0; i < MANY; i++) {
                    try {
                        attackers.add(open(port));
                    } catch (IOException e) {
                        // refused or reset: the port is full, as it may be
                    }
                }
                // Oversized: headers over the limit get 431, a body over it 413 before it is sent.
                try (Socket big = open(port)) {
                    String head = "GET /livez HTTP/1.1\r\nX-Filler: " + "x".repeat(10_000) + "\r\n\r\n";
                    big.getOutputStream().write(head.getBytes(StandardCharsets.US_ASCII));
                    assertThat(readAll(big)).startsWith("HTTP/1.1 431");
                }
                try (Socket big = open(port)) {
                    big.getOutputStream().write(("POST /api/config/reload HTTP/1.1\r\nAuthorization: Bearer t0ken\r\n"
                            + "Content-Length: 100000000\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                    assertThat(readAll(big)).startsWith("HTTP/1.1 413");
                }
                long worst = 0;
                long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(7); // past the 5 s request timeout
                int trickled = 0;
                while (System.nanoTime() - end < 0) {
                    for (Socket s : attackers.subList(0, Math.min(SLOW, attackers.size()))) {
                        try {
                            s.getOutputStream().write('X'); // a header that never ends
                        } catch (IOException e) {
                            // closed by the port: what it should do at the request timeout
                        }
                    }
                    trickled++;
                    worst = Math.max(worst, livezMillis(port));
                    Thread.sleep(200);
                }
                System.out.printf("slowest /livez under attack: %d ms over %d rounds%n", worst, trickled);
                assertThat(worst).as("slowest /livez under attack, over %d rounds", trickled).isLessThan(100);
                // The slowloris connections were closed at the request timeout.
                for (Socket s : attackers.subList(0, SLOW)) {
                    s.setSoTimeout(2_000);
                    assertThat(readAll(s)).as("a slow client's connection").isEmpty();
                }
            } finally {
                for (Socket s : attackers) {
                    s.close();
                }
            }
            assertThat(livezMillis(port)).isLessThan(100);
        }
    }

    private static Socket open(int port) throws IOException {
        Socket s = new Socket();
        s.connect(new InetSocketAddress("127.0.0.1", port), 1_000);
        s.setSoTimeout(5_000);
        return s;
    }

    /** One GET /livez on a new connection, to its whole answer: how long it took, in ms. */
    private static long livezMillis(int port) throws IOException {
        long begin = System.nanoTime();
        try (Socket s = open(port)) {
            s.getOutputStream().write("GET /livez HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            String answer = readAll(s);
            assertThat(answer).startsWith("HTTP/1.1 200");
        }
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begin);
    }

    private static String readAll(Socket s) throws IOException {
        InputStream in = s.getInputStream();
        try {
            return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
        } catch (java.net.SocketException e) {
            return ""; // reset: closed without an answer
        }
    }
}
