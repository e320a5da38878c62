package io.sluice.drivers;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The {@code mariadb} command-line client (libmariadb), one process per session, as a shell script or a cron job
 * runs it: {@code --batch} on a pipe, statements one by one. After each statement a marker {@code SELECT} tells
 * where its output ends; with {@code --force} an error is printed (to stderr, merged into stdout in order) and the
 * session goes on. It has no prepared statements of the binary protocol.
 */
final class MariaDbCliClient implements DriverClient {

    private static final String END = "<<sluice-end>>";
    private static final Pattern ERROR =
            Pattern.compile("^ERROR (\\d+)(?: \\([0-9A-Z]{5}\\))?(?: at line \\d+)?: (.*)$");
    private static final Duration ANSWER = Duration.ofSeconds(30);

    private final Path executable;
    private final Endpoint endpoint;
    private final List<CliSession> open = new ArrayList<>();
    private final String version;
    private int sessions;

    MariaDbCliClient(Path executable, Endpoint endpoint, String version) {
        this.executable = executable;
        this.endpoint = endpoint;
        this.version = version;
    }

    @Override
    public String version() {
        return version;
    }

    @Override
    public Session open() {
        List<String> command = List.of(executable.toString(), "--no-defaults",
                "--host=" + endpoint.host(), "--port=" + endpoint.port(), "--user=" + endpoint.user(),
                "--password=" + endpoint.password(), "--database=" + endpoint.database(),
                "--batch", "--skip-column-names", "--raw", "--unbuffered", "--force");
        CliSession session = new CliSession(LineProcess.start("mariadb-" + ++sessions, command, Map.of(), true));
        open.add(session);
        try {
            session.query("SELECT 'logged in'"); // the login happens at start: its error shows here
        } catch (RuntimeException | AssertionError e) {
            session.close();
            throw e;
        }
        return session;
    }

    @Override
    public void close() {
        for (CliSession session : new ArrayList<>(open)) {
            session.close();
        }
    }

    private final class CliSession implements Session {
        private final LineProcess process;

        CliSession(LineProcess process) {
            this.process = process;
        }

        @Override
        public List<List<String>> query(String sql) {
            if (sql.contains(";")) {
                throw new IllegalArgumentException("one statement at a time: " + sql);
            }
            process.send(sql + ";");
            process.send("SELECT '" + END + "';");
            List<List<String>> rows = new ArrayList<>();
            DriverError error = null;
            while (true) {
                String line;
                try {
                    line = process.next(ANSWER);
                } catch (AssertionError ended) {
                    // The client exits when it cannot log in: its ERROR line came before the end of its output.
                    if (error != null) {
                        throw error;
                    }
                    throw ended;
                }
                if (line.equals(END)) {
                    break;
                }
                Matcher m = ERROR.matcher(line);
                if (m.matches()) {
                    error = new DriverError(Integer.parseInt(m.group(1)), m.group(2));
                    continue;
                }
                List<String> row = new ArrayList<>();
                for (String value : line.split("\t", -1)) {
                    row.add(value.equals("NULL") ? null : value);
                }
                rows.add(row);
            }
            if (error != null) {
                throw error;
            }
            return rows;
        }

        @Override
        public void prepare(String name, String sql) {
            throw new UnsupportedOperationException("the mariadb client has no binary-protocol prepared statements");
        }

        @Override
        public List<List<String>> execute(String name, String... parameters) {
            throw new UnsupportedOperationException("the mariadb client has no binary-protocol prepared statements");
        }

        @Override
        public void close() {
            if (open.remove(this)) {
                process.close(); // end of input: the client sends COM_QUIT and exits
            }
        }
    }
}
