package io.sluice.config;

import java.util.List;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeId;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;
import org.yaml.snakeyaml.resolver.Resolver;

/**
 * Replaces {@code ${NAME}} and {@code ${NAME:-default}} in config.yaml's values with environment variables, so that a
 * container or a systemd unit can pass the backend password or the listen address without writing them into the file.
 *
 * <p>Substitution works on the parsed YAML tree, value by value, never on the text: a value that holds a colon, a
 * {@code #} or a newline cannot change the file's structure, and every refusal still points at the line in the file.
 * A plain (unquoted) value is typed again after substitution, so {@code port: ${PORT:-3307}} is an integer and
 * {@code enabled: ${TLS:-true}} a boolean; a quoted one stays a string. Keys are never substituted.
 *
 * <p>As in the shell, {@code :-} takes the default when the variable is unset or empty. {@code $${} writes a literal
 * {@code ${}. A variable that is unset and has no default is refused, naming it: a password that silently became
 * empty would be worse than not starting. So is a placeholder left open at the end of a value. Any other {@code ${}
 * stays as it is: ShardingSphere's inline expressions ({@code ds_${0..1}}) are not variables.
 */
final class EnvSubstitution {

    /** {@code $${...}} (kept literally, minus one {@code $}) or {@code ${NAME}} / {@code ${NAME:-default}}. */
    private static final Pattern PLACEHOLDER = Pattern.compile(
            "\\$\\$\\{|\\$\\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?}");
    /** A placeholder that was begun and never closed: {@code ${DB_PASSWORD} at the end of a value. */
    private static final Pattern UNCLOSED = Pattern.compile("\\$\\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?$");
    private static final String OPEN = "${";

    private final String source;
    private final Function<String, String> environment;
    private final Resolver resolver = new Resolver();

    /**
     * @param source how refusals name the file
     * @param environment the variables: {@code System::getenv}, or a map's {@code get} in tests
     */
    EnvSubstitution(String source, Function<String, String> environment) {
        this.source = source;
        this.environment = environment;
    }

    /** Substitutes every value under {@code root}, in place; returns {@code root}. */
    Node substitute(Node root) {
        return substitute(root, "");
    }

    private Node substitute(Node node, String path) {
        if (node instanceof MappingNode mapping) {
            List<NodeTuple> entries = mapping.getValue();
            for (int i = 0; i < entries.size(); i++) {
                NodeTuple entry = entries.get(i);
                String key = entry.getKeyNode() instanceof ScalarNode scalar ? scalar.getValue() : "?";
                Node value = substitute(entry.getValueNode(), path.isEmpty() ? key : path + "." + key);
                if (value != entry.getValueNode()) {
                    entries.set(i, new NodeTuple(entry.getKeyNode(), value));
                }
            }
            return mapping;
        }
        if (node instanceof SequenceNode sequence) {
            List<Node> items = sequence.getValue();
            for (int i = 0; i < items.size(); i++) {
                items.set(i, substitute(items.get(i), path + "[" + i + "]"));
            }
            return sequence;
        }
        if (node instanceof ScalarNode scalar && scalar.getValue().contains("$")) {
            return substituted(scalar, path);
        }
        return node;
    }

    /** The scalar with its placeholders replaced, or the scalar itself when it has none. */
    private Node substituted(ScalarNode scalar, String path) {
        String text = scalar.getValue();
        Matcher matcher = PLACEHOLDER.matcher(text);
        StringBuilder value = new StringBuilder();
        int last = 0;
        boolean changed = false;
        while (matcher.find()) {
            value.append(text, last, matcher.start());
            if (matcher.group(1) == null) {
                value.append(OPEN); // $${ is a literal ${
            } else {
                value.append(resolve(matcher.group(1), matcher.group(3), scalar, path));
            }
            last = matcher.end();
            changed = true;
        }
        refuseUnclosed(text.substring(last), scalar, path);
        if (!changed) {
            return scalar;
        }
        value.append(text, last, text.length());
        String result = value.toString();
        // A plain value is typed from its text, as the parser would have typed it had the file said it directly.
        Tag tag = scalar.getScalarStyle() == DumperOptions.ScalarStyle.PLAIN
                ? resolver.resolve(NodeId.scalar, result, true) : scalar.getTag();
        return new ScalarNode(tag, result, scalar.getStartMark(), scalar.getEndMark(), scalar.getScalarStyle());
    }

    private String resolve(String name, String fallback, ScalarNode scalar, String path) {
        String value = environment.apply(name);
        if (fallback != null && (value == null || value.isEmpty())) {
            return fallback;
        }
        if (value == null) {
            throw refusal(scalar, path, "${" + name + "} is not set (expected: the environment variable " + name
                    + ", or a default: ${" + name + ":-...})");
        }
        return value;
    }

    /** A placeholder begun and left open to the end of the value is a typo, such as a missing brace. */
    private void refuseUnclosed(String rest, ScalarNode scalar, String path) {
        if (UNCLOSED.matcher(rest).find()) {
            // The value is not quoted: it may be a password.
            throw refusal(scalar, path, "a ${ left open (expected: ${NAME} or ${NAME:-default}; $${ for a literal"
                    + " ${)");
        }
    }

    private ConfigException refusal(ScalarNode scalar, String path, String what) {
        return new ConfigException(source + " line " + (scalar.getStartMark().getLine() + 1) + ": " + path + ": "
                + what);
    }
}
