package io.sluice.frontend;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.EventExecutor;
import io.sluice.backend.BackendServerInfo;
import io.sluice.backend.pool.BackendPool;
import io.sluice.balancer.BackendGroup;
import io.sluice.capture.TrafficCapture;
import io.sluice.config.PoolingConfig;
import io.sluice.config.ProxyConfig;
import io.sluice.config.ReadWriteSplittingConfig;
import io.sluice.config.ServerAccountsConfig;
import io.sluice.metrics.CommandObserver;
import io.sluice.metrics.RateLimitedWarning;
import io.sluice.metrics.TrafficCounters;
import io.sluice.protocol.Capabilities;
import io.sluice.routing.ReadWriteGroup;
import io.sluice.rules.QueryRule;
import io.sluice.rules.QueryRules;
import io.sluice.slowlog.SlowQueryLog;
import io.sluice.statistics.DigestStatistics;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.LoggerFactory;

/**
 * What every client session reads: the configuration and users of the moment, what is offered to clients (capabilities,
 * server version), the backends and their pools, and where sessions report (the {@link SessionRegistry}, each loop's
 * {@link CommandObserver}, the traffic capture). Built once at start; read from every event loop, so everything here
 * is immutable, volatile or concurrent.
 */
public final class FrontendContext {
    /** Replaced on config reload (databaseName, users); the rest of what sessions read from it does not change. */
    private volatile ProxyConfig config;
    /**
     * Replaced on config reload, or by each reading of the server's accounts; a session checks a login against the
     * users of that moment.
     */
    private volatile ProxyUsers users;
    /** {@code users: FROM_BACKEND}: where the users come from; {@code null} with users of config.yaml. */
    private volatile ServerAccounts serverAccounts;
    /** What clients are offered; replaced once when Sluice started before any backend answered. */
    private volatile Offer offer;
    private volatile boolean provisional;
    private final BackendGroup group;
    /** By data source name; concurrent so that a config reload can add and remove backends. */
    private final Map<String, BackendPool> pools;
    /** Session or transaction pooling: fixed at start (a reload that changes it needs a restart). */
    private final PoolingConfig pooling;
    private final SessionRegistry registry;
    private final PoolExhaustion poolExhaustion;
    private final TrafficCapture capture;
    private final Map<String, ReadWriteGroup> readWriteGroups = new ConcurrentHashMap<>();
    /** Per-loop command and byte counters; {@code null} when metrics are off. */
    private final TrafficCounters traffic;
    private final SlowQueryLog slowQueryLog;
    /** Statement statistics by digest; {@code null} when off. */
    private volatile DigestStatistics statistics;
    /** The query rules ({@code !QUERY_RULES}); empty when none are configured. Reloaded in place. */
    private final QueryRules queryRules;
    private final Map<EventExecutor, StatementMirror> mirrors = new ConcurrentHashMap<>();
    /** Each loop's {@link CommandObserver}, made once per loop. */
    private final Map<EventExecutor, CommandObserver> observers = new ConcurrentHashMap<>();
    /** The tables and views whose code leaves session state (decision 200); read only where sessions pool. */
    private final HiddenCode hiddenCode;
    private volatile DirectMemoryHeadroom headroom = DirectMemoryHeadroom.ofThisJvm();
    /** Running out of direct memory is logged at WARN once a minute, however many clients it turns away. */
    private final RateLimitedWarning directMemoryWarning = new RateLimitedWarning(
            LoggerFactory.getLogger(DirectMemoryHeadroom.class));

    /**
     * @param registry where sessions enter and leave
     * @param traffic per-loop counters, or {@code null} with metrics off
     * @param slowQueryLog the slow-query log (it may be switched off)
     */
    public FrontendContext(ProxyConfig config, BackendServerInfo serverInfo, BackendGroup group,
            Map<String, BackendPool> pools, SessionRegistry registry, TrafficCounters traffic,
            SlowQueryLog slowQueryLog) {
        this.config = config;
        this.pooling = config.pooling();
        this.users = new ProxyUsers(config.users());
        this.offer = Offer.of(serverInfo, pooling.transactionPooling());
        this.group = group;
        for (ReadWriteSplittingConfig split : config.readWriteSplitting()) {
            readWriteGroups.put(split.name(), new ReadWriteGroup(split, group));
        }
        this.pools = new ConcurrentHashMap<>(pools);
        this.hiddenCode = new HiddenCode(() -> List.copyOf(this.pools.values()));
        this.registry = registry;
        this.poolExhaustion = new PoolExhaustion(registry, pooling.transactionPooling());
        this.traffic = traffic;
        this.slowQueryLog = slowQueryLog;
        this.capture = new TrafficCapture(config.operations().capture());
        this.queryRules = new QueryRules(config.queryRules(), config.allowList());
    }

    /** The server face clients see: its greeting's version and collation, and the capabilities offered. */
    private record Offer(BackendServerInfo serverInfo, int capabilities, int mariaDbCapabilities) {
        static Offer of(BackendServerInfo serverInfo, boolean transactionPooling) {
            // Facing a MariaDB, Sluice leaves CLIENT_LONG_PASSWORD ("CLIENT_MYSQL") unset as the server does, so that
            // MariaDB clients read and send the extended capabilities Sluice can relay.
            int offered = Capabilities.PROXY_SUPPORTED & serverInfo.capabilities();
            return new Offer(serverInfo,
                    serverInfo.hasMariaDbCapabilities() ? offered : offered | Capabilities.CLIENT_LONG_PASSWORD,
                    serverInfo.hasMariaDbCapabilities()
                            ? Capabilities.mariaDbOffered(serverInfo.mariaDbCapabilities(), transactionPooling) : 0);
        }
    }

    /** Sluice started before any backend answered: clients are offered {@code provisional} until one does. */
    public void startProvisional() {
        provisional = true;
    }

    /** Whether no backend has answered yet since Sluice started. */
    public boolean isProvisional() {
        return provisional;
    }

    /**
     * A backend answered: if Sluice started before any did, its greeting's version, collation and capabilities are
     * what clients are offered from now on.
     */
    public void learnServer(BackendServerInfo serverInfo) {
        if (provisional) {
            offer = Offer.of(serverInfo, pooling.transactionPooling());
            provisional = false;
        }
    }

    /** Whether a new client may start a session, given the direct memory left. */
    DirectMemoryHeadroom headroom() {
        return headroom;
    }

    /** Replaces the direct-memory check new clients pass: a test's, whose figures it sets. */
    public void useHeadroom(DirectMemoryHeadroom value) {
        this.headroom = value;
    }

    RateLimitedWarning directMemoryWarning() {
        return directMemoryWarning;
    }

    public ProxyConfig config() {
        return config;
    }

    ProxyUsers users() {
        return users;
    }

    /** The server's accounts ({@code users: FROM_BACKEND}), or {@code null}: Sluice's own users. */
    ServerAccounts serverAccounts() {
        return serverAccounts;
    }

    /**
     * Checks logins against the server's accounts from now on ({@code users: FROM_BACKEND}), read from the data
     * sources in config order and scheduled on {@code scheduler}. Call once, before the listener opens.
     *
     * @return the readings, started; stop them when Sluice closes
     */
    public ServerAccounts useServerAccounts(ServerAccountsConfig settings, ScheduledExecutorService scheduler) {
        this.users = ProxyUsers.fromServer(List.of(), List.of()); // nobody until the first reading
        ServerAccounts accounts = new ServerAccounts(settings, () -> config.dataSources().keySet().stream()
                .map(pools::get).filter(Objects::nonNull).toList(), scheduler, this::serverAccountsRead);
        this.serverAccounts = accounts;
        accounts.start();
        return accounts;
    }

    /** The tables and views whose triggers or definitions leave session state: transaction pooling's scans read it. */
    public HiddenCode hiddenCode() {
        return hiddenCode;
    }

    /** A reading of the server's accounts: logins are checked against it from now on. */
    void serverAccountsRead(ProxyUsers read) {
        this.users = read;
    }

    BackendServerInfo serverInfo() {
        return offer.serverInfo();
    }

    BackendGroup group() {
        return group;
    }

    BackendPool pool(String dataSource) {
        return pools.get(dataSource);
    }

    /** The capability flags offered to clients: what Sluice relays, less what the backend lacks. */
    int capabilities() {
        return offer.capabilities();
    }

    /** The MariaDB extended capabilities offered to clients (0 facing MySQL). */
    int mariaDbCapabilities() {
        return offer.mariaDbCapabilities();
    }

    String serverVersion() {
        String configured = config.server().serverVersion();
        return configured != null ? configured : offer.serverInfo().serverVersion();
    }

    /** Session or transaction pooling, as Sluice started with. */
    public PoolingConfig pooling() {
        return pooling;
    }

    /**
     * The schema a session on {@code dataSource} gets when it asks for {@code requested}: {@code databaseName} maps
     * to the database in that data source's URL; every other name passes through.
     */
    String resolveSchema(String requested, String dataSource) {
        if (requested == null || (!requested.equals(config.databaseName())
                && config.readWriteGroupFor(requested) == null)) {
            return requested;
        }
        String target = pools.get(dataSource).urlDatabase(); // not dataSource().jdbcUrl(): that parses per login
        return target != null ? target : requested;
    }

    /**
     * The read/write split group a session asking for {@code schema} uses, or {@code null} (pass-through). One
     * runtime group per configured group, kept across reloads by name.
     */
    ReadWriteGroup readWriteGroup(String schema) {
        ReadWriteSplittingConfig wanted = config.readWriteGroupFor(schema);
        if (wanted == null) {
            return null;
        }
        ReadWriteGroup known = readWriteGroups.get(wanted.name());
        if (known == null || !known.config().equals(wanted)) {
            known = readWriteGroups.merge(wanted.name(), new ReadWriteGroup(wanted, group),
                    (old, fresh) -> old.config().equals(wanted) ? old : fresh);
        }
        return known;
    }

    /** The read/write split groups sessions used since start, for the metrics. */
    public java.util.Collection<ReadWriteGroup> readWriteGroups() {
        return readWriteGroups.values();
    }

    /** Applies a reloaded configuration: users and databaseName take effect for the next login. */
    public void reconfigure(ProxyConfig newConfig) {
        if (serverAccounts == null) { // the server's accounts are read on their own schedule
            this.users = new ProxyUsers(newConfig.users());
        }
        this.config = newConfig;
        if (!queryRules.rules().stream().map(QueryRule::config).toList().equals(newConfig.queryRules())
                || !java.util.Objects.equals(queryRules.allowListConfig(), newConfig.allowList())) {
            queryRules.update(newConfig.queryRules(), newConfig.allowList()); // from every session's next statement
        }
    }

    /** The copies of statements {@code mirror} rules make on {@code loop}. */
    StatementMirror mirror(EventLoop loop) {
        return mirrors.computeIfAbsent(loop, l -> new StatementMirror(this, loop));
    }

    /** The query rules; never {@code null} (empty when none are configured). */
    public QueryRules queryRules() {
        return queryRules;
    }

    /**
     * Makes a data source's pool known to sessions (config reload added it). A removed data source's pool stays
     * known: sessions still on it look it up by name until they end.
     */
    public void addPool(String name, BackendPool pool) {
        pools.put(name, pool);
    }

    /** Where sessions enter and leave, for admission, graceful shutdown and the admin API. */
    public SessionRegistry registry() {
        return registry;
    }

    /** Explains a pool that ran out, to the client and (rate-limited) to the operator. */
    PoolExhaustion poolExhaustion() {
        return poolExhaustion;
    }

    /** Where a loop's sessions report their commands: its counters (none with metrics off) and the slow-query log. */
    CommandObserver commandObserver(EventExecutor loop) {
        return observers.computeIfAbsent(loop,
                l -> new CommandObserver(traffic == null ? null : traffic.forLoop(l), slowQueryLog));
    }

    /** Statement statistics by digest, or {@code null} when off. */
    public DigestStatistics statistics() {
        return statistics;
    }

    /** Turns statement statistics by digest on for sessions that log in from now on ({@code null}: off). */
    public void useStatistics(DigestStatistics value) {
        statistics = value;
    }

    /** Traffic capture: sessions read its {@link TrafficCapture#run()} once per command. */
    public TrafficCapture capture() {
        return capture;
    }
}
