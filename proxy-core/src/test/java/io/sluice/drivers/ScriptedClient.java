package io.sluice.drivers;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * A client library in another language, driven through a small script of its own (under
 * {@code src/test/resources/drivers/}) that speaks this line protocol on stdin and stdout, fields separated by tabs:
 *
 * <pre>
 * started as:  SCRIPT HOST PORT USER PASSWORD DATABASE SERVER_PREPARE(0|1)
 * first line:  ready  VERSION-TEXT
 * commands:    open    SESSION
 *              query   SESSION  SQL
 *              prepare SESSION  NAME  SQL
 *              execute SESSION  NAME  PARAMETER...     (parameters bound as strings)
 *              close   SESSION
 * answers:     row  VALUE...   (zero or more; SQL NULL is \N)
 *              then ok, or: error  CODE  MESSAGE
 * </pre>
 *
 * At the end of stdin the script closes its connections and exits. SERVER_PREPARE asks for server-side prepared
 * statements where the library makes them optional (PDO, DBD::MariaDB).
 */
final class ScriptedClient implements DriverClient {

    /** Long enough for a statement that waits for a server connection (Sluice's timeout is shorter) on a busy CI. */
    private static final Duration ANSWER = Duration.ofSeconds(30);
    private static final Duration READY = Duration.ofSeconds(60);

    private final LineProcess process;
    private final String version;
    private final List<String> open = new ArrayList<>();
    private int sessions;

    /**
     * Starts {@code command} followed by the endpoint's arguments, and waits for its {@code ready} line.
     *
     * @param name for messages and thread names, e.g. "php-mysqli"
     */
    ScriptedClient(String name, List<String> command, Map<String, String> environment, Endpoint endpoint,
            boolean serverPrepare) {
        List<String> full = new ArrayList<>(command);
        full.addAll(List.of(endpoint.host(), String.valueOf(endpoint.port()), endpoint.user(), endpoint.password(),
                endpoint.database(), serverPrepare ? "1" : "0"));
        this.process = LineProcess.start(name, full, environment, false);
        String ready;
        try {
            ready = process.next(READY);
        } catch (AssertionError e) {
            process.close();
            throw e;
        }
        if (!ready.startsWith("ready\t")) {
            process.close();
            throw new AssertionError(name + ": expected a ready line first, got: " + ready + process.diagnostics());
        }
        this.version = ready.substring("ready\t".length());
    }

    @Override
    public String version() {
        return version;
    }

    @Override
    public Session open() {
        String id = "s" + ++sessions;
        call("open", id);
        open.add(id);
        return new ScriptedSession(id);
    }

    @Override
    public void close() {
        process.close(); // end of stdin: the script closes what is still open
    }

    /** Sends one command and reads its answer: the rows, or a {@link DriverError}. */
    private List<List<String>> call(String... fields) {
        for (String field : fields) {
            if (field.indexOf('\t') >= 0 || field.indexOf('\n') >= 0) {
                throw new IllegalArgumentException("no tabs or newlines in the line protocol: " + field);
            }
        }
        process.send(String.join("\t", fields));
        List<List<String>> rows = new ArrayList<>();
        while (true) {
            String line = process.next(ANSWER);
            if (line.equals("ok")) {
                return rows;
            }
            String[] f = line.split("\t", -1);
            switch (f[0]) {
                case "row" -> {
                    List<String> row = new ArrayList<>(f.length - 1);
                    for (int i = 1; i < f.length; i++) {
                        row.add(f[i].equals("\\N") ? null : f[i]);
                    }
                    rows.add(row);
                }
                case "error" -> throw new DriverError(Integer.parseInt(f[1]), f.length > 2 ? f[2] : "");
                default -> throw new AssertionError("unexpected line from the driver script: " + line
                        + process.diagnostics());
            }
        }
    }

    private final class ScriptedSession implements Session {
        private final String id;

        ScriptedSession(String id) {
            this.id = id;
        }

        @Override
        public List<List<String>> query(String sql) {
            return call("query", id, sql);
        }

        @Override
        public void prepare(String name, String sql) {
            call("prepare", id, name, sql);
        }

        @Override
        public List<List<String>> execute(String name, String... parameters) {
            List<String> fields = new ArrayList<>(List.of("execute", id, name));
            fields.addAll(Arrays.asList(parameters));
            return call(fields.toArray(String[]::new));
        }

        @Override
        public void close() {
            if (open.remove(id)) {
                call("close", id);
            }
        }
    }
}
