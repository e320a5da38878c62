package io.sluice.json;

import java.util.Arrays;
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
        return new JsonParser(text).document();
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
}
