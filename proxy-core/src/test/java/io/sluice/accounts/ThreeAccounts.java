package io.sluice.accounts;

import io.sluice.testing.TestMariaDb;

/**
 * Three server accounts of different grants on a database of their own, on the shared MariaDB (prefix {@code acc_}):
 * {@code acc_reader} may only read it, {@code acc_writer} may also change its rows, {@code acc_admin} may do anything
 * in it and see every session ({@code PROCESS}). Each exists for the hosts Sluice may connect from, with
 * mysql_native_password.
 */
public final class ThreeAccounts implements AutoCloseable {
    public static final String READER = "acc_reader";
    public static final String WRITER = "acc_writer";
    public static final String ADMIN = "acc_admin";
    public static final String READER_PASSWORD = "reader-pw-1";
    public static final String WRITER_PASSWORD = "writer-pw-1";
    public static final String ADMIN_PASSWORD = "admin-pw-1";
    private static final String[] HOSTS = {"%", "localhost", "127.0.0.1"};

    private final TestMariaDb mariaDb = TestMariaDb.get();
    /** The database the three accounts have their grants on. */
    public final String db;

    public ThreeAccounts() {
        db = mariaDb.createDatabase("acc");
        mariaDb.executeIn(db, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))", "INSERT INTO t VALUES (1, 'one')");
        for (String host : HOSTS) {
            create(READER, host, READER_PASSWORD, "GRANT SELECT ON `" + db + "`.* TO ");
            create(WRITER, host, WRITER_PASSWORD, "GRANT SELECT, INSERT, UPDATE, DELETE ON `" + db + "`.* TO ");
            create(ADMIN, host, ADMIN_PASSWORD, "GRANT ALL PRIVILEGES ON `" + db + "`.* TO ");
            mariaDb.execute("GRANT PROCESS ON *.* TO " + account(ADMIN, host));
        }
    }

    private void create(String user, String host, String password, String grant) {
        String account = account(user, host);
        mariaDb.execute("DROP USER IF EXISTS " + account,
                "CREATE USER " + account + " IDENTIFIED VIA mysql_native_password USING PASSWORD('" + password + "')",
                grant + account);
    }

    static String account(String user, String host) {
        return "'" + user + "'@'" + host + "'";
    }

    /** Runs statements as root on the server. */
    public void execute(String... sql) {
        mariaDb.execute(sql);
    }

    @Override
    public void close() {
        for (String host : HOSTS) {
            mariaDb.execute("DROP USER IF EXISTS " + account(READER, host), "DROP USER IF EXISTS " + account(WRITER, host),
                    "DROP USER IF EXISTS " + account(ADMIN, host));
        }
        mariaDb.dropDatabase(db);
    }
}
