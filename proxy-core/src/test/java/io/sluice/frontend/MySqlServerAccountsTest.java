package io.sluice.frontend;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.sluice.auth.Credential;
import io.sluice.auth.PasswordHash;
import io.sluice.auth.RsaKeyPair;
import io.sluice.config.ServerAccountsConfig;
import io.sluice.protocol.HandshakeResponse41;
import io.sluice.protocol.HandshakeV10;
import io.sluice.protocol.Scramble;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.MemoryChannel.Packet;
import io.sluice.testing.MySqlWire;
import io.sluice.testing.ScriptedClient;
import io.sluice.testing.ScriptedServerConnection;
import io.sluice.testing.ScriptedSluice;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code users: FROM_BACKEND} in front of MySQL 8.0 (issue #39, decisions 146 and 172). This machine has no MySQL
 * server, so the server is scripted ({@link io.sluice.testing.ScriptedBackend}): it answers MariaDB's
 * {@code mysql.global_priv} query with MySQL's ERR 1146, and MySQL's {@code mysql.user} query with rows as MySQL 8.0
 * stores them: {@code authentication_string} as {@code *HEX} for mysql_native_password and {@code $A$005$} SHA-256
 * crypt for caching_sha2_password (MySQL 8's default), {@code account_locked} as {@code Y}/{@code N}, host patterns,
 * MySQL's own locked system accounts, an {@code auth_socket} account. Every step between the client and the scripted
 * server is Sluice's own code; the tests against MariaDB cover the rest.
 */
@ExtendWith(LeakDetection.class)
class MySqlServerAccountsTest {
    private static final byte[] SERVER_NONCE = "0123456789abcdefghij".getBytes(StandardCharsets.US_ASCII);
    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    private ScriptedSluice sluice;
    private ServerAccounts accounts;

    @BeforeEach
    void start() {
        sluice = ScriptedSluice.sessionPooling(4);
        // No rate limit between readings; scheduled on the scripted loop, which runs when the test says.
        accounts = sluice.context().useServerAccounts(new ServerAccountsConfig(60_000, 0),
                sluice.loop().loop()); // the first reading at the loop's next turn, the next in a minute
    }

    @AfterEach
    void stop() {
        sluice.close();
    }

    /** {@code SELECT ... FROM user} as MySQL 8.0.36 answers it. */
    private static List<byte[]> mysqlUserRows(boolean deprecateEof) {
        List<byte[]> columns = new ArrayList<>();
        for (String name : new String[] {"user", "host", "plugin", "hash", "locked", "role"}) {
            columns.add(MySqlWire.columnDefinition(name, MySqlWire.MYSQL_TYPE_VAR_STRING));
        }
        List<byte[]> rows = List.of(
                MySqlWire.textRow("acct2_native", "%", "mysql_native_password", PasswordHash.nativeHash("any-pw"),
                        "N", "N"),
                MySqlWire.textRow("acct2_native", "127.0.0.1", "mysql_native_password",
                        PasswordHash.nativeHash("local-pw"), "N", "N"),
                MySqlWire.textRow("acct2_native", "10.0.0.%", "mysql_native_password",
                        PasswordHash.nativeHash("net-pw"), "N", "N"),
                MySqlWire.textRow("acct2_sha2", "%", "caching_sha2_password", PasswordHash.cachingSha2Hash("sha2-pw"),
                        "N", "N"),
                MySqlWire.textRow("acct2_locked", "%", "mysql_native_password", PasswordHash.nativeHash("locked-pw"),
                        "Y", "N"),
                MySqlWire.textRow("acct2_sock", "localhost", "auth_socket", "", "N", "N"),
                MySqlWire.textRow("mysql.sys", "localhost", "caching_sha2_password",
                        "$A$005$THISISACOMBINATIONOFINVALIDSALTANDPASSWORDTHATMUSTNEVERBRBEUSED", "Y", "N"),
                MySqlWire.textRow("root", "localhost", "caching_sha2_password", PasswordHash.cachingSha2Hash("r"),
                        "N", "N"));
        return MySqlWire.resultSet(deprecateEof, columns, rows, MySqlWire.SERVER_STATUS_AUTOCOMMIT);
    }

    /** Plays the first reading: MariaDB's table is missing, MySQL's answers. */
    private void answerFirstReading() {
        ScriptedServerConnection mariaDbTry = sluice.backend().next().login();
        mariaDbTry.expectQuery(ServerAccounts.MARIADB_ACCOUNTS);
        mariaDbTry.respond(MySqlWire.err(1146, "42S02", "Table 'mysql.global_priv' doesn't exist"));
        answerMySqlReading();
    }

    private void answerMySqlReading() {
        ScriptedServerConnection mysql = sluice.backend().next().login();
        assertThat(mysql.schema()).as("the reading's connection logs in to the mysql schema").isEqualTo("mysql");
        mysql.expectQuery(ServerAccounts.MYSQL_ACCOUNTS);
        mysql.respond(mysqlUserRows(mysql.deprecateEof()));
    }

    private void read() {
        CompletableFuture<Void> reading = accounts.refresh();
        sluice.loop().runTasks();
        answerFirstReading();
        sluice.loop().runTasks();
        assertThat(reading).isDone();
    }

    @Test
    void mySql8AccountsAreReadAsTheServerMatchesThem() {
        read();
        ProxyUsers users = sluice.context().users();
        assertThat(accounts.accounts()).as("all but the two locked accounts").isEqualTo(6);
        assertThat(users.find("acct2_native", LOOPBACK).host()).as("the most specific host first")
                .isEqualTo("127.0.0.1");
        assertThat(users.find("acct2_locked", LOOPBACK)).as("account_locked = Y").isNull();
        assertThat(users.find("mysql.sys", LOOPBACK)).isNull();
        assertThat(users.find("acct2_sha2", LOOPBACK).credential()).isInstanceOf(Credential.CachingSha2Hash.class);
        assertThat(users.find("acct2_sock", LOOPBACK).unsupportedPlugin()).isEqualTo("auth_socket");
    }

    /**
     * A mysql_native_password account of MySQL: the client's scramble is checked against the stored hash, and Sluice
     * logs in to the server as the account with the stage-one hash it yields, answering the server's own nonce.
     */
    @Test
    void aNativeAccountLogsInToMySqlAsItself() {
        read();
        ScriptedClient client = sluice.connect();
        byte[] nonce = greetingNonce(client);
        client.channel().deliver(MySqlWire.frame(1, MySqlWire.handshakeResponse41(ScriptedClient.CAPABILITIES
                        | io.sluice.protocol.Capabilities.CLIENT_CONNECT_WITH_DB, 1 << 24, MySqlWire.UTF8MB4_GENERAL_CI,
                "acct2_native", Scramble.nativePassword("local-pw", nonce), "app", "mysql_native_password")));
        sluice.loop().runTasks();
        ScriptedServerConnection server = sluice.backend().next().greet();
        HandshakeResponse41 login = server.expectLoginOfAnyAccount();
        assertThat(login.user()).isEqualTo("acct2_native");
        assertThat(login.authResponse()).isEqualTo(Scramble.nativePassword("local-pw", SERVER_NONCE));
        server.acceptAndCheck(2);
        client.expectOk();
        client.quit();
        sluice.loop().runTasks();
    }

    /**
     * MySQL 8's default, caching_sha2_password: the stored SHA-256 crypt cannot check a scramble, so the client is
     * asked for the full path (here on a plain connection: the password RSA-encrypted with Sluice's key); Sluice then
     * logs in to the server with the password, through the server's switch to caching_sha2_password and fast path.
     */
    @Test
    void aCachingSha2AccountTakesTheFullPathAndLogsInToMySqlAsItself() throws Exception {
        read();
        ScriptedClient client = sluice.connect();
        byte[] nonce = greetingNonce(client);
        client.channel().deliver(MySqlWire.frame(1, MySqlWire.handshakeResponse41(ScriptedClient.CAPABILITIES
                        | io.sluice.protocol.Capabilities.CLIENT_CONNECT_WITH_DB, 1 << 24, MySqlWire.UTF8MB4_GENERAL_CI,
                "acct2_sha2", Scramble.cachingSha2Password("sha2-pw", nonce), "app", "caching_sha2_password")));
        sluice.loop().runTasks();
        Packet fullPath = client.expectPacket();
        assertThat(fullPath.payload()).as("perform_full_authentication").containsExactly(0x01, 0x04);
        client.channel().deliver(MySqlWire.frame(fullPath.sequenceId() + 1, new byte[] {0x02})); // the public key
        sluice.loop().runTasks();
        Packet key = client.expectPacket();
        String pem = new String(key.payload(), 1, key.payload().length - 1, StandardCharsets.US_ASCII);
        client.channel().deliver(MySqlWire.frame(key.sequenceId() + 1,
                RsaKeyPair.encryptPassword("sha2-pw", nonce, pem)));
        sluice.loop().runTasks();

        ScriptedServerConnection server = sluice.backend().next().greet();
        HandshakeResponse41 login = server.expectLoginOfAnyAccount();
        assertThat(login.user()).isEqualTo("acct2_sha2");
        byte[] switchNonce = "abcdefghij0123456789".getBytes(StandardCharsets.US_ASCII);
        server.send(MySqlWire.frame(2, MySqlWire.payload().int1(0xFE).strNul("caching_sha2_password")
                .bytes(switchNonce).int1(0).toBytes()));
        Packet answer = server.expectPacket();
        assertThat(answer.payload()).isEqualTo(Scramble.cachingSha2Password("sha2-pw", switchNonce));
        server.send(MySqlWire.frame(4, new byte[] {0x01, 0x03})); // fast_auth_success
        server.acceptAndCheck(5);
        client.expectOk();
        client.quit();
        sluice.loop().runTasks();
    }

    /** A locked account is denied as MySQL denies it, after one more reading (an unknown user asks for it). */
    @Test
    void aLockedAccountIsDenied() {
        read();
        ScriptedClient client = sluice.connect();
        byte[] nonce = greetingNonce(client);
        client.channel().deliver(MySqlWire.frame(1, MySqlWire.handshakeResponse41(ScriptedClient.CAPABILITIES,
                1 << 24, MySqlWire.UTF8MB4_GENERAL_CI, "acct2_locked", Scramble.nativePassword("locked-pw", nonce),
                null, "mysql_native_password")));
        sluice.loop().runTasks();
        answerMySqlReading(); // straight to mysql.user: Sluice remembers which server it reads
        sluice.loop().runTasks();
        assertThat(client.expectErr(1045)).contains("Access denied for user 'acct2_locked'");
    }

    private static byte[] greetingNonce(ScriptedClient client) {
        Packet greeting = client.expectPacket();
        byte[] nonce = HandshakeV10.parse(Unpooled.wrappedBuffer(greeting.payload())).nonce();
        return Arrays.copyOf(nonce, Scramble.NONCE_LENGTH);
    }
}
