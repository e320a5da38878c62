package io.sluice.config;

import java.util.Objects;

/**
 * The parts of a MySQL or MariaDB JDBC URL that a proxy needs: {@code jdbc:mysql://host[:port][/database][?params]}.
 * Query parameters are accepted and ignored: Sluice speaks the wire protocol itself, so driver options such as
 * {@code serverTimezone} or {@code useSSL} have no meaning for it.
 *
 * @param host the server's host name or address
 * @param port the server's port, 3306 when the URL names none
 * @param database the database in the URL's path, or {@code null}
 */
public record JdbcUrl(String host, int port, String database) {

    public static final int DEFAULT_PORT = 3306;

    public JdbcUrl {
        Objects.requireNonNull(host, "host");
    }

    /**
     * Parses {@code jdbc:mysql://}, {@code jdbc:mariadb://} or a bare {@code mysql://} URL.
     *
     * @throws IllegalArgumentException when the URL is not of that form
     */
    public static JdbcUrl parse(String url) {
        Objects.requireNonNull(url, "url");
        String rest = url.trim();
        if (rest.startsWith("jdbc:")) {
            rest = rest.substring(5);
        }
        int scheme = rest.indexOf("://");
        if (scheme < 0) {
            throw new IllegalArgumentException("url: " + url + " (expected: jdbc:mysql://host:port/database)");
        }
        String protocol = rest.substring(0, scheme);
        if (!protocol.equals("mysql") && !protocol.equals("mariadb")) {
            throw new IllegalArgumentException("url: " + url + " (expected: the jdbc:mysql or jdbc:mariadb scheme)");
        }
        rest = rest.substring(scheme + 3);
        int query = rest.indexOf('?');
        if (query >= 0) {
            rest = rest.substring(0, query);
        }
        String database = null;
        int slash = rest.indexOf('/');
        if (slash >= 0) {
            database = rest.substring(slash + 1);
            rest = rest.substring(0, slash);
            if (database.isEmpty()) {
                database = null;
            }
        }
        if (rest.contains(",")) {
            throw new IllegalArgumentException("url: " + url + " (expected: one host per data source)");
        }
        String host = rest;
        int port = DEFAULT_PORT;
        int colon = rest.lastIndexOf(':');
        if (colon >= 0 && rest.indexOf(']') < colon) {
            host = rest.substring(0, colon);
            try {
                port = Integer.parseInt(rest.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("url: " + url + " (expected: a numeric port)");
            }
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("url: " + url + " (expected: a port in 1..65535)");
            }
        }
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        if (host.isEmpty()) {
            throw new IllegalArgumentException("url: " + url + " (expected: a host)");
        }
        return new JdbcUrl(host, port, database);
    }
}
