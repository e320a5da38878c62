package io.sluice.testing;

import io.netty.buffer.Unpooled;
import io.sluice.balancer.replication.MySqlGtidSet;
import io.sluice.protocol.Capabilities;
import io.sluice.protocol.HandshakeResponse41;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A MySQL 8.0 or 8.4 server played over TCP by rules, for the parts of Sluice that need a MySQL server where none is
 * installable (mysqld on the build machines is MariaDB's): a primary change's statements. It greets as MySQL, takes
 * any account (the password is not checked; the account is logged with each statement), answers Sluice's own
 * post-login commands, and keeps the state a primary change reads and changes, answering as MySQL does:
 *
 * <ul>
 *   <li>{@code read_only} and {@code super_read_only}, with MySQL's coupling: turning {@code super_read_only} on
 *       turns {@code read_only} on, turning {@code read_only} off turns {@code super_read_only} off; a write while
 *       either is on gets ERR 1290 ({@code ER_OPTION_PREVENTS_STATEMENT});</li>
 *   <li>{@code gtid_executed} (one transaction per write) and {@code WAIT_FOR_EXECUTED_GTID_SET}: 0 once the set
 *       is executed, which a replica whose SQL thread runs reaches by applying what its IO thread received, else 1
 *       (MySQL's timeout);</li>
 *   <li>the replica configuration: {@code CHANGE REPLICATION SOURCE TO} (refused while a replication thread runs,
 *       ERR 3021/3085 as MySQL), {@code START REPLICA} (refused unless configured, ERR 3079), {@code STOP REPLICA},
 *       {@code RESET REPLICA ALL} (refused while the threads run, ERR 3081), and {@code SHOW REPLICA STATUS} with
 *       MySQL 8.0.22+'s column names ({@code Source_Host}, {@code Replica_IO_Running}, ...). A replica's IO thread
 *       "receives" from the scripted server at its source's address: while that runs, it has that server's
 *       {@code gtid_executed}; once it stops, the IO thread says {@code Connecting} with MySQL's error 2003. The
 *       replication account is taken to authenticate with {@code caching_sha2_password} (the default since 8.0) over
 *       a connection without TLS: a replica pointed at a new source without {@code GET_SOURCE_PUBLIC_KEY = 1} cannot
 *       log in to it (error 2061, "Authentication requires secure connection"), as on a real server whose cache
 *       does not hold the account yet;</li>
 *   <li>{@code GET_LOCK(name, 0)}: 1, or 0 while another connection holds it; a lock ends with its connection.</li>
 *   <li>Sluice's reading of the triggers and views whose code leaves session state: none.</li>
 * </ul>
 *
 * MySQL 8.4 removed {@code SHOW SLAVE STATUS}, {@code CHANGE MASTER}, {@code START SLAVE}, {@code STOP SLAVE} and
 * {@code RESET SLAVE}: as {@link #MYSQL_84} it answers them with ERR 1064, as 8.4 does; as {@link #MYSQL_80} too, so
 * a test sees Sluice send none of them (8.0 still takes them, deprecated). Any other statement is logged and answered
 * with ERR 1064, which fails what sent it: a test asserts the exact statements each server received.
 */
public final class ScriptedMySqlServer implements AutoCloseable {
    /** The greeting's version of a MySQL 8.0 server. */
    public static final String MYSQL_80 = "8.0.36";
    /** The greeting's version of a MySQL 8.4 LTS server. */
    public static final String MYSQL_84 = "8.4.3";

    private static final int CAPABILITIES = ScriptedBackend.CAPABILITIES;
    private static final Pattern WAIT = Pattern.compile("SELECT WAIT_FOR_EXECUTED_GTID_SET\\('([^']*)', (\\d+)\\)");
    private static final Pattern GET_LOCK = Pattern.compile("SELECT GET_LOCK\\('([^']*)', 0\\)");
    private static final Pattern CHANGE_SOURCE = Pattern.compile("CHANGE REPLICATION SOURCE TO SOURCE_HOST = '([^']*)',"
            + " SOURCE_PORT = (\\d+), SOURCE_USER = '([^']*)', SOURCE_PASSWORD = '([^']*)', SOURCE_AUTO_POSITION = 1"
            + "(, GET_SOURCE_PUBLIC_KEY = 1)?");
    /** The servers by port, so a replica finds its source's state. */
    private static final Map<Integer, ScriptedMySqlServer> BY_PORT = new ConcurrentHashMap<>();

    /** One statement as the server received it, with the account of the connection it came on. */
    public record Statement(String user, String sql) {
    }

    private final String name;
    private final String version;
    private final String uuid;
    private final AtomicInteger connectionIds = new AtomicInteger(10);
    private final List<Statement> received = new CopyOnWriteArrayList<>();
    private final List<Socket> connections = new CopyOnWriteArrayList<>();
    private final List<String> refused = new CopyOnWriteArrayList<>();
    private final Map<String, Integer> locks = new HashMap<>();
    /** Statements to refuse once, with the error to send: a test's fault. */
    private final Map<String, byte[]> refuseOnce = new HashMap<>();
    private volatile ServerSocket listener;
    private int port;

    // The server's state, guarded by this.
    private boolean readOnly;
    private boolean superReadOnly;
    /** Volatile too: a replica reads its source's without taking the source's lock. */
    private volatile MySqlGtidSet executed = MySqlGtidSet.empty();
    private long lastTransaction;
    private boolean replicaConfigured;
    private boolean ioRunning;
    private boolean sqlRunning;
    private String sourceHost = "";
    private int sourcePort;
    private String sourceUser = "";
    private MySqlGtidSet retrieved = MySqlGtidSet.empty();
    private boolean holdApplying;
    /** GET_SOURCE_PUBLIC_KEY: without it (or TLS) a caching_sha2_password account cannot log in to a new source. */
    private boolean getSourcePublicKey;

    private ScriptedMySqlServer(String name, String version, String uuid) {
        this.name = name;
        this.version = version;
        this.uuid = uuid;
    }

    /** A writable server with {@code transactions} of its own committed, listening on a free port of 127.0.0.1. */
    public static ScriptedMySqlServer primary(String name, String version, String uuid, long transactions)
            throws IOException {
        ScriptedMySqlServer server = new ScriptedMySqlServer(name, version, uuid);
        server.lastTransaction = transactions;
        server.executed = transactions == 0 ? MySqlGtidSet.empty() : MySqlGtidSet.parse(uuid + ":1-" + transactions);
        server.listen(0);
        return server;
    }

    /**
     * A replica of {@code source}, read-only ({@code super_read_only}), both threads running, that has received all
     * its source has and applied all but {@code behind} of it.
     */
    public static ScriptedMySqlServer replicaOf(ScriptedMySqlServer source, String name, String uuid, long behind)
            throws IOException {
        ScriptedMySqlServer server = new ScriptedMySqlServer(name, source.version, uuid);
        server.readOnly = true;
        server.superReadOnly = true;
        server.replicaConfigured = true;
        server.ioRunning = true;
        server.sqlRunning = true;
        server.sourceHost = "127.0.0.1";
        server.sourcePort = source.port();
        server.sourceUser = "repl";
        server.getSourcePublicKey = true; // set up by an operator who knew
        long applied = source.lastTransaction - behind;
        server.executed = applied <= 0 ? MySqlGtidSet.empty()
                : MySqlGtidSet.parse(source.uuid + ":1-" + applied);
        server.listen(0);
        return server;
    }

    /** The data source URL of this server's database {@code schema}. */
    public String jdbcUrl(String schema) {
        return "jdbc:mysql://127.0.0.1:" + port + "/" + schema;
    }

    public int port() {
        return port;
    }

    public String name() {
        return name;
    }

    /** Every statement received on any connection, in order, with the connection's account. */
    public List<Statement> received() {
        return List.copyOf(received);
    }

    /** The statements received on connections of {@code user}, in order. */
    public List<String> receivedFrom(String user) {
        return received.stream().filter(s -> s.user().equals(user)).map(Statement::sql).toList();
    }

    /** The statements this server answered with ERR 1064: ones a MySQL server would not take, or unscripted. */
    public List<String> refused() {
        return List.copyOf(refused);
    }

    public synchronized boolean readOnly() {
        return readOnly;
    }

    public synchronized boolean superReadOnly() {
        return superReadOnly;
    }

    public synchronized boolean replicating() {
        return replicaConfigured && ioRunning && sqlRunning;
    }

    /** Where it replicates from, {@code host:port}, or {@code ""}. */
    public synchronized String source() {
        return replicaConfigured ? sourceHost + ":" + sourcePort : "";
    }

    public MySqlGtidSet gtidExecuted() {
        return executed;
    }

    /** What its IO thread received. */
    public synchronized MySqlGtidSet retrievedGtids() {
        return retrieved;
    }

    /**
     * While {@code held}, the SQL thread applies nothing by itself (a replica behind on applying what it received);
     * a {@code WAIT_FOR_EXECUTED_GTID_SET} then sees it apply all it received, as one that catches up within the wait.
     */
    public synchronized void holdApplying(boolean held) {
        holdApplying = held;
    }

    /** The next {@code sql} gets ERR {@code code} instead of its answer, and changes nothing. */
    public synchronized void refuseOnce(String sql, int code, String message) {
        refuseOnce.put(sql, MySqlWire.err(code, "HY000", message));
    }

    /** Points this replica at {@code host:port} from outside Sluice (another tool repointed it). */
    public synchronized void replicateFrom(String host, int newPort) {
        replicaConfigured = true;
        sourceHost = host;
        sourcePort = newPort;
    }

    /** The server dies: no more connections, the open ones closed. */
    public void kill() {
        ServerSocket socket = listener;
        listener = null;
        try {
            if (socket != null) {
                socket.close();
            }
        } catch (IOException e) {
            // closed anyway
        }
        for (Socket connection : connections) {
            try {
                connection.close();
            } catch (IOException e) {
                // closed anyway
            }
        }
        connections.clear();
    }

    /** The server starts again on its port, with the state it had (a crashed MySQL comes back writable if it was). */
    public void restart() throws IOException {
        listen(port);
    }

    @Override
    public void close() {
        kill();
        BY_PORT.remove(port, this);
    }

    private void listen(int at) throws IOException {
        ServerSocket socket = new ServerSocket();
        socket.setReuseAddress(true);
        socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), at));
        port = socket.getLocalPort();
        listener = socket;
        BY_PORT.put(port, this);
        Thread accepting = new Thread(() -> accept(socket), "scripted-mysql-" + name);
        accepting.setDaemon(true);
        accepting.start();
    }

    private void accept(ServerSocket socket) {
        while (!socket.isClosed()) {
            try {
                Socket connection = socket.accept();
                connections.add(connection);
                Thread serving = new Thread(() -> serve(connection), "scripted-mysql-" + name + "-connection");
                serving.setDaemon(true);
                serving.start();
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void serve(Socket socket) {
        int id = connectionIds.incrementAndGet();
        try (socket) {
            socket.setTcpNoDelay(true);
            DataInputStream in = new DataInputStream(socket.getInputStream());
            OutputStream out = socket.getOutputStream();
            byte[] scramble = "0123456789abcdefghij".getBytes(StandardCharsets.US_ASCII);
            out.write(MySqlWire.frame(0, MySqlWire.handshakeV10(version, id, scramble, CAPABILITIES,
                    MySqlWire.UTF8MB4_GENERAL_CI, MySqlWire.SERVER_STATUS_AUTOCOMMIT, "mysql_native_password")));
            out.flush();
            byte[] login = readPacket(in);
            if (login == null) {
                return;
            }
            HandshakeResponse41 response = HandshakeResponse41.parse(Unpooled.wrappedBuffer(login));
            String user = response.user();
            String schema = Capabilities.has(response.capabilities(), Capabilities.CLIENT_CONNECT_WITH_DB)
                    ? response.database() : null;
            boolean deprecateEof = Capabilities.has(response.capabilities(), Capabilities.CLIENT_DEPRECATE_EOF);
            out.write(MySqlWire.frame(2, MySqlWire.ok(MySqlWire.SERVER_STATUS_AUTOCOMMIT)));
            out.flush();
            byte[] command;
            while ((command = readPacket(in)) != null) {
                int c = command[0] & 0xFF;
                if (c == MySqlWire.COM_QUIT) {
                    return;
                }
                List<byte[]> answer;
                if (c == MySqlWire.COM_QUERY) {
                    String sql = new String(command, 1, command.length - 1, StandardCharsets.UTF_8);
                    received.add(new Statement(user, sql));
                    answer = answer(id, sql, schema, deprecateEof);
                } else {
                    if (c == MySqlWire.COM_INIT_DB) {
                        schema = new String(command, 1, command.length - 1, StandardCharsets.UTF_8);
                    }
                    answer = List.of(MySqlWire.ok(MySqlWire.SERVER_STATUS_AUTOCOMMIT)); // ping, reset, init db
                }
                out.write(MySqlWire.frames(1, answer));
                out.flush();
            }
        } catch (IOException | RuntimeException e) {
            // the connection ends; Sluice sees it closed
        } finally {
            connections.remove(socket);
            synchronized (this) {
                locks.values().removeIf(holder -> holder == id);
            }
        }
    }

    private synchronized List<byte[]> answer(int connection, String sql, String schema, boolean deprecateEof) {
        if (sql.startsWith("SET SESSION session_track_system_variables")
                || sql.equals("SET SESSION TRANSACTION READ ONLY")) {
            return ok();
        }
        if (sql.startsWith("SELECT DATABASE(), @@character_set_client")) {
            return ScriptedServerConnection.sessionCheckResult(schema, deprecateEof, sql.contains("session_track"),
                    sql.contains("read_only"));
        }
        catchUp();
        byte[] refusal = refuseOnce.remove(sql);
        if (refusal != null) {
            return List.of(refusal);
        }
        if (sql.startsWith("SELECT EVENT_OBJECT_TABLE AS name, ACTION_STATEMENT AS code FROM TRIGGERS")) {
            return row(deprecateEof, new String[] {"name", "code"}); // no trigger, no view (decision 200)
        }
        if (sql.equals("SELECT @@GLOBAL.read_only, @@GLOBAL.super_read_only, @@GLOBAL.gtid_executed")) {
            return row(deprecateEof, new String[] {"@@GLOBAL.read_only", "@@GLOBAL.super_read_only",
                "@@GLOBAL.gtid_executed"}, readOnly ? "1" : "0", superReadOnly ? "1" : "0", executed.toString());
        }
        if (sql.equals("SELECT @@GLOBAL.gtid_executed")) {
            return row(deprecateEof, new String[] {"@@GLOBAL.gtid_executed"}, executed.toString());
        }
        if (sql.equals("SHOW REPLICA STATUS")) {
            return replicaStatus(deprecateEof);
        }
        switch (sql) {
            case "SET GLOBAL super_read_only = ON" -> {
                superReadOnly = true;
                readOnly = true; // as MySQL: super_read_only implies read_only
                return ok();
            }
            case "SET GLOBAL super_read_only = OFF" -> {
                superReadOnly = false; // read_only stays as it was
                return ok();
            }
            case "SET GLOBAL read_only = ON" -> {
                readOnly = true;
                return ok();
            }
            case "SET GLOBAL read_only = OFF" -> {
                readOnly = false;
                superReadOnly = false; // as MySQL: read_only off turns super_read_only off
                return ok();
            }
            case "STOP REPLICA" -> {
                ioRunning = false;
                sqlRunning = false;
                return ok(); // on a server that is no replica MySQL warns (3084) and says OK
            }
            case "START REPLICA" -> {
                if (!replicaConfigured) {
                    return err(3079, "HY000", "Replica is not configured or failed to initialize properly. You must"
                            + " at least set --server-id to enable either a source or a replica.");
                }
                ioRunning = true;
                sqlRunning = true;
                return ok();
            }
            case "RESET REPLICA ALL" -> {
                if (ioRunning || sqlRunning) {
                    return err(3081, "HY000", "This operation cannot be performed with running replication threads;"
                            + " run STOP REPLICA FOR CHANNEL '' first");
                }
                replicaConfigured = false;
                sourceHost = "";
                sourcePort = 0;
                retrieved = MySqlGtidSet.empty();
                getSourcePublicKey = false;
                return ok();
            }
            default -> {
                // below
            }
        }
        Matcher wait = WAIT.matcher(sql);
        if (wait.matches()) {
            if (sqlRunning) {
                executed = executed.union(retrieved); // the applier catches up within the wait
            }
            boolean done = executed.isAtOrPast(MySqlGtidSet.parse(wait.group(1)));
            return row(deprecateEof, new String[] {sql.substring("SELECT ".length())}, done ? "0" : "1");
        }
        Matcher lock = GET_LOCK.matcher(sql);
        if (lock.matches()) {
            Integer holder = locks.putIfAbsent(lock.group(1), connection);
            return row(deprecateEof, new String[] {sql.substring("SELECT ".length())},
                    holder == null || holder == connection ? "1" : "0");
        }
        Matcher change = CHANGE_SOURCE.matcher(sql);
        if (change.matches()) {
            if (ioRunning || sqlRunning) {
                return err(3021, "HY000", "This operation cannot be performed with a running replica io thread;"
                        + " run STOP REPLICA IO_THREAD FOR CHANNEL '' first.");
            }
            replicaConfigured = true;
            sourceHost = change.group(1);
            sourcePort = Integer.parseInt(change.group(2));
            sourceUser = change.group(3);
            getSourcePublicKey = change.group(5) != null;
            return ok();
        }
        if (sql.startsWith("INSERT ") || sql.startsWith("UPDATE ") || sql.startsWith("DELETE ")) {
            if (readOnly || superReadOnly) {
                return err(1290, "HY000", "The MySQL server is running with the " + (superReadOnly
                        ? "--super-read-only" : "--read-only") + " option so it cannot execute this statement");
            }
            lastTransaction++;
            executed = executed.union(MySqlGtidSet.parse(uuid + ":" + lastTransaction));
            return List.of(MySqlWire.ok(1, 0, MySqlWire.SERVER_STATUS_AUTOCOMMIT, 0, ""));
        }
        refused.add(sql); // SHOW SLAVE STATUS, CHANGE MASTER, ... among them
        return err(1064, "42000", "You have an error in your SQL syntax; check the manual that corresponds to your"
                + " MySQL server version for the right syntax to use near '" + sql + "' at line 1");
    }

    /** The IO thread receives from its source while both run; the SQL thread applies what was received. */
    private void catchUp() {
        ScriptedMySqlServer source = replicaConfigured ? BY_PORT.get(sourcePort) : null;
        if (ioRunning && sourceReachable(source) && getSourcePublicKey) {
            MySqlGtidSet there = source.gtidExecuted();
            retrieved = retrieved.union(there);
        }
        if (sqlRunning && !holdApplying) {
            executed = executed.union(retrieved);
        }
    }

    private static boolean sourceReachable(ScriptedMySqlServer source) {
        return source != null && source.listener != null;
    }

    private List<byte[]> replicaStatus(boolean deprecateEof) {
        String[] names = {"Replica_IO_State", "Source_Host", "Source_User", "Source_Port", "Replica_IO_Running",
            "Replica_SQL_Running", "Last_IO_Errno", "Last_IO_Error", "Last_SQL_Error", "Seconds_Behind_Source",
            "Retrieved_Gtid_Set", "Executed_Gtid_Set", "Auto_Position"};
        if (!replicaConfigured) {
            return row(deprecateEof, names);
        }
        ScriptedMySqlServer source = BY_PORT.get(sourcePort);
        boolean reachable = sourceReachable(source);
        boolean connected = ioRunning && reachable && getSourcePublicKey;
        String io = !ioRunning ? "No" : connected ? "Yes" : "Connecting";
        String ioError = !ioRunning || connected ? "" : "error connecting to source '" + sourceUser + "@" + sourceHost
                + ":" + sourcePort + "' - retry-time: 60 retries: 1 message: " + (reachable
                ? "Authentication plugin 'caching_sha2_password' reported error: Authentication requires secure"
                + " connection." : "Can't connect to MySQL server on '" + sourceHost + ":" + sourcePort + "' (111)");
        String state = !ioRunning ? "" : connected ? "Waiting for source to send event"
                : "Connecting to source";
        return row(deprecateEof, names, state, sourceHost, sourceUser, String.valueOf(sourcePort), io,
                sqlRunning ? "Yes" : "No", ioError.isEmpty() ? "0" : reachable ? "2061" : "2003", ioError, "",
                connected && sqlRunning ? "0" : null, retrieved.toString(), executed.toString(), "1");
    }

    private static List<byte[]> ok() {
        return List.of(MySqlWire.ok(MySqlWire.SERVER_STATUS_AUTOCOMMIT));
    }

    private static List<byte[]> err(int code, String state, String message) {
        return List.of(MySqlWire.err(code, state, message));
    }

    /** A result of {@code names}' columns: one row of {@code values}, or none when there are none. */
    private static List<byte[]> row(boolean deprecateEof, String[] names, String... values) {
        List<byte[]> columns = new ArrayList<>();
        for (String column : names) {
            columns.add(MySqlWire.columnDefinition(column, MySqlWire.MYSQL_TYPE_VAR_STRING));
        }
        return MySqlWire.resultSet(deprecateEof, columns, values.length == 0 ? List.of()
                : List.of(MySqlWire.textRow(values)), MySqlWire.SERVER_STATUS_AUTOCOMMIT);
    }

    private static byte[] readPacket(DataInputStream in) throws IOException {
        byte[] header = new byte[4];
        try {
            in.readFully(header);
        } catch (java.io.EOFException e) {
            return null;
        }
        int length = (header[0] & 0xFF) | (header[1] & 0xFF) << 8 | (header[2] & 0xFF) << 16;
        byte[] payload = new byte[length];
        in.readFully(payload);
        return payload;
    }
}
