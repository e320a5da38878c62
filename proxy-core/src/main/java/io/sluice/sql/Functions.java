package io.sluice.sql;

import io.sluice.sql.SqlLexer.Source;

/**
 * What a name before {@code (} is, for the one statement analysis that routing and pinning share (issue #38). Two
 * allow-lists, looked up in place, in any case, allocating nothing:
 *
 * <ul>
 *   <li>{@link #isReadOnly}: the names that may stand before {@code (} in a statement that still runs on a replica:
 *       MariaDB's (and MySQL's) built-in functions that neither write nor leave state on the server connection, the
 *       keywords that open a parenthesis ({@code IN (}, {@code FROM (}, {@code OVER (}...) and the type names of
 *       {@code CAST} and {@code CONVERT} (decision 110). Any other name followed by {@code (} is a call the
 *       classifier cannot vouch for, a stored function that may write, and sends the statement to the primary. Left
 *       out on purpose: the named-lock functions, the sequence functions, the replication waits
 *       ({@code MASTER_POS_WAIT}, {@code MASTER_GTID_WAIT}), {@code LOAD_FILE} (the server's file system) and
 *       anything unknown. The functions whose value is the session's own ({@code LAST_INSERT_ID},
 *       {@code FOUND_ROWS}...) are listed: the classifier routes them by their own rules.</li>
 *   <li>{@link #isBuiltIn}: those, and the built-ins left out of the first list because they write or leave state
 *       that Sluice follows by their names (the lock functions, the sequences, the waits). A call of any other name is
 *       a stored function, whose body the text does not show: it pins a session (decision 135).</li>
 * </ul>
 */
public final class Functions {

    private static final String[] NAMES = {
        // keywords that open a parenthesis
        "SELECT", "FROM", "JOIN", "ON", "USING", "AS", "IN", "EXISTS", "AND", "OR", "NOT", "XOR", "WHERE", "HAVING",
        "ALL", "ANY", "SOME", "DISTINCT", "DISTINCTROW", "UNION", "INTERSECT", "EXCEPT", "OVER", "PARTITION", "BY",
        "WHEN", "THEN", "ELSE", "CASE", "END", "LIKE", "BETWEEN", "IS", "INTERVAL", "ROW", "VALUES", "VALUE", "LIMIT",
        "OFFSET", "LATERAL", "TABLE", "INDEX", "KEY", "FOR", "DIV", "MOD", "REGEXP", "RLIKE", "ESCAPE", "ROWS",
        "RANGE", "WITH", "RECURSIVE", "ORDER", "GROUP", "LEFT", "RIGHT", "INNER", "OUTER", "CROSS", "NATURAL",
        "STRAIGHT_JOIN", "EXPLAIN", "DESCRIBE", "DESC", "ANALYZE", "FORMAT", "OF", "COLUMNS", "PATH", "NESTED",
        "ORDINALITY", "AGAINST", "MATCH", "USE", "FORCE", "IGNORE", "SEPARATOR", "COLLATE", "RETURNING", "WINDOW",
        "PRECEDING", "FOLLOWING", "UNBOUNDED", "CURRENT", "ASC", "SHOW", "DO", "SOUNDS", "ESCAPED", "MEMBER",
        "HIGH_PRIORITY", "SQL_NO_CACHE", "SQL_CACHE", "SQL_BUFFER_RESULT", "SQL_SMALL_RESULT", "SQL_BIG_RESULT",
        "STATEMENT", "SYSTEM_TIME", "TO", "AT",
        // types, as CAST and CONVERT name them
        "CHAR", "VARCHAR", "NCHAR", "NATIONAL", "BINARY", "VARBINARY", "DECIMAL", "DEC", "NUMERIC", "FIXED", "FLOAT",
        "DOUBLE", "REAL", "INT", "INTEGER", "TINYINT", "SMALLINT", "MEDIUMINT", "BIGINT", "SIGNED", "UNSIGNED", "BIT",
        "BOOL", "BOOLEAN", "DATETIME", "TIMESTAMP", "JSON", "TEXT", "BLOB", "INET4", "INET6", "PRECISION",
        // control flow and comparison
        "IF", "IFNULL", "NULLIF", "COALESCE", "GREATEST", "LEAST", "ISNULL", "INTERVAL", "STRCMP", "NVL", "NVL2",
        "DECODE", "DECODE_ORACLE",
        // aggregates and window functions
        "COUNT", "SUM", "AVG", "MIN", "MAX", "GROUP_CONCAT", "BIT_AND", "BIT_OR", "BIT_XOR", "STD", "STDDEV",
        "STDDEV_POP", "STDDEV_SAMP", "VARIANCE", "VAR_POP", "VAR_SAMP", "JSON_ARRAYAGG", "JSON_OBJECTAGG",
        "ROW_NUMBER", "RANK", "DENSE_RANK", "PERCENT_RANK", "CUME_DIST", "NTILE", "LAG", "LEAD", "FIRST_VALUE",
        "LAST_VALUE", "NTH_VALUE", "MEDIAN", "PERCENTILE_CONT", "PERCENTILE_DISC",
        // strings
        "ASCII", "BIN", "BIT_LENGTH", "CHAR_LENGTH", "CHARACTER_LENGTH", "CHR", "CONCAT", "CONCAT_WS", "CONVERT",
        "CAST", "ELT", "EXPORT_SET", "EXTRACTVALUE", "FIELD", "FIND_IN_SET", "FORMAT_BYTES", "FROM_BASE64", "HEX",
        "INSERT", "INSTR", "LCASE", "LENGTH", "LENGTHB", "LOCATE", "LOWER", "LPAD", "LTRIM", "MAKE_SET", "MID",
        "NATURAL_SORT_KEY", "OCT", "OCTET_LENGTH", "ORD", "POSITION", "QUOTE", "REPEAT", "REPLACE", "REVERSE",
        "RPAD", "RTRIM", "SFORMAT", "SOUNDEX", "SPACE", "SUBSTR", "SUBSTRING", "SUBSTRING_INDEX", "TO_BASE64",
        "TO_CHAR", "TRIM", "TRIM_ORACLE", "UCASE", "UNHEX", "UPDATEXML", "UPPER", "WEIGHT_STRING", "CHARSET",
        "COERCIBILITY", "COLLATION", "REGEXP_INSTR", "REGEXP_REPLACE", "REGEXP_SUBSTR", "LEFT", "RIGHT",
        "COLUMN_CHECK", "COLUMN_CREATE", "COLUMN_EXISTS", "COLUMN_GET", "COLUMN_JSON", "COLUMN_LIST", "COLUMN_ADD",
        "COLUMN_DELETE", "KDF",
        // numbers
        "ABS", "ACOS", "ASIN", "ATAN", "ATAN2", "CEIL", "CEILING", "CONV", "COS", "COT", "CRC32", "CRC32C",
        "DEGREES", "EXP", "FLOOR", "LN", "LOG", "LOG10", "LOG2", "OCT", "PI", "POW", "POWER", "RADIANS", "RAND",
        "ROUND", "SIGN", "SIN", "SQRT", "TAN", "TRUNCATE",
        // dates and times
        "ADDDATE", "ADDTIME", "CONVERT_TZ", "CURDATE", "CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP",
        "CURTIME", "DATE", "DATEDIFF", "DATE_ADD", "DATE_FORMAT", "DATE_SUB", "DAY", "DAYNAME", "DAYOFMONTH",
        "DAYOFWEEK", "DAYOFYEAR", "EXTRACT", "FROM_DAYS", "FROM_UNIXTIME", "GET_FORMAT", "HOUR", "LAST_DAY",
        "LOCALTIME", "LOCALTIMESTAMP", "MAKEDATE", "MAKETIME", "MICROSECOND", "MINUTE", "MONTH", "MONTHNAME", "NOW",
        "PERIOD_ADD", "PERIOD_DIFF", "QUARTER", "SECOND", "SEC_TO_TIME", "STR_TO_DATE", "SUBDATE", "SUBTIME",
        "SYSDATE", "TIME", "TIMEDIFF", "TIMESTAMPADD", "TIMESTAMPDIFF", "TIME_FORMAT", "TIME_TO_SEC", "TO_DAYS",
        "TO_SECONDS", "UNIX_TIMESTAMP", "UTC_DATE", "UTC_TIME", "UTC_TIMESTAMP", "WEEK", "WEEKDAY", "WEEKOFYEAR",
        "YEAR", "YEARWEEK", "ADD_MONTHS", "MONTHS_BETWEEN",
        // JSON
        "JSON_ARRAY", "JSON_ARRAY_APPEND", "JSON_ARRAY_INSERT", "JSON_ARRAY_INTERSECT", "JSON_COMPACT",
        "JSON_CONTAINS", "JSON_CONTAINS_PATH", "JSON_DEPTH", "JSON_DETAILED", "JSON_EQUALS", "JSON_EXISTS",
        "JSON_EXTRACT", "JSON_INSERT", "JSON_KEYS", "JSON_LENGTH", "JSON_LOOSE", "JSON_MERGE", "JSON_MERGE_PATCH",
        "JSON_MERGE_PRESERVE", "JSON_NORMALIZE", "JSON_OBJECT", "JSON_OBJECT_FILTER_KEYS", "JSON_OBJECT_TO_ARRAY",
        "JSON_OVERLAPS", "JSON_PRETTY", "JSON_QUERY", "JSON_QUOTE", "JSON_REMOVE", "JSON_REPLACE", "JSON_SCHEMA_VALID",
        "JSON_SEARCH", "JSON_SET", "JSON_TABLE", "JSON_TYPE", "JSON_UNQUOTE", "JSON_VALID", "JSON_VALUE",
        "MEMBER_OF",
        // information and miscellaneous
        "BENCHMARK", "BINLOG_GTID_POS", "CURRENT_ROLE", "CURRENT_USER", "DATABASE", "SCHEMA", "DEFAULT", "SESSION_USER",
        "SYSTEM_USER", "USER", "VERSION", "SLEEP", "UUID", "UUID_SHORT", "SYS_GUID", "INET_ATON", "INET_NTOA",
        "INET6_ATON", "INET6_NTOA", "IS_IPV4", "IS_IPV4_COMPAT", "IS_IPV4_MAPPED", "IS_IPV6", "MD5", "SHA", "SHA1",
        "SHA2", "COMPRESS", "UNCOMPRESS", "UNCOMPRESSED_LENGTH", "AES_ENCRYPT", "AES_DECRYPT", "DES_ENCRYPT",
        "DES_DECRYPT", "ENCODE", "ENCRYPT", "OLD_PASSWORD", "PASSWORD", "RANDOM_BYTES", "NAME_CONST", "VEC_FROMTEXT",
        "VEC_TOTEXT", "VEC_DISTANCE", "VEC_DISTANCE_EUCLIDEAN", "VEC_DISTANCE_COSINE",
        // MySQL's own
        "ANY_VALUE", "BIN_TO_UUID", "UUID_TO_BIN", "IS_UUID", "REGEXP_LIKE", "GROUPING", "JSON_STORAGE_SIZE",
        "JSON_STORAGE_FREE", "JSON_SCHEMA_VALIDATION_REPORT", "STATEMENT_DIGEST", "STATEMENT_DIGEST_TEXT",
        "ICU_VERSION", "FORMAT_PICO_TIME", "PS_CURRENT_THREAD_ID", "ROLES_GRAPHML",
        // the session's own values: routed by their own rules (previous statement, primary)
        "LAST_INSERT_ID", "FOUND_ROWS", "ROW_COUNT", "CONNECTION_ID", "LASTVAL",
        // geometry
        "POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON", "GEOMETRYCOLLECTION",
        "ST_ASTEXT", "ST_ASWKT", "ST_ASBINARY", "ST_ASWKB", "ST_ASGEOJSON", "ST_GEOMFROMTEXT", "ST_GEOMFROMWKB",
        "ST_GEOMFROMGEOJSON", "ST_POINTFROMTEXT", "ST_X", "ST_Y", "ST_SRID", "ST_DISTANCE", "ST_DISTANCE_SPHERE",
        "ST_CONTAINS", "ST_WITHIN", "ST_INTERSECTS", "ST_OVERLAPS", "ST_TOUCHES", "ST_CROSSES", "ST_DISJOINT",
        "ST_EQUALS", "ST_AREA", "ST_LENGTH", "ST_BUFFER", "ST_CENTROID", "ST_ENVELOPE", "ST_UNION",
        "ST_INTERSECTION", "ST_DIFFERENCE", "ST_ISEMPTY", "ST_ISVALID", "ST_NUMPOINTS", "ST_POINTN",
        "ST_STARTPOINT", "ST_ENDPOINT", "ST_GEOMETRYTYPE", "ST_DIMENSION", "ST_MAKEPOINT", "MBRCONTAINS",
        "MBRWITHIN", "MBRINTERSECTS", "MBROVERLAPS", "MBREQUAL", "MBRDISJOINT", "MBRTOUCHES",
    };

    /**
     * Built-ins that are not read-only: they write, lock, wait or read the server's files. Sluice follows the lock
     * functions by name ({@code GET_LOCK}...); the rest go to the primary and pin nothing by themselves.
     */
    private static final String[] OTHER_BUILT_INS = {
        "GET_LOCK", "RELEASE_LOCK", "RELEASE_ALL_LOCKS", "IS_FREE_LOCK", "IS_USED_LOCK", "NEXTVAL", "SETVAL",
        "LASTVAL", "PREVIOUS", "MASTER_POS_WAIT", "MASTER_GTID_WAIT", "SOURCE_POS_WAIT", "WAIT_FOR_EXECUTED_GTID_SET",
        "WAIT_UNTIL_SQL_THREAD_AFTER_GTIDS", "GTID_SUBSET", "GTID_SUBTRACT", "LOAD_FILE", "SYSTEM", "VALUES",
        "LAST_VALUE", "ROW_COUNT", "FOUND_ROWS", "LAST_INSERT_ID", "BINLOG_GTID_POS", "PASSWORD", "UUID",
    };

    private static final String[] TABLE = table(NAMES);
    private static final int MASK = TABLE.length - 1;
    private static final String[] ALL = table(concat(NAMES, OTHER_BUILT_INS));
    private static final int ALL_MASK = ALL.length - 1;

    private static String[] concat(String[] a, String[] b) {
        String[] all = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }

    private Functions() {
    }

    private static String[] table(String[] names) {
        int size = Integer.highestOneBit(names.length * 4);
        String[] table = new String[size];
        for (String name : names) {
            int slot = hash(name) & (size - 1);
            while (table[slot] != null && !table[slot].equals(name)) {
                slot = (slot + 1) & (size - 1);
            }
            table[slot] = name;
        }
        return table;
    }

    private static int hash(String upperCase) {
        int h = upperCase.length();
        for (int k = 0; k < upperCase.length(); k++) {
            h = h * 31 + upperCase.charAt(k);
        }
        return mix(h);
    }

    private static int mix(int h) {
        return h ^ (h >>> 16);
    }

    /** Whether the name from {@code start} to {@code end}, in any case, may stand before {@code (} on a replica. */
    public static <T> boolean isReadOnly(Source<T> s, T text, int start, int end) {
        return contains(TABLE, MASK, s, text, start, end);
    }

    /**
     * Whether the name from {@code start} to {@code end}, in any case, is a built-in function or a keyword that opens
     * a parenthesis: anything else before {@code (} calls a stored function.
     */
    public static <T> boolean isBuiltIn(Source<T> s, T text, int start, int end) {
        return contains(ALL, ALL_MASK, s, text, start, end);
    }

    private static <T> boolean contains(String[] table, int mask, Source<T> s, T text, int start, int end) {
        int h = end - start;
        for (int i = start; i < end; i++) {
            int c = s.at(text, i);
            if (c >= 'a' && c <= 'z') {
                c -= 'a' - 'A';
            }
            h = h * 31 + c;
        }
        for (int slot = mix(h) & mask; table[slot] != null; slot = (slot + 1) & mask) {
            if (SqlLexer.is(s, text, start, end, table[slot])) {
                return true;
            }
        }
        return false;
    }
}
