package io.sluice.bootstrap.demo;

import java.nio.file.Path;

/** What the demo prints once it serves: how to connect, what to try, how to stop, and how to use a real server. */
final class DemoInstructions {

    /** The first line; bin/start.sh prints from here to {@link #LAST_LINE}. */
    static final String FIRST_LINE = "---- Sluice demo mode";
    static final String LAST_LINE = "---- end of the demo's instructions";

    private DemoInstructions() {
    }

    /**
     * @param client the command that runs the demo's own MariaDB client
     * @param ca the CA certificate clients that verify the server trust
     */
    static String text(int port, int adminPort, Path client, Path ca) {
        String connect = "-h127.0.0.1 -P" + port + " -u" + SluiceDemo.USER + " -p" + SluiceDemo.PASSWORD + " "
                + ShopDatabase.SCHEMA;
        return FIRST_LINE + " (an embedded MariaDB with sample data; not for production) ----\n"
                + "Sluice listens on 127.0.0.1:" + port + "; log in as " + SluiceDemo.USER + " / "
                + SluiceDemo.PASSWORD + ". The sample schema is " + ShopDatabase.SCHEMA
                + ": customers, products, orders, order_items.\n"
                + "  mariadb CLI:  mariadb " + connect + "\n"
                + "  no client installed? The demo's own:\n"
                + "                " + client + " " + connect + "\n"
                + "  JDBC:         jdbc:mariadb://127.0.0.1:" + port + "/" + ShopDatabase.SCHEMA + "?user="
                + SluiceDemo.USER + "&password=" + SluiceDemo.PASSWORD + "\n"
                + "  TLS:          clients that verify the server trust " + ca + "\n"
                + "  try:          SELECT c.name, SUM(p.price * i.quantity) AS spent FROM orders o"
                + " JOIN customers c ON c.id = o.customer_id JOIN order_items i ON i.order_id = o.id"
                + " JOIN products p ON p.id = i.product_id GROUP BY c.name;\n"
                + "  admin API:    http://127.0.0.1:" + adminPort + "/metrics, /api/backends, /api/sessions\n"
                + "Stop it with bin/stop.sh (Ctrl-C in the foreground): the embedded database and its data are"
                + " deleted.\n"
                + "A real server: set dataSources (url, username, password) and authority.users in conf/config.yaml,"
                + " then run bin/start.sh without --demo (docs/configuration.md).\n"
                + LAST_LINE + "\n";
    }
}
