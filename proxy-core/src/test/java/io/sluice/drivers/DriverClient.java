package io.sluice.drivers;

import java.util.List;

/**
 * One client library as the driver matrix uses it: it opens sessions (each one client connection to Sluice), and a
 * session runs statements and server-side prepared statements, answering with rows of strings ({@code null} for SQL
 * NULL). The same scenario runs against every implementation: JDBC in this JVM ({@link JdbcClient}), a script in
 * another language ({@link ScriptedClient}), the {@code mariadb} command-line client ({@link MariaDbCliClient}).
 *
 * <p>An error from the server or the driver is a {@link DriverError}: the scenario expects none.
 */
interface DriverClient extends AutoCloseable {

    /** The library and its version, as the library itself reports them (for the matrix in docs/drivers.md). */
    String version();

    /** A new session, logged in to the matrix's database. */
    Session open();

    /** Closes every session still open and the library's own resources (its process, its pool). */
    @Override
    void close();

    /** One client connection. */
    interface Session extends AutoCloseable {

        /** Runs {@code sql} as a plain statement (text protocol); the rows of its result set, if any. */
        List<List<String>> query(String sql);

        /** Prepares {@code sql} (with {@code ?} placeholders) under {@code name}. */
        void prepare(String name, String sql);

        /** Executes the statement prepared under {@code name} with these parameters, bound as strings. */
        List<List<String>> execute(String name, String... parameters);

        @Override
        void close();
    }

    /** An error the driver reported, with the server's (or the driver's) error number when it has one. */
    final class DriverError extends RuntimeException {
        private final int code;

        DriverError(int code, String message) {
            super(code + ": " + message);
            this.code = code;
        }

        DriverError(int code, String message, Throwable cause) {
            super(code + ": " + message, cause);
            this.code = code;
        }

        int code() {
            return code;
        }
    }
}
