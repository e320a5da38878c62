package io.sluice.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * One mapping of config.yaml, such as {@code server.tls} or {@code dataSources.ds_0}, read key by key through typed
 * getters.
 *
 * <p>Each getter records the key it was asked for, whether the file has it or not, and {@link #done()} refuses every
 * key in the file that no getter asked for. The keys a section accepts are therefore exactly the keys its reader
 * reads: there is no list kept by hand that could drift from the code. A key Sluice accepts and does nothing with
 * (ShardingSphere's {@code authority.privilege}) is read with {@link #ignore}.
 *
 * <p>A getter does not throw what it refuses: it keeps the refusal and answers as if the key were absent. {@link
 * #done()} then reports the first of, in this order: the section not being a mapping; a key no getter asked for, or
 * written twice (in file order); a refused value (in the order they were read). The section's keys come first so
 * that a misspelt {@code urll:} is refused as an unknown key, naming the keys the section does read, rather than as
 * a missing {@code url}. A reader's own checks keep that order: before {@code done()} it reports them with {@link
 * #refuse} or {@link #missing}; only after it may it throw ({@link #invalid}). Every refusal names the file, the
 * line and the key path: {@code config.yaml line 7: dataSources.ds_0.maxPoolSize: "ten" (expected: an integer)}.
 */
final class YamlSection {

    // Decimal only: YAML 1.1 would read 0755 as octal and 1:30 as 90, which nobody means in a pool size.
    private static final Pattern DECIMAL = Pattern.compile("[-+]?[0-9][0-9_]*");

    private final String source;
    /** The key path, such as {@code server.tls}; empty for the top level. */
    private final String path;
    /** Where refusals about the section as a whole point: its key, its list item, or the document. */
    private final Node at;
    /** What stands where a mapping was expected, or {@code null} when the section is a mapping or empty. */
    private final Node notAMapping;
    /** How a refusal of {@link #notAMapping} describes what was expected; {@code null}: the keys read. */
    private final String shape;
    private final List<NodeTuple> entries;
    /** The value's own tag ({@code !READWRITE_SPLITTING}), or {@code null} for YAML's standard ones. */
    private final String tag;
    /** The first entry of each key name, in file order. */
    private final Map<String, NodeTuple> byName = new LinkedHashMap<>();
    /** Every key a getter asked for, in the order asked: the keys the section accepts. */
    private final Set<String> askedFor = new LinkedHashSet<>();
    private ConfigException firstRefusal;
    private boolean done;

    /** {@code emptyWhenNull}: a value of nothing ({@code ds_0:}) is an empty mapping rather than no mapping. */
    private YamlSection(String source, String path, Node at, Node value, String shape, boolean emptyWhenNull) {
        this.source = source;
        this.path = path;
        this.at = at;
        this.shape = shape;
        String valueTag = value.getTag().getValue();
        this.tag = valueTag.startsWith(Tag.PREFIX) ? null : valueTag;
        if (value instanceof MappingNode mapping) {
            entries = mapping.getValue();
            notAMapping = null;
        } else {
            entries = List.of();
            notAMapping = emptyWhenNull && isNull(value) ? null : value;
        }
        for (NodeTuple entry : entries) {
            if (entry.getKeyNode() instanceof ScalarNode key && !isNull(key)) {
                byName.putIfAbsent(key.getValue(), entry);
            }
        }
    }

    /**
     * The top level of a document.
     *
     * @param source how refusals name the document, usually its file name
     */
    static YamlSection document(Node root, String source) {
        return new YamlSection(source, "", root, root, null, false);
    }

    /** The text of {@code key}; {@code absent} when the key is absent or has no value ({@code password:}). */
    String string(String key, String absent) {
        return read(key, absent, value -> text(value, key));
    }

    /** The text of {@code key}, refused as missing when absent, empty or blank; {@code expected} says what it is. */
    String requiredString(String key, String expected) {
        return deferring(null, () -> {
            NodeTuple entry = entry(key);
            if (entry == null) {
                throw refusal(at, key, "missing (expected: " + expected + ")");
            }
            String value = text(entry.getValueNode(), key);
            if (value == null || value.isBlank()) {
                throw refusal(entry.getValueNode(), key, "missing (expected: " + expected + ")");
            }
            return value;
        });
    }

    /** A decimal integer that fits an {@code int}. */
    int integer(String key, int absent) {
        return (int) integer(key, absent, Integer.MAX_VALUE);
    }

    /** A duration in milliseconds: a decimal integer that fits a {@code long}. */
    long milliseconds(String key, long absent) {
        return integer(key, absent, Long.MAX_VALUE);
    }

    /** Whether {@code key} holds a YAML boolean ({@code statistics: off}) rather than a section. */
    boolean isFlag(String key) {
        NodeTuple entry = entry(key);
        return entry != null && entry.getValueNode() instanceof ScalarNode scalar && Tag.BOOL.equals(scalar.getTag());
    }

    /** {@code true} or {@code false} (YAML's yes/no and on/off too); quoted strings and numbers are refused. */
    boolean flag(String key, boolean absent) {
        return read(key, absent, value -> {
            if (value instanceof ScalarNode scalar && Tag.BOOL.equals(value.getTag())) {
                String text = scalar.getValue().toLowerCase(Locale.ROOT);
                return text.equals("true") || text.equals("yes") || text.equals("on");
            }
            throw refusal(value, key, describe(value) + " (expected: true or false)");
        });
    }

    /** A constant of {@code type} named in any case; another name is refused with the list of names. */
    <E extends Enum<E>> E oneOf(String key, Class<E> type, E absent) {
        return read(key, absent, value -> {
            String name = text(value, key);
            try {
                return Enum.valueOf(type, name.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                List<String> names = new ArrayList<>();
                for (E constant : type.getEnumConstants()) {
                    names.add(constant.name());
                }
                throw refusal(value, key, describe(value) + " (expected: one of " + String.join(", ", names) + ")");
            }
        });
    }

    /** A list of strings, or one string as a list of one. */
    List<String> strings(String key, List<String> absent) {
        return read(key, absent, value -> {
            if (value instanceof ScalarNode) {
                return List.of(text(value, key));
            }
            if (!(value instanceof SequenceNode sequence)) {
                throw refusal(value, key, describe(value) + " (expected: a list of strings)");
            }
            List<String> values = new ArrayList<>();
            for (Node item : sequence.getValue()) {
                values.add(text(item, key));
            }
            return values;
        });
    }

    /**
     * A file name, relative to {@code directory} when there is one, else to the working directory; {@code null} when
     * absent. The file must exist and be readable now: a missing certificate is a refusal with a line number, not a
     * failed TLS handshake later.
     */
    Path file(String key, Path directory) {
        return read(key, null, value -> {
            String name = text(value, key);
            Path file;
            try {
                file = directory == null ? Path.of(name) : directory.resolve(name);
            } catch (InvalidPathException e) {
                throw refusal(value, key, describe(value) + " (expected: a file name)");
            }
            if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
                throw refusal(value, key, describe(value) + " (expected: a readable file; " + file.toAbsolutePath()
                        + " is not one)");
            }
            return file;
        });
    }

    /**
     * The text of the file named under {@code key} (as {@link #file}), without its trailing line breaks, since
     * {@code echo secret > file} adds one that is no part of the secret; {@code null} when the key is absent. The
     * text itself never appears in a refusal.
     */
    String fileText(String key, Path directory) {
        Path file = file(key, directory);
        if (file == null) {
            return null;
        }
        return read(key, null, value -> {
            try {
                String text = Files.readString(file, StandardCharsets.UTF_8);
                int end = text.length();
                while (end > 0 && (text.charAt(end - 1) == '\n' || text.charAt(end - 1) == '\r')) {
                    end--;
                }
                return text.substring(0, end);
            } catch (IOException e) {
                throw refusal(value, key, describe(value) + " (expected: a readable UTF-8 file; " + e + ")");
            }
        });
    }

    /**
     * The mapping under {@code key}, given to {@code reader}, which must end with {@link #done()}; {@code absent}
     * when the key is absent or has no value. A value that is not a mapping is refused with the keys the reader
     * read.
     */
    <T> T section(String key, T absent, Function<YamlSection, T> reader) {
        return section(key, null, absent, reader);
    }

    /** As {@link #section(String, Object, Function)}, with {@code shape} saying what a mapping should look like. */
    <T> T section(String key, String shape, T absent, Function<YamlSection, T> reader) {
        return deferring(absent, () -> {
            NodeTuple entry = entry(key);
            if (entry == null || isNull(entry.getValueNode())) {
                return absent;
            }
            return readWith(reader, child(entry, join(key), shape, false));
        });
    }

    /**
     * A mapping from names the file chooses (data source names) to sections, each given to {@code reader} with its
     * name, in file order; {@code null} when the key is absent or has no value. A name with no value is read as an
     * empty section, so that its reader can say which key is missing.
     *
     * @param shape what the mapping should look like, for the refusal of anything else
     */
    <T> Map<String, T> namedSections(String key, String shape, BiFunction<String, YamlSection, T> reader) {
        return deferring(null, () -> {
            NodeTuple entry = entry(key);
            if (entry == null || isNull(entry.getValueNode())) {
                return null;
            }
            YamlSection names = child(entry, join(key), shape, false);
            Map<String, T> values = new LinkedHashMap<>();
            for (String name : names.byName.keySet()) {
                values.put(name, names.deferring(null, () -> {
                    YamlSection section = names.child(names.entry(name), names.join(name), null, true);
                    return readWith(named -> reader.apply(name, named), section);
                }));
            }
            names.done();
            return values;
        });
    }

    /**
     * A list of mappings, each given to {@code reader} as a section named {@code key[i]}; an empty list when the key
     * is absent or has no value.
     *
     * @param shape what the list should look like, for the refusal of anything else
     */
    <T> List<T> list(String key, String shape, Function<YamlSection, T> reader) {
        return read(key, List.of(), value -> {
            if (!(value instanceof SequenceNode sequence)) {
                throw refusal(value, key, describe(value) + " (expected: " + shape + ")");
            }
            List<T> values = new ArrayList<>();
            List<Node> items = sequence.getValue();
            for (int i = 0; i < items.size(); i++) {
                Node item = items.get(i);
                values.add(readWith(reader,
                        new YamlSection(source, join(key) + "[" + i + "]", item, item, null, false)));
            }
            return values;
        });
    }

    /**
     * A mapping of names the file chooses to scalars, such as a load balancer's {@code props}, as text in file
     * order; an empty map when the key is absent or has no value.
     */
    Map<String, String> stringMap(String key) {
        return read(key, Map.of(), value -> {
            if (!(value instanceof MappingNode mapping)) {
                throw refusal(value, key, describe(value) + " (expected: a mapping of names to values)");
            }
            Map<String, String> values = new LinkedHashMap<>();
            for (NodeTuple entry : mapping.getValue()) {
                if (!(entry.getKeyNode() instanceof ScalarNode name) || isNull(name)) {
                    throw refusal(entry.getKeyNode(), key, describe(entry.getKeyNode()) + " (expected: a name)");
                }
                String text = text(entry.getValueNode(), key + "." + name.getValue());
                values.put(name.getValue(), text == null ? "" : text);
            }
            return values;
        });
    }

    /**
     * A mapping of names the file chooses to lists of strings (an allow-list's user to digests), in file order; an
     * empty map when the key is absent or has no value. A name with no value has an empty list.
     */
    Map<String, List<String>> stringLists(String key) {
        return read(key, Map.of(), value -> {
            if (!(value instanceof MappingNode mapping)) {
                throw refusal(value, key, describe(value) + " (expected: a mapping of names to lists)");
            }
            Map<String, List<String>> values = new LinkedHashMap<>();
            for (NodeTuple entry : mapping.getValue()) {
                if (!(entry.getKeyNode() instanceof ScalarNode name) || isNull(name)) {
                    throw refusal(entry.getKeyNode(), key, describe(entry.getKeyNode()) + " (expected: a name)");
                }
                String at = key + "." + name.getValue();
                List<String> items = new ArrayList<>();
                Node list = entry.getValueNode();
                if (list instanceof SequenceNode sequence) {
                    for (Node item : sequence.getValue()) {
                        items.add(text(item, at));
                    }
                } else if (!isNull(list)) {
                    throw refusal(list, at, describe(list) + " (expected: a list of strings)");
                }
                values.put(name.getValue(), items);
            }
            return values;
        });
    }

    /** The tag the section's value carries in the file, such as {@code !READWRITE_SPLITTING}; {@code null}: none. */
    String tag() {
        return tag;
    }

    /**
     * A refusal of the section as a whole (a rule of a kind Sluice does not run), at its line, for its reader to
     * throw at once: its keys are not read, so none is reported as unknown.
     */
    ConfigException refusal(String what) {
        done = true;
        return error(at, pathOrTopLevel(), what);
    }

    /** Whether {@code key}'s value is a single value (not a list or mapping) such as {@code users: FROM_BACKEND}. */
    boolean isScalar(String key) {
        return value(key) instanceof ScalarNode;
    }

    /** Whether the section has {@code key} with a value. */
    boolean has(String key) {
        return value(key) != null;
    }

    /** Whether {@code key} is absent, has no value, or is an empty list ({@code rules: []}). */
    boolean isEmptyList(String key) {
        Node value = value(key);
        return value == null || value instanceof SequenceNode sequence && sequence.getValue().isEmpty();
    }

    /** Accepts {@code keys} with any value and does nothing with them: keys of other programs' files. */
    void ignore(String... keys) {
        for (String key : keys) {
            entry(key);
        }
    }

    /**
     * Refuses {@code key} as missing, at the key when the file has it with no value, else at the section; reported
     * by {@link #done()}.
     */
    void missing(String key, String expected) {
        NodeTuple entry = entry(key);
        defer(refusal(entry == null ? at : entry.getKeyNode(), key, "missing (expected: " + expected + ")"));
    }

    /** Refuses the value of {@code key}, a key the section has, in words of its own; reported by {@link #done()}. */
    void refuse(String key, String what) {
        defer(refusal(byName.get(key).getValueNode(), key, what));
    }

    /**
     * A refusal of the value of {@code key}, a key the section has, for a reader to throw after {@link #done()}:
     * {@code "root@%" (expected: each user once)}.
     */
    ConfigException invalid(String key, String expected) {
        Node value = byName.get(key).getValueNode();
        return refusal(value, key, describe(value) + " (expected: " + expected + ")");
    }

    /** The line the value of {@code key}, a key the section has, starts on, counted from 1. */
    int line(String key) {
        return line(byName.get(key).getValueNode());
    }

    /**
     * Ends the reading: refuses the section when it is not a mapping, the first key no getter asked for or written
     * twice, else the first value a getter refused.
     *
     * @throws ConfigException naming the file, the line and the key path
     */
    void done() {
        done = true;
        if (notAMapping != null) {
            String expected = shape != null ? shape : "a mapping of " + String.join(", ", askedFor);
            throw error(notAMapping, pathOrTopLevel(), describe(notAMapping) + " (expected: " + expected + ")");
        }
        for (NodeTuple entry : entries) {
            Node keyNode = entry.getKeyNode();
            if (!(keyNode instanceof ScalarNode scalar) || isNull(keyNode)) {
                throw error(keyNode, pathOrTopLevel(), describe(keyNode) + " (expected: a key name)");
            }
            String key = scalar.getValue();
            if (!askedFor.contains(key)) {
                throw refusal(keyNode, key, "unknown key (expected: one of " + String.join(", ", askedFor) + ")");
            }
            NodeTuple first = byName.get(key);
            if (first != entry) {
                throw refusal(keyNode, key, "duplicate key (first at line " + line(first.getKeyNode()) + ")");
            }
        }
        if (firstRefusal != null) {
            throw firstRefusal;
        }
    }

    /**
     * {@link #done()}, then builds the section's record. A record's own refusal ({@code maxPoolSize: 0 (expected: >=
     * 1)}) is reported at the line of the key its message starts with when the file has it, else at the section's.
     */
    <T> T done(Supplier<T> record) {
        done();
        try {
            return record.get();
        } catch (IllegalArgumentException e) {
            String message = e.getMessage() == null ? e.toString() : e.getMessage();
            int colon = message.indexOf(':');
            NodeTuple entry = colon > 0 ? byName.get(message.substring(0, colon)) : null;
            Node where = entry == null ? at : entry.getValueNode();
            throw new ConfigException(source + " line " + line(where) + ": " + join(message), e);
        }
    }

    private long integer(String key, long absent, long max) {
        return read(key, absent, value -> {
            if (!(value instanceof ScalarNode scalar) || !DECIMAL.matcher(scalar.getValue()).matches()) {
                throw refusal(value, key, describe(value) + " (expected: an integer)");
            }
            try {
                long number = Long.parseLong(scalar.getValue().replace("_", ""));
                if (number <= max && number >= -max - 1) {
                    return number;
                }
            } catch (NumberFormatException e) {
                // too large for a long: refused below like any value out of range
            }
            throw refusal(value, key, describe(value) + " (expected: an integer no larger than " + max + ")");
        });
    }

    /**
     * {@code convert} applied to the value of {@code key}; {@code absent} when the key is absent, has no value, or
     * {@code convert} refuses it.
     */
    private <T> T read(String key, T absent, Function<Node, T> convert) {
        return deferring(absent, () -> {
            Node value = value(key);
            return value == null ? absent : convert.apply(value);
        });
    }

    /** What {@code reading} returns, or {@code absent} when it refuses: the refusal waits for {@link #done()}. */
    private <T> T deferring(T absent, Supplier<T> reading) {
        try {
            return reading.get();
        } catch (ConfigException e) {
            defer(e);
            return absent;
        }
    }

    /** The section under the key of {@code entry}, refusals about it as a whole pointing at that key. */
    private YamlSection child(NodeTuple entry, String childPath, String shape, boolean emptyWhenNull) {
        return new YamlSection(source, childPath, entry.getKeyNode(), entry.getValueNode(), shape, emptyWhenNull);
    }

    private static <T> T readWith(Function<YamlSection, T> reader, YamlSection section) {
        T value = reader.apply(section);
        if (!section.done) {
            throw new IllegalStateException("the reader of " + section.path + " did not call done()");
        }
        return value;
    }

    private void defer(ConfigException refusal) {
        if (firstRefusal == null) {
            firstRefusal = refusal;
        }
    }

    /** The entry of {@code key}, recording that it was asked for. */
    private NodeTuple entry(String key) {
        askedFor.add(key);
        return byName.get(key);
    }

    /** The value of {@code key}; {@code null} when the key is absent or has no value. */
    private Node value(String key) {
        NodeTuple entry = entry(key);
        return entry == null || isNull(entry.getValueNode()) ? null : entry.getValueNode();
    }

    /** A scalar's text whatever YAML type it resolved to: {@code password: 123456} is the string "123456". */
    private String text(Node node, String key) {
        if (node instanceof ScalarNode scalar) {
            return isNull(node) ? null : scalar.getValue();
        }
        throw refusal(node, key, describe(node) + " (expected: a string)");
    }

    private ConfigException refusal(Node where, String key, String what) {
        return error(where, join(key), what);
    }

    private ConfigException error(Node where, String keyPath, String what) {
        return new ConfigException(source + " line " + line(where) + ": " + keyPath + ": " + what);
    }

    private String join(String key) {
        return path.isEmpty() ? key : path + "." + key;
    }

    private String pathOrTopLevel() {
        return path.isEmpty() ? "(top level)" : path;
    }

    private static int line(Node node) {
        return node.getStartMark().getLine() + 1;
    }

    static boolean isNull(Node node) {
        return node instanceof ScalarNode && Tag.NULL.equals(node.getTag());
    }

    /** How a value appears in a refusal: strings quoted as in the file, other scalars bare, collections by kind. */
    private static String describe(Node node) {
        if (node instanceof ScalarNode scalar) {
            if (Tag.STR.equals(node.getTag())) {
                return '"' + scalar.getValue().replace("\\", "\\\\").replace("\"", "\\\"") + '"';
            }
            return isNull(node) ? "empty" : scalar.getValue();
        }
        return node instanceof SequenceNode ? "a list" : "a mapping";
    }
}
