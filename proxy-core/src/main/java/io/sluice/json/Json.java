package io.sluice.json;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads and writes JSON (RFC 8259). Values read map to {@code Map<String, Object>} (members in document order),
 * {@code List<Object>}, {@code String}, {@code Long} (integers), {@code Double} (numbers with a fraction or an
 * exponent), {@code Boolean} and {@code null}; the same types, any {@link Number} and anything else by its
 * {@code toString()} are written back.
 *
 * <p>Two ways to write: {@link #write}/{@link #writePretty} of a value built as maps and lists, and a {@link Writer}
 * that streams members straight into the text (the admin API's responses). Both go through the one {@link Writer},
 * so commas, escapes and number forms are decided in one place.
 */
public final class Json {
    private Json() {
    }

    /**
     * Parses one JSON value.
     *
     * @throws IllegalArgumentException {@code JSON at offset N: ...}, naming the first thing that is not JSON
     */
    public static Object parse(String text) {
        return new Parser(text).document();
    }

    /**
     * Parses a JSON object; anything else is refused.
     *
     * @throws IllegalArgumentException as {@link #parse}, or when the value is not an object
     */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> parseObject(String text) {
        Object value = parse(text);
        if (!(value instanceof Map)) {
            throw new IllegalArgumentException("JSON: expected an object");
        }
        return (Map<String, Object>) value;
    }

    /** {@code value} (maps, iterables, strings, numbers, booleans, null) as compact JSON. */
    public static String write(Object value) {
        return new Writer(-1).value(value).toString();
    }

    /** As {@link #write}, indented by two spaces per level and ending with a newline, for files people read. */
    public static String writePretty(Object value) {
        return new Writer(2).value(value).toString() + "\n";
    }

    /** A writer of compact JSON, to stream a response member by member. */
    public static Writer writer() {
        return new Writer(-1);
    }

    /**
     * Writes one JSON value, placing the commas (and, when pretty, the line breaks) for the caller. Not thread-safe.
     * Misuse (an end without a begin, a name outside an object) is not checked: the callers are Sluice's own code.
     */
    public static final class Writer {
        private final StringBuilder out = new StringBuilder(256);
        /** Spaces per level, or -1 for compact output. */
        private final int indent;
        /** Per open object or array, innermost last: whether it has a member yet (so the next needs a comma). */
        private boolean[] hasMembers = new boolean[8];
        private int depth;
        private boolean afterName;

        private Writer(int indent) {
            this.indent = indent;
        }

        /** Opens an object; its members follow as {@link #name} and a value, or {@code member(...)}. */
        public Writer beginObject() {
            return open('{');
        }

        public Writer endObject() {
            return close('}');
        }

        public Writer beginArray() {
            return open('[');
        }

        public Writer endArray() {
            return close(']');
        }

        /** The name of the next member of the current object; its value comes next. */
        public Writer name(String name) {
            separate();
            quote(out, name);
            out.append(indent < 0 ? ":" : ": ");
            afterName = true;
            return this;
        }

        /** A string, or {@code null}. */
        public Writer value(String value) {
            separate();
            if (value == null) {
                out.append("null");
            } else {
                quote(out, value);
            }
            return this;
        }

        public Writer value(long value) {
            separate();
            out.append(value);
            return this;
        }

        /** A number; NaN and the infinities, which JSON cannot say, as {@code null}. */
        public Writer value(double value) {
            separate();
            out.append(Double.isFinite(value) ? String.valueOf(value) : "null");
            return this;
        }

        public Writer value(boolean value) {
            separate();
            out.append(value);
            return this;
        }

        /**
         * A whole value: a {@link Map} as an object (keys by {@code String.valueOf}), an {@link Iterable} as an
         * array, a {@link Boolean}, a {@link Number} ({@code Double} and {@code Float} as {@link #value(double)}),
         * {@code null}, and anything else as the string of its {@code toString()}.
         */
        public Writer value(Object value) {
            if (value == null || value instanceof CharSequence) {
                return value(value == null ? null : value.toString());
            }
            if (value instanceof Map<?, ?> map) {
                beginObject();
                map.forEach((key, member) -> name(String.valueOf(key)).value(member));
                return endObject();
            }
            if (value instanceof Iterable<?> list) {
                beginArray();
                list.forEach(this::value);
                return endArray();
            }
            if (value instanceof Boolean b) {
                return value(b.booleanValue());
            }
            if (value instanceof Double || value instanceof Float) {
                return value(((Number) value).doubleValue());
            }
            if (value instanceof Number) {
                separate();
                out.append(value); // Long, Integer, BigDecimal...: their own decimal form
                return this;
            }
            return value(value.toString());
        }

        public Writer member(String name, String value) {
            return name(name).value(value);
        }

        public Writer member(String name, long value) {
            return name(name).value(value);
        }

        public Writer member(String name, boolean value) {
            return name(name).value(value);
        }

        private Writer open(char bracket) {
            separate();
            out.append(bracket);
            if (depth == hasMembers.length) {
                hasMembers = Arrays.copyOf(hasMembers, depth * 2);
            }
            hasMembers[depth++] = false;
            return this;
        }

        private Writer close(char bracket) {
            if (hasMembers[--depth]) {
                newline(); // pretty: the closing bracket on a line of its own, unless the container is empty
            }
            out.append(bracket);
            return this;
        }

        /** Before a value or a name: the comma after the previous member, and the line break when pretty. */
        private void separate() {
            if (afterName) {
                afterName = false;
                return;
            }
            if (depth > 0) {
                if (hasMembers[depth - 1]) {
                    out.append(',');
                }
                hasMembers[depth - 1] = true;
                newline();
            }
        }

        private void newline() {
            if (indent >= 0) {
                out.append('\n').append(" ".repeat(indent * depth));
            }
        }

        /** The JSON written so far: the whole value once every object and array is closed. */
        @Override
        public String toString() {
            return out.toString();
        }
    }

    /**
     * Appends {@code s} as a JSON string. U+2028 and U+2029 are escaped too, so that the text is also safe inside
     * JavaScript, and so is a lone surrogate, so that the text can always be encoded as UTF-8.
     */
    private static void quote(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                        out.append(c).append(s.charAt(++i)); // a pair: one character beyond U+FFFF, written as is
                    } else if (c < 0x20 || c == 0x2028 || c == 0x2029 || Character.isSurrogate(c)) {
                        out.append("\\u");
                        for (int shift = 12; shift >= 0; shift -= 4) {
                            out.append(Character.forDigit((c >> shift) & 0xF, 16));
                        }
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    /** A recursive-descent parser of one document; strict, so that what it accepts any JSON reader accepts too. */
    private static final class Parser {
        /** Deeper nesting is refused: a request body must not be able to exhaust the admin thread's stack. */
        private static final int MAX_DEPTH = 256;

        private final String text;
        private int pos;
        private int depth;

        Parser(String text) {
            this.text = text;
        }

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
}
