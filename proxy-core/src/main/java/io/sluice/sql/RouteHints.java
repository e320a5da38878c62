package io.sluice.sql;

import io.sluice.sql.SqlLexer.Source;

/** Route hints in comments: Sluice's {@code sluice: primary | replica} and ShardingSphere's write-route-only. */
final class RouteHints {

    private RouteHints() {
    }

    /** The hint flags of the comment from {@code start} to {@code end}. */
    static <T> int of(Source<T> s, T text, int start, int end) {
        int sluice = find(s, text, start, end, "SLUICE");
        if (sluice >= 0) {
            int i = skipBlanks(s, text, sluice + 6, end);
            if (i < end && s.at(text, i) == ':') {
                i = skipBlanks(s, text, i + 1, end);
                if (startsWith(s, text, i, end, "PRIMARY")) {
                    return RouteFacts.HINT_PRIMARY;
                }
                if (startsWith(s, text, i, end, "REPLICA")) {
                    return RouteFacts.HINT_REPLICA;
                }
            }
        }
        // ShardingSphere 5.3+: /* SHARDINGSPHERE_HINT: WRITE_ROUTE_ONLY=true */; before: writeRouteOnly=true
        int shardingSphere = find(s, text, start, end, "SHARDINGSPHERE");
        if (shardingSphere >= 0) {
            int key = find(s, text, shardingSphere, end, "WRITE_ROUTE_ONLY");
            int keyLength = 16;
            if (key < 0) {
                key = find(s, text, shardingSphere, end, "WRITEROUTEONLY");
                keyLength = 14;
            }
            if (key >= 0) {
                int i = skipBlanks(s, text, key + keyLength, end);
                if (i < end && s.at(text, i) == '=' && startsWith(s, text, skipBlanks(s, text, i + 1, end), end,
                        "TRUE")) {
                    return RouteFacts.HINT_PRIMARY;
                }
            }
        }
        return 0;
    }

    private static <T> int find(Source<T> s, T text, int start, int end, String upperCase) {
        for (int i = start; i + upperCase.length() <= end; i++) {
            if (startsWith(s, text, i, end, upperCase)) {
                return i;
            }
        }
        return -1;
    }

    private static <T> boolean startsWith(Source<T> s, T text, int at, int end, String upperCase) {
        if (at + upperCase.length() > end) {
            return false;
        }
        for (int k = 0; k < upperCase.length(); k++) {
            int c = s.at(text, at + k);
            if (c >= 'a' && c <= 'z') {
                c -= 'a' - 'A';
            }
            if (c != upperCase.charAt(k)) {
                return false;
            }
        }
        return true;
    }

    private static <T> int skipBlanks(Source<T> s, T text, int i, int end) {
        while (i < end && (s.at(text, i) == ' ' || s.at(text, i) == '\t')) {
            i++;
        }
        return i;
    }
}
