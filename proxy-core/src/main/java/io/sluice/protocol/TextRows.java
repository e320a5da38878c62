package io.sluice.protocol;

import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads the rows of a text result set (COM_QUERY's response) collected as whole packets, for the few queries Sluice
 * runs itself: the session check and the read-back of transaction pooling.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_query_response_text_resultset.html">Text
 *     result set</a>
 */
public final class TextRows {

    private TextRows() {
    }

    /**
     * The one row of a text result of {@code columns} columns, or {@code null} on ERR or when there is no row.
     *
     * @param packets the response's frames, header included, in order (borrowed)
     * @param deprecateEof whether CLIENT_DEPRECATE_EOF was negotiated, so no EOF follows the column definitions
     * @return the values, {@code null} for SQL NULL
     */
    public static String[] single(List<ByteBuf> packets, boolean deprecateEof, int columns) {
        List<String[]> rows = all(packets, deprecateEof, columns);
        return rows == null || rows.isEmpty() ? null : rows.get(0);
    }

    /**
     * Every row of a text result of {@code columns} columns, or {@code null} on ERR.
     *
     * @param packets the response's frames, header included, in order (borrowed)
     * @param deprecateEof whether CLIENT_DEPRECATE_EOF was negotiated, so no EOF follows the column definitions
     * @return the rows, each value {@code null} for SQL NULL
     */
    public static List<String[]> all(List<ByteBuf> packets, boolean deprecateEof, int columns) {
        if (packets.isEmpty() || Packets.isErr(Packets.payload(packets.get(0)))) {
            return null;
        }
        List<String[]> rows = new ArrayList<>();
        for (int index = 1 + columns + (deprecateEof ? 0 : 1); index < packets.size(); index++) {
            ByteBuf row = Packets.payload(packets.get(index));
            int first = row.getUnsignedByte(row.readerIndex());
            if (first == Packets.ERR_HEADER) {
                return null;
            }
            if (first == Packets.EOF_HEADER && row.readableBytes() < Packets.MAX_PAYLOAD) {
                break; // the end of the rows (a row starting 0xFE is 16 MiB or more)
            }
            String[] values = new String[columns];
            for (int i = 0; i < columns; i++) {
                values[i] = Packets.readLenencString(row);
            }
            rows.add(values);
        }
        return rows;
    }

    /**
     * Every row of a text result, each as a map from column name to value ({@code SHOW REPLICA STATUS}, whose
     * columns differ between servers and versions), or {@code null} on ERR.
     *
     * @param packets the response's frames, header included, in order (borrowed)
     * @param deprecateEof whether CLIENT_DEPRECATE_EOF was negotiated, so no EOF follows the column definitions
     */
    public static List<java.util.Map<String, String>> named(List<ByteBuf> packets, boolean deprecateEof) {
        if (packets.isEmpty() || Packets.isErr(Packets.payload(packets.get(0)))) {
            return null;
        }
        int columns = (int) Packets.readLenenc(Packets.payload(packets.get(0)));
        String[] names = new String[columns];
        for (int i = 0; i < columns && 1 + i < packets.size(); i++) {
            ByteBuf definition = Packets.payload(packets.get(1 + i));
            for (int field = 0; field < 4; field++) {
                Packets.readLenencString(definition); // catalog, schema, table, org_table
            }
            names[i] = Packets.readLenencString(definition);
        }
        List<String[]> rows = all(packets, deprecateEof, columns);
        if (rows == null) {
            return null;
        }
        List<java.util.Map<String, String>> named = new ArrayList<>(rows.size());
        for (String[] row : rows) {
            java.util.Map<String, String> byName = new java.util.LinkedHashMap<>();
            for (int i = 0; i < columns; i++) {
                byName.put(names[i], row[i]);
            }
            named.add(byName);
        }
        return named;
    }
}
