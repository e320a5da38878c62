package io.sluice.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.io.StringWriter;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Blob;
import java.sql.Clob;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * What a client observed during a scenario, in order: result sets with their column metadata and rows, update
 * counts, generated keys, warnings and errors. Two traces of the same scenario, one direct and one through the
 * proxy, must be equal.
 */
public final class Trace {

    private final List<Object> events = new ArrayList<>();

    /** Records any value under a label (a row count, a hash, a session variable...). */
    public Trace add(String label, Object value) {
        events.add(new Value(label, normalize(value)));
        return this;
    }

    /**
     * Executes {@code sql} and records every result it produces and the statement's warnings, or the error it
     * raised (so error code, SQLSTATE and message are compared too).
     */
    public Trace execute(Statement statement, String sql) {
        events.add(new Value("sql", sql));
        try {
            boolean isResultSet = statement.execute(sql, Statement.RETURN_GENERATED_KEYS);
            if (!isResultSet && statement.getUpdateCount() > 0) {
                generatedKeys(statement); // before getMoreResults() moves on
            }
            results(statement, isResultSet);
        } catch (SQLException e) {
            error(e);
        }
        return this;
    }

    /** Records every result of a statement that has just been executed, starting with the current one. */
    public Trace results(Statement statement, boolean isResultSet) throws SQLException {
        while (true) {
            if (isResultSet) {
                try (ResultSet rs = statement.getResultSet()) {
                    resultSet(rs);
                }
            } else {
                long count = statement.getUpdateCount();
                if (count == -1) {
                    break;
                }
                events.add(new UpdateCount(count));
            }
            isResultSet = statement.getMoreResults();
        }
        warnings(statement.getWarnings());
        statement.clearWarnings();
        return this;
    }

    /** Records the generated keys of the last statement executed with RETURN_GENERATED_KEYS. */
    public Trace generatedKeys(Statement statement) throws SQLException {
        try (ResultSet keys = statement.getGeneratedKeys()) {
            List<Object> values = new ArrayList<>();
            while (keys.next()) {
                values.add(keys.getLong(1));
            }
            events.add(new Value("generatedKeys", values));
        }
        return this;
    }

    /** Records column metadata and every row. */
    public Trace resultSet(ResultSet rs) throws SQLException {
        ResultSetMetaData md = rs.getMetaData();
        List<Column> columns = new ArrayList<>();
        for (int i = 1; i <= md.getColumnCount(); i++) {
            columns.add(new Column(md.getColumnName(i), md.getColumnLabel(i), md.getColumnType(i),
                    md.getColumnTypeName(i), md.getPrecision(i), md.getScale(i), md.isNullable(i), md.isSigned(i),
                    md.getColumnDisplaySize(i), md.getColumnClassName(i), md.getTableName(i), md.getCatalogName(i),
                    md.isAutoIncrement(i)));
        }
        List<List<Object>> rows = new ArrayList<>();
        while (rs.next()) {
            List<Object> row = new ArrayList<>(columns.size());
            for (int i = 1; i <= columns.size(); i++) {
                row.add(normalize(rs.getObject(i)));
            }
            rows.add(row);
        }
        events.add(new Rows(columns, rows));
        warnings(rs.getWarnings());
        return this;
    }

    public Trace warnings(SQLWarning warning) {
        for (SQLWarning w = warning; w != null; w = w.getNextWarning()) {
            events.add(new Warning(w.getErrorCode(), w.getSQLState(), withoutConnectionId(w.getMessage())));
        }
        return this;
    }

    public Trace error(SQLException e) {
        events.add(new Error(e.getErrorCode(), e.getSQLState(), withoutConnectionId(e.getMessage())));
        return this;
    }

    /**
     * Runs set-up statements without recording them (a {@code DROP TABLE IF EXISTS} warns only the first time), and
     * discards their warnings.
     */
    public static void quietly(Statement statement, String... sql) throws SQLException {
        for (String each : sql) {
            statement.execute(each);
        }
        statement.clearWarnings();
    }

    /** MariaDB Connector/J prefixes messages with "(conn=N) ", and N differs per connection by nature. */
    private static String withoutConnectionId(String message) {
        return message == null ? null : message.replaceFirst("^\\(conn=\\d+\\) ", "");
    }

    public List<Object> events() {
        return events;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Trace t && t.events.equals(events);
    }

    @Override
    public int hashCode() {
        return events.hashCode();
    }

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder();
        for (Object e : events) {
            s.append(e).append('\n');
        }
        return s.toString();
    }

    /** Turns driver objects without value equality (LOBs, arrays) into comparable values. */
    static Object normalize(Object value) {
        try {
            if (value instanceof Blob blob) {
                try (InputStream in = blob.getBinaryStream()) {
                    value = in.readAllBytes();
                }
            } else if (value instanceof Clob clob) {
                try (Reader in = clob.getCharacterStream()) {
                    StringWriter out = new StringWriter();
                    in.transferTo(out);
                    return out.toString();
                }
            }
        } catch (SQLException | IOException e) {
            return "unreadable: " + e;
        }
        if (value instanceof byte[] bytes) {
            return bytes.length <= 64 ? "0x" + HexFormat.of().formatHex(bytes) : bytes.length + " bytes, " + sha256(bytes);
        }
        return value;
    }

    public static String sha256(byte[] bytes) {
        try {
            return "sha256:" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    public record Value(String label, Object value) {
    }

    public record UpdateCount(long count) {
    }

    public record Warning(int code, String sqlState, String message) {
    }

    public record Error(int code, String sqlState, String message) {
    }

    public record Rows(List<Column> columns, List<List<Object>> rows) {
    }

    public record Column(String name, String label, int type, String typeName, int precision, int scale,
                         int nullable, boolean signed, int displaySize, String className, String table,
                         String catalog, boolean autoIncrement) {
    }
}
