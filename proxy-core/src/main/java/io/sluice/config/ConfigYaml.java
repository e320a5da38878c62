package io.sluice.config;

import io.sluice.balancer.HealthCheckConfig;
import io.sluice.balancer.Policy;
import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.Node;

/**
 * Reads config.yaml into a {@link ProxyConfig}. The file format is a superset of ShardingSphere-Proxy's
 * {@code config-*.yaml} plus the {@code authority} section of its {@code server.yaml}, so a ShardingSphere seed file
 * with {@code rules: []} loads unchanged. See docs/configuration.md for every key.
 *
 * <p>The file is read as a YAML node tree rather than bound to objects, so that every refusal can name the line and
 * the key path: {@code config.yaml line 7: dataSources.ds_0.maxPoolSize: "ten" (expected: an integer)}. Unknown keys
 * are refused rather than ignored, because a misspelt pool setting silently falling back to its default is worse
 * than not starting.
 *
 * <p>Values may name environment variables, {@code ${NAME}} or {@code ${NAME:-default}} ({@link EnvSubstitution}),
 * and secrets may be read from files ({@code passwordFile}, {@code tokenFile}), so that neither has to be written into
 * the file itself.
 *
 * <p>This class reads the text and the top level; {@link SectionReaders} reads each section into its record, through
 * a {@link YamlSection} that refuses the keys nobody read.
 */
public final class ConfigYaml {

    private final String source;
    private final SectionReaders readers;

    private ConfigYaml(String source, Path baseDirectory) {
        this.source = source;
        this.readers = new SectionReaders(baseDirectory);
    }

    /**
     * Reads a config.yaml file. Error messages name the file as given.
     *
     * @throws ConfigException when the file cannot be read or describes a configuration Sluice refuses
     */
    public static ProxyConfig load(Path file) {
        return load(file, System::getenv);
    }

    /** As {@link #load(Path)}, with {@code environment} for {@code ${NAME}} rather than the process's variables. */
    static ProxyConfig load(Path file, Function<String, String> environment) {
        Objects.requireNonNull(file, "file");
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new ConfigException(file + ": cannot be read (" + describe(e) + ")", e);
        }
        return parse(text, file.toString(), file.toAbsolutePath().getParent(), environment);
    }

    /**
     * Reads config.yaml text.
     *
     * @param sourceName how error messages name the text, usually its file name
     * @throws ConfigException when the text describes a configuration Sluice refuses
     */
    public static ProxyConfig parse(String yaml, String sourceName) {
        return parse(yaml, sourceName, null);
    }

    /**
     * Reads config.yaml text that belongs in {@code baseDirectory}: relative file names (certificates) are read from
     * there, and TLS certificates Sluice generates are kept there.
     *
     * @param baseDirectory the conf dir, or {@code null}: relative names are read from the working directory and
     *     generated certificates are kept in memory only
     * @throws ConfigException when the text describes a configuration Sluice refuses
     */
    public static ProxyConfig parse(String yaml, String sourceName, Path baseDirectory) {
        return parse(yaml, sourceName, baseDirectory, System::getenv);
    }

    /** As {@link #parse(String, String, Path)}, with {@code environment} for {@code ${NAME}}. */
    static ProxyConfig parse(String yaml, String sourceName, Path baseDirectory,
            Function<String, String> environment) {
        Node root = new EnvSubstitution(sourceName, environment).substitute(compose(yaml, sourceName));
        return new ConfigYaml(sourceName, baseDirectory).proxyConfig(YamlSection.document(root, sourceName));
    }

    /**
     * The top level of config.yaml text, not yet read: refuses text that is not YAML, or holds nothing, at
     * SnakeYAML's line and column. Environment variables are not substituted.
     */
    static YamlSection document(String yaml, String sourceName) {
        return YamlSection.document(compose(yaml, sourceName), sourceName);
    }

    /** The YAML tree of config.yaml text; refuses text that is not YAML, or holds nothing. */
    private static Node compose(String yaml, String sourceName) {
        Objects.requireNonNull(yaml, "yaml");
        Objects.requireNonNull(sourceName, "sourceName");
        // Editors on Windows save UTF-8 with a byte order mark, which YAML read from a String would reject.
        String text = yaml.startsWith("\uFEFF") ? yaml.substring(1) : yaml;
        Node root;
        try {
            root = new Yaml().compose(new StringReader(text));
        } catch (MarkedYAMLException e) {
            throw malformed(e, sourceName);
        } catch (YAMLException e) {
            throw new ConfigException(sourceName + ": malformed YAML: " + e.getMessage(), e);
        }
        if (root == null || YamlSection.isNull(root)) {
            throw new ConfigException(sourceName + ": empty (expected: at least a dataSources section)");
        }
        return root;
    }

    /** The top level: which section goes to which reader, and what an absent section stands for. */
    private ProxyConfig proxyConfig(YamlSection top) {
        String database = top.string("databaseName", null);
        Map<String, DataSourceConfig> dataSources = top.namedSections("dataSources",
                "a mapping of data source names", readers::dataSource);
        if (dataSources == null) {
            top.missing("dataSources", "at least one data source, such as "
                    + "ds_0: {url: jdbc:mysql://127.0.0.1:3306/test, username: root, password: }");
        } else if (dataSources.isEmpty()) {
            top.refuse("dataSources", "empty (expected: at least one data source)");
        }
        // Sluice does not rewrite SQL: of ShardingSphere's rules it runs read/write splitting only (RuleReaders).
        RuleReaders rules = new RuleReaders(dataSources == null ? Set.of() : dataSources.keySet(), readers);
        List<ReadWriteSplittingConfig> groups = new ArrayList<>();
        List<QueryRuleConfig> queryRules = new ArrayList<>();
        top.list("rules", "a list of rules, such as - !READWRITE_SPLITTING {dataSources: {...}}",
                rule -> rules.rule(rule, queryRules)).forEach(groups::addAll);
        ServerConfig server = top.section("server", readers.defaultServer(), readers::server);
        SectionReaders.Authority authority = top.section("authority", SectionReaders.Authority.NONE,
                readers::authority);
        Policy policy = top.section("loadBalancer", "a mapping such as {type: LEAST_CONNECTIONS}",
                ProxyConfig.DEFAULT_LOAD_BALANCER, SectionReaders::loadBalancer);
        HealthCheckConfig checks = top.section("healthCheck", HealthCheckConfig.defaults(),
                SectionReaders::healthCheck);
        OperationsConfig defaults = OperationsConfig.defaults();
        OperationsConfig operations = new OperationsConfig(
                top.section("admin", defaults.admin(), readers::admin),
                top.section("metrics", defaults.metrics(), SectionReaders::metrics).withStatistics(
                        top.isFlag("statistics") ? (top.flag("statistics", true) ? StatisticsConfig.defaults()
                                : StatisticsConfig.off()) : top.section("statistics", StatisticsConfig.defaults(),
                                SectionReaders::statistics)),
                top.section("shutdown", defaults.shutdown(), SectionReaders::shutdown),
                top.section("slowQueryLog", defaults.slowQueryLog(), SectionReaders::slowQueryLog),
                top.section("reload", defaults.watchConfigFile(), SectionReaders::watchFile),
                top.section("capture", readers.defaultCapture(), readers::capture));
        PoolingConfig pooling = top.section("pooling", "a mapping such as {mode: TRANSACTION}",
                PoolingConfig.defaults(), SectionReaders::pooling);
        top.done();
        try {
            return new ProxyConfig(database, dataSources, server, authority.users(), policy, checks, operations,
                    pooling, groups, authority.fromServer(), queryRules, rules.allowList());
        } catch (IllegalArgumentException e) {
            throw new ConfigException(source + ": " + e.getMessage(), e);
        }
    }

    private static ConfigException malformed(MarkedYAMLException e, String source) {
        Mark mark = e.getProblemMark() != null ? e.getProblemMark() : e.getContextMark();
        String problem = e.getProblem() != null ? e.getProblem() : e.getContext();
        if (mark == null) {
            return new ConfigException(source + ": malformed YAML: " + problem, e);
        }
        String context = e.getContext() != null && e.getProblem() != null ? " " + e.getContext() : "";
        return new ConfigException(source + " line " + (mark.getLine() + 1) + ": malformed YAML: " + problem
                + context + " (column " + (mark.getColumn() + 1) + ")", e);
    }

    private static String describe(IOException e) {
        return e.getMessage() == null ? e.getClass().getSimpleName()
                : e.getClass().getSimpleName() + ": " + e.getMessage();
    }
}
