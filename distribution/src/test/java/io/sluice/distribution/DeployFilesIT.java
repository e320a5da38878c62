package io.sluice.distribution;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.config.ConfigYaml;
import io.sluice.config.ProxyConfig;
import io.sluice.config.ShutdownConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * The deployment files nobody can run here (deploy/kubernetes, deploy/docker/Dockerfile, the systemd unit) checked
 * for what can be checked without a cluster: they parse, every file they name exists, the names they share agree,
 * Sluice accepts the configuration they carry, and the shutdown timings of the pod fit together.
 */
class DeployFilesIT {

    private static final Path REPOSITORY = Path.of(System.getProperty("sluice.repo.dir", ".."));
    private static final Path KUBERNETES = REPOSITORY.resolve("deploy/kubernetes");
    private static final Path DOCKER = REPOSITORY.resolve("deploy/docker");
    private static final String VERSION = System.getProperty("sluice.version");

    private static Map<String, Object> configMap;
    private static Map<String, Object> secret;
    private static Map<String, Object> deployment;
    private static Map<String, Object> service;
    private static Map<String, Object> disruptionBudget;
    private static Map<String, Object> serviceMonitor;

    @BeforeAll
    static void readManifests() throws IOException {
        configMap = manifest("configmap.yaml", "ConfigMap");
        secret = manifest("secret.yaml", "Secret");
        deployment = manifest("deployment.yaml", "Deployment");
        service = manifest("service.yaml", "Service");
        disruptionBudget = manifest("poddisruptionbudget.yaml", "PodDisruptionBudget");
        serviceMonitor = manifest("servicemonitor.yaml", "ServiceMonitor");
    }

    @Test
    void kustomizationListsEveryManifestAndOnlyFilesThatExist() throws IOException {
        Map<String, Object> kustomization = yaml(KUBERNETES.resolve("kustomization.yaml"));
        List<String> resources = strings(kustomization.get("resources"));

        assertThat(resources).allSatisfy(file -> assertThat(KUBERNETES.resolve(file)).isRegularFile());
        try (Stream<Path> files = Files.list(KUBERNETES)) {
            assertThat(files.map(f -> f.getFileName().toString()).filter(f -> f.endsWith(".yaml"))
                    .filter(f -> !f.equals("kustomization.yaml"))).containsExactlyInAnyOrderElementsOf(resources);
        }
    }

    @Test
    void theDeploymentRunsThisVersionWithTheConfigMapAndSecretItNames() {
        Map<String, Object> pod = map(map(deployment, "spec", "template"), "spec");
        Map<String, Object> container = container();

        assertThat(container.get("image")).isEqualTo("sluice:" + VERSION);
        Map<String, String> mounts = new java.util.HashMap<>();
        for (Object mount : list(container, "volumeMounts")) {
            Map<String, Object> m = cast(mount);
            mounts.put((String) m.get("name"), (String) m.get("mountPath"));
        }
        for (Object volume : list(pod, "volumes")) {
            Map<String, Object> v = cast(volume);
            assertThat(mounts).containsKey((String) v.get("name"));
            if (v.containsKey("configMap")) {
                assertThat(map(v, "configMap").get("name")).isEqualTo(name(configMap));
                // start.sh --foreground [port] [conf-dir]: the conf dir is the ConfigMap's mount
                assertThat(strings(container.get("args"))).last().isEqualTo(mounts.get(v.get("name")));
            }
            if (v.containsKey("secret")) {
                assertThat(map(v, "secret").get("secretName")).isEqualTo(name(secret));
            }
        }
        assertThat(map(map(deployment, "spec"), "selector", "matchLabels"))
                .isEqualTo(map(map(deployment, "spec", "template"), "metadata", "labels"));
    }

    @Test
    void probesAndServicePortsNameTheContainersPorts() {
        Map<String, Object> container = container();
        List<String> portNames = new ArrayList<>();
        for (Object port : list(container, "ports")) {
            portNames.add((String) asMap(port).get("name"));
        }
        assertThat(map(container, "livenessProbe", "httpGet").get("path")).isEqualTo("/livez");
        assertThat(map(container, "readinessProbe", "httpGet").get("path")).isEqualTo("/readyz");
        assertThat(map(container, "startupProbe", "httpGet").get("path")).isEqualTo("/livez");
        for (String probe : List.of("livenessProbe", "readinessProbe", "startupProbe")) {
            assertThat(portNames).contains((String) map(container, probe, "httpGet").get("port"));
        }
        List<String> servicePorts = new ArrayList<>();
        for (Object port : list(map(service, "spec"), "ports")) {
            assertThat(portNames).contains((String) asMap(port).get("targetPort"));
            servicePorts.add((String) asMap(port).get("name"));
        }
        for (Object endpoint : list(map(serviceMonitor, "spec"), "endpoints")) {
            assertThat(servicePorts).contains((String) asMap(endpoint).get("port"));
            assertThat(asMap(endpoint).get("path")).isEqualTo("/metrics");
        }
        Map<String, Object> podLabels = map(map(deployment, "spec", "template"), "metadata", "labels");
        assertThat(map(map(service, "spec"), "selector")).isEqualTo(podLabels);
        assertThat(map(map(disruptionBudget, "spec"), "selector", "matchLabels")).isEqualTo(podLabels);
        assertThat(map(map(serviceMonitor, "spec"), "selector", "matchLabels")).isEqualTo(map(service, "metadata",
                "labels"));
    }

    /**
     * Kubernetes counts terminationGracePeriodSeconds from the deletion: the preStop hook, then Sluice's shutdown
     * (wait, then close), must both fit, or the pod is killed with sessions still open. And balancers polling
     * /readyz must see the 503 before Sluice starts refusing connections.
     */
    @Test
    void shutdownTimingsFitTheGracePeriod(@TempDir Path secrets) throws IOException {
        ShutdownConfig shutdown = podConfig(secrets).operations().shutdown();
        Map<String, Object> pod = map(map(deployment, "spec", "template"), "spec");
        Map<String, Object> container = container();
        List<String> preStop = strings(map(container, "lifecycle", "preStop", "exec").get("command"));
        assertThat(preStop).hasSize(2).first().isEqualTo("sleep");
        long preStopSeconds = Long.parseLong(preStop.get(1));
        long grace = ((Number) pod.get("terminationGracePeriodSeconds")).longValue();
        Map<String, Object> readiness = map(container, "readinessProbe");
        long readinessMillis = 1000L * ((Number) readiness.get("periodSeconds")).longValue()
                * ((Number) readiness.get("failureThreshold")).longValue();

        long needed = preStopSeconds * 1000 + shutdown.gracefulWaitBeforeShutdownMilliseconds()
                + shutdown.gracefulCloseTimeoutMilliseconds();
        assertThat(grace * 1000).as("terminationGracePeriodSeconds against preStop + shutdown timings")
                .isGreaterThan(needed);
        assertThat(readinessMillis).as("readiness period x failures against gracefulWaitBeforeShutdown")
                .isLessThanOrEqualTo(shutdown.gracefulWaitBeforeShutdownMilliseconds());
    }

    /** The ConfigMap's config.yaml is one Sluice accepts, reading its secrets from the Secret's keys. */
    @Test
    void theConfigMapsConfigIsAcceptedWithTheSecretsFiles(@TempDir Path secrets) throws IOException {
        ProxyConfig config = podConfig(secrets);

        assertThat(config.server().address()).isEqualTo("0.0.0.0");
        assertThat(config.primaryDataSource().password()).isEqualTo("secret-backend-password");
        assertThat(config.users()).allSatisfy(user -> assertThat(user.password()).isEqualTo("secret-app-password"));
        assertThat(config.operations().admin().address()).isEqualTo("0.0.0.0");
        assertThat(config.operations().admin().token()).isEqualTo("secret-admin-token");
        int adminPort = config.operations().admin().port();
        for (Object port : list(container(), "ports")) {
            Map<String, Object> p = cast(port);
            if (p.get("name").equals("admin")) {
                assertThat(p.get("containerPort")).isEqualTo(adminPort);
            } else {
                assertThat(p.get("containerPort")).isEqualTo(config.server().port());
            }
        }
    }

    @Test
    void theDockerfileAddsFilesThatExistAndExposesTheConfiguredPorts() throws IOException {
        String dockerfile = Files.readString(DOCKER.resolve("Dockerfile"));
        Matcher sources = Pattern.compile("(?m)^(?:ADD|COPY)(?: --\\S+)* (\\S+) ").matcher(dockerfile);
        List<String> added = new ArrayList<>();
        while (sources.find()) {
            added.add(sources.group(1).replace("${VERSION}", VERSION));
        }
        assertThat(added).containsExactly("distribution/target/sluice-" + VERSION + ".tar.gz",
                "deploy/docker/config.yaml");
        assertThat(added).allSatisfy(file -> assertThat(REPOSITORY.resolve(file)).isRegularFile());

        // With no variable set, the image's config.yaml parses (and then refuses to start for want of a password).
        ProxyConfig config = ConfigYaml.parse(Files.readString(DOCKER.resolve("config.yaml")), "config.yaml");
        int server = config.server().port();
        int admin = config.operations().admin().port();
        assertThat(dockerfile).contains("EXPOSE " + server + " " + admin)
                .contains("/dev/tcp/127.0.0.1/" + admin)
                .contains("ENTRYPOINT [\"/opt/sluice/bin/start.sh\", \"--foreground\"]")
                .containsPattern("(?m)^USER \\$\\{SLUICE_UID\\}:0$");
        assertThat(config.users()).allSatisfy(user -> assertThat(user.password()).isEmpty());
    }

    @Test
    void theSystemdUnitStartsTheForegroundScriptAndWaitsLongEnoughToStop() throws IOException {
        Path unit = REPOSITORY.resolve("distribution/src/main/contrib/systemd/sluice.service");
        String text = Files.readString(unit);
        Matcher exec = Pattern.compile("(?m)^ExecStart=/opt/sluice/(\\S+) --foreground$").matcher(text);
        assertThat(exec.find()).as("ExecStart").isTrue();
        assertThat(REPOSITORY.resolve("distribution/src/main").resolve(exec.group(1))).isRegularFile();
        Matcher timeout = Pattern.compile("(?m)^TimeoutStopSec=(\\d+)$").matcher(text);
        assertThat(timeout.find()).isTrue();

        ShutdownConfig shipped = ConfigYaml.load(REPOSITORY.resolve("distribution/src/main/conf/config.yaml"))
                .operations().shutdown();
        assertThat(Long.parseLong(timeout.group(1)) * 1000).isGreaterThan(
                shipped.gracefulWaitBeforeShutdownMilliseconds() + shipped.gracefulCloseTimeoutMilliseconds());
        assertThat(text).contains("Type=exec").contains("SuccessExitStatus=143").contains("KillSignal=SIGTERM");
    }

    /** The ConfigMap's config.yaml, its secret files written from the Secret's keys into {@code secrets}. */
    private static ProxyConfig podConfig(Path secrets) throws IOException {
        String mountPath = null;
        for (Object mount : list(container(), "volumeMounts")) {
            if (asMap(mount).get("name").equals("secrets")) {
                mountPath = (String) asMap(mount).get("mountPath");
            }
        }
        assertThat(mountPath).as("the Secret's mount").isNotNull();
        for (String key : map(secret, "stringData").keySet()) {
            Files.writeString(secrets.resolve(key), "secret-" + key + "\n");
        }
        String config = (String) map(configMap, "data").get("config.yaml");
        assertThat(config).contains(mountPath + "/");
        Path conf = Files.createDirectories(secrets.resolve("conf"));
        return ConfigYaml.parse(config.replace(mountPath + "/", secrets + "/"), "configmap.yaml", conf);
    }

    private static Map<String, Object> container() {
        List<Object> containers = list(map(map(deployment, "spec", "template"), "spec"), "containers");
        assertThat(containers).hasSize(1);
        return cast(containers.get(0));
    }

    private static Map<String, Object> manifest(String file, String kind) throws IOException {
        Map<String, Object> manifest = yaml(KUBERNETES.resolve(file));
        assertThat(manifest.get("apiVersion")).as(file).isNotNull();
        assertThat(manifest.get("kind")).as(file).isEqualTo(kind);
        assertThat(name(manifest)).as(file).isEqualTo("sluice");
        return manifest;
    }

    private static Map<String, Object> yaml(Path file) throws IOException {
        return cast(new Yaml().load(Files.readString(file, StandardCharsets.UTF_8)));
    }

    private static String name(Map<String, Object> manifest) {
        return (String) map(manifest, "metadata").get("name");
    }

    /** The mapping at {@code path} under {@code parent}; fails naming the path when it is missing. */
    private static Map<String, Object> map(Map<String, Object> parent, String... path) {
        Map<String, Object> current = parent;
        for (String key : path) {
            assertThat(current).as("key %s", key).containsKey(key);
            current = cast(current.get(key));
        }
        return current;
    }

    private static List<Object> list(Map<String, Object> parent, String key) {
        assertThat(parent).containsKey(key);
        return cast(parent.get(key));
    }

    private static List<String> strings(Object list) {
        List<String> strings = new ArrayList<>();
        for (Object item : (List<?>) list) {
            strings.add(String.valueOf(item));
        }
        return strings;
    }

    private static Map<String, Object> asMap(Object value) {
        return cast(value);
    }

    @SuppressWarnings("unchecked")
    private static <T> T cast(Object value) {
        return (T) value;
    }

    /**
     * The Prometheus alerting rules shipped next to the Grafana dashboard parse as a rule file, and every Sluice
     * metric they use is one docs/operations.md describes (so a renamed metric cannot leave an alert silently dead).
     */
    @Test
    @SuppressWarnings("unchecked")
    void alertRulesParseAndUseOnlyDocumentedMetrics() throws IOException {
        Map<String, Object> rules = yaml(REPOSITORY.resolve("distribution/src/main/conf/prometheus/sluice-alerts.yaml"));
        List<Map<String, Object>> groups = (List<Map<String, Object>>) rules.get("groups");
        assertThat(groups).isNotEmpty();
        String operations = Files.readString(REPOSITORY.resolve("docs/operations.md"), StandardCharsets.UTF_8);
        List<String> alerts = new ArrayList<>();
        for (Map<String, Object> group : groups) {
            for (Map<String, Object> rule : (List<Map<String, Object>>) group.get("rules")) {
                String alert = (String) rule.get("alert");
                alerts.add(alert);
                assertThat((String) rule.get("expr")).as("%s: expr", alert).isNotBlank();
                assertThat(((Map<String, Object>) rule.get("annotations")).get("summary")).as("%s: summary", alert)
                        .isNotNull();
                Matcher metric = Pattern.compile("sluice_[a-z_]+").matcher((String) rule.get("expr"));
                while (metric.find()) {
                    String name = metric.group().replaceAll("_(count|bucket|sum)$", "");
                    assertThat(operations).as("%s uses %s", alert, name).contains("`" + name + "`");
                }
            }
        }
        assertThat(alerts).doesNotHaveDuplicates().contains("SluiceDown", "SluiceNoBackendUp", "SluicePoolExhausted");
    }
}
