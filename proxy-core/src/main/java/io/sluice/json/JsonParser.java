package io.sluice.json;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads one JSON document for {@link Json#parse}: recursive descent, strict (RFC 8259), so that what it accepts any
 * JSON reader accepts too. One per document; not thread-safe.
 */
final class JsonParser {
    /** Deeper nesting is refused: a request body must not be able to exhaust the admin thread's stack. */
    private static final int MAX_DEPTH = 256;

    private final String text;
    private int pos;
    private int depth;

    JsonParser(String text) {
        this.text = text;
    }

    /** The document's one value, with nothing but white space around it. */
    Object document() {
        skipSpace();
        Object value = value();
        skipSpace();
        if (pos != text.length()) {
            throw error("unexpected text after the value");
        }
        return value;
    }

    private Object value() {
        if (pos >= text.length()) {
            throw error("unexpected end of input");
        }
        char c = text.charAt(pos);
        return switch (c) {
            case '{' -> object();
            case '[' -> array();
            case '"' -> string();
            case 't' -> literal("true", Boolean.TRUE);
            case 'f' -> literal("false", Boolean.FALSE);
            case 'n' -> literal("null", null);
            default -> {
                if (c == '-' || isDigit(c)) {
                    yield number();
                }
                throw error("unexpected character '" + c + "'");
            }
        };
    }

    private Map<String, Object> object() {
        enter();
        Map<String, Object> map = new LinkedHashMap<>();
        pos++;
        skipSpace();
        if (peek() == '}') {
            pos++;
            depth--;
            return map;
        }
        while (true) {
            skipSpace();
            if (peek() != '"') {
                throw error("expected a quoted key");
            }
            int keyAt = pos;
            String key = string();
            skipSpace();
            expect(':');
            skipSpace();
            if (map.containsKey(key)) {
                pos = keyAt;
                throw error("duplicate key \"" + key + "\"");
            }
            map.put(key, value());
            skipSpace();
            char c = next();
            if (c == '}') {
                depth--;
                return map;
            }
            if (c != ',') {
                pos--;
                throw error("expected ',' or '}'");
            }
        }
    }

    private List<Object> array() {
        enter();
        List<Object> list = new ArrayList<>();
        pos++;
        skipSpace();
        if (peek() == ']') {
            pos++;
            depth--;
            return list;
        }
        while (true) {
            skipSpace();
            list.add(value());
            skipSpace();
            char c = next();
            if (c == ']') {
                depth--;
                return list;
            }
            if (c != ',') {
                pos--;
                throw error("expected ',' or ']'");
            }
        }
    }

    private void enter() {
        if (++depth > MAX_DEPTH) {
            throw error("nested deeper than " + MAX_DEPTH + " levels");
        }
    }

    private String string() {
        pos++; // the opening quote
        StringBuilder out = new StringBuilder();
        while (true) {
            char c = next();
            if (c == '"') {
                return out.toString();
            }
            if (c == '\\') {
                char e = next();
                switch (e) {
                    case '"', '\\', '/' -> out.append(e);
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'n' -> out.append('\n');
                    case 'r' -> out.append('\r');
                    case 't' -> out.append('\t');
                    // A pair of escapes for a character beyond U+FFFF lands as the same two chars in Java.
                    case 'u' -> out.append(hex4());
                    default -> {
                        pos -= 2;
                        throw error("bad escape '\\" + e + "'");
                    }
                }
            } else if (c < 0x20) {
                pos--;
                throw error("control character U+" + String.format("%04X", (int) c)
                        + " in a string (expected: escaped)");
            } else {
                out.append(c);
            }
        }
    }

    /** The four hex digits of a {@code \\u} escape. */
    private char hex4() {
        if (pos + 4 > text.length()) {
            throw error("truncated \\u escape");
        }
        int value = 0;
        for (int i = 0; i < 4; i++) {
            int digit = Character.digit(text.charAt(pos + i), 16);
            if (digit < 0) {
                throw error("bad \\u escape (expected: four hex digits)");
            }
            value = value << 4 | digit;
        }
        pos += 4;
        return (char) value;
    }

    /** RFC 8259's number: {@code -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?}. */
    private Object number() {
        int start = pos;
        if (peek() == '-') {
            pos++;
        }
        if (peek() == '0') {
            pos++;
            if (isDigit(peek())) {
                throw numberError(start, "a leading zero");
            }
        } else if (!digits()) {
            throw numberError(start, "no digits");
        }
        boolean integer = true;
        if (peek() == '.') {
            integer = false;
            pos++;
            if (!digits()) {
                throw numberError(start, "no digits after the decimal point");
            }
        }
        if (peek() == 'e' || peek() == 'E') {
            integer = false;
            pos++;
            if (peek() == '+' || peek() == '-') {
                pos++;
            }
            if (!digits()) {
                throw numberError(start, "no digits in the exponent");
            }
        }
        String s = text.substring(start, pos);
        if (integer) {
            try {
                return Long.parseLong(s);
            } catch (NumberFormatException e) {
                throw numberError(start, "outside the 64-bit integer range");
            }
        }
        double d = Double.parseDouble(s);
        if (Double.isInfinite(d)) {
            throw numberError(start, "outside the range of a double");
        }
        return d;
    }

    private boolean digits() {
        int start = pos;
        while (isDigit(peek())) {
            pos++;
        }
        return pos > start;
    }

    private IllegalArgumentException numberError(int start, String why) {
        int end = pos;
        while (end < text.length() && (isDigit(text.charAt(end)) || "+-.eE".indexOf(text.charAt(end)) >= 0)) {
            end++;
        }
        String number = text.substring(start, end);
        pos = start;
        return error("bad number " + number + " (" + why + ")");
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    private Object literal(String word, Object value) {
        if (!text.startsWith(word, pos)) {
            throw error("unexpected text (expected: " + word + ")");
        }
        pos += word.length();
        return value;
    }

    /** JSON's white space only: space, tab, line feed and carriage return. */
    private void skipSpace() {
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            pos++;
        }
    }

    private char peek() {
        return pos < text.length() ? text.charAt(pos) : '\0';
    }

    private char next() {
        if (pos >= text.length()) {
            throw error("unexpected end of input");
        }
        return text.charAt(pos++);
    }

    private void expect(char c) {
        if (next() != c) {
            pos--;
            throw error("expected '" + c + "'");
        }
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException("JSON at offset " + pos + ": " + what);
    }
}
