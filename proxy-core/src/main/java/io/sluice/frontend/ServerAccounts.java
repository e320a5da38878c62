package io.sluice.frontend;

import io.sluice.auth.Credential;
import io.sluice.auth.Ed25519;
import io.sluice.backend.BackendException;
import io.sluice.backend.pool.BackendPool;
import io.sluice.config.ServerAccountsConfig;
import io.sluice.config.UserConfig;
import io.sluice.protocol.Scramble;
import io.sluice.protocol.ServerErrors;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code authority.users: FROM_BACKEND} (decision 146): the server's accounts, read with the data source's account
 * from {@code mysql.global_priv} (MariaDB) or {@code mysql.user} (MySQL), every {@code refreshMilliseconds} and when a
 * login names an unknown user or fails its password (at most once per {@code minRefreshIntervalMilliseconds}, so that
 * a client trying names cannot make Sluice query the server faster). Each reading replaces the users logins are
 * checked against; a reading that fails keeps the last one.
 *
 * <p>What is kept of each account is what the server stores: user, host pattern, plugin and the mysql_native_password
 * hash SHA1(SHA1(password)), MariaDB's ed25519 public key or MySQL's caching_sha2_password SHA-256 crypt (decision
 * 172). Accounts of other plugins are kept too, so that their logins get a clear refusal rather
 * than "access denied"; roles and locked accounts are left out (their logins are denied, as by the server).
 */
public final class ServerAccounts {
    private static final Logger log = LoggerFactory.getLogger(ServerAccounts.class);

    /**
     * MariaDB 10.4+: one JSON document of privileges and authentication per account. The tables are named without
     * {@code mysql.}: the connection logs in to it (see {@link BackendPool#query}).
     */
    static final String MARIADB_ACCOUNTS = "SELECT User AS user, Host AS host,"
            + " JSON_VALUE(Priv, '$.plugin') AS plugin, JSON_VALUE(Priv, '$.authentication_string') AS hash,"
            + " JSON_VALUE(Priv, '$.account_locked') AS locked, JSON_VALUE(Priv, '$.is_role') AS role"
            + " FROM global_priv";
    /** MySQL 5.7+ (and MariaDB before 10.4, whose mysql.user has the same columns but for account_locked). */
    static final String MYSQL_ACCOUNTS = "SELECT User AS user, Host AS host, plugin, authentication_string AS hash,"
            + " account_locked AS locked, 'N' AS role FROM user";
    /** MariaDB's ed25519 plugin, as {@code mysql.global_priv} names it. */
    static final String ED25519 = "ed25519";
    /** The longest a reading may take, whatever the data source's connection timeout. */
    private static final long MAX_READ_MILLIS = 10_000;

    private final ServerAccountsConfig settings;
    private final Supplier<Collection<BackendPool>> pools;
    private final ScheduledExecutorService scheduler;
    private final Consumer<ProxyUsers> publish;
    private final AtomicReference<CompletableFuture<Void>> inFlight = new AtomicReference<>();
    private volatile long lastStartNanos;
    /** Which query the server answered last: MySQL's once MariaDB's table was missing. */
    private volatile boolean mySqlTable;
    private volatile ScheduledFuture<?> schedule;
    private volatile int accounts = -1;

    /**
     * @param pools the data sources to read from, in order: the first that answers
     * @param scheduler where the readings are scheduled (the health-check thread)
     * @param publish receives the users of each reading
     */
    public ServerAccounts(ServerAccountsConfig settings, Supplier<Collection<BackendPool>> pools,
            ScheduledExecutorService scheduler, Consumer<ProxyUsers> publish) {
        this.settings = settings;
        this.pools = pools;
        this.scheduler = scheduler;
        this.publish = publish;
        this.lastStartNanos = System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(
                settings.minRefreshIntervalMilliseconds());
    }

    /** Reads the accounts now, then every {@code refreshMilliseconds}. */
    public void start() {
        schedule = scheduler.scheduleWithFixedDelay(this::refresh, 0, settings.refreshMilliseconds(),
                TimeUnit.MILLISECONDS);
    }

    public void stop() {
        ScheduledFuture<?> running = schedule;
        if (running != null) {
            running.cancel(false);
        }
    }

    /** Accounts of the last reading; -1 before the first succeeded. */
    public int accounts() {
        return accounts;
    }

    /**
     * A login named an unknown user, or failed a server account's password: reads the accounts again unless a reading
     * runs (then its end) or one started less than {@code minRefreshIntervalMilliseconds} ago (then at once).
     *
     * @return completes when the users are as current as the rate limit allows (never exceptionally)
     */
    CompletableFuture<Void> refreshSoon() {
        CompletableFuture<Void> running = inFlight.get();
        if (running != null) {
            return running;
        }
        long sinceLast = System.nanoTime() - lastStartNanos;
        if (sinceLast < TimeUnit.MILLISECONDS.toNanos(settings.minRefreshIntervalMilliseconds())) {
            return CompletableFuture.completedFuture(null);
        }
        return refresh();
    }

    /** Reads the accounts, unless a reading runs already (then its end). Never completes exceptionally. */
    public CompletableFuture<Void> refresh() {
        CompletableFuture<Void> mine = new CompletableFuture<>();
        if (!inFlight.compareAndSet(null, mine)) {
            CompletableFuture<Void> running = inFlight.get();
            return running != null ? running : CompletableFuture.completedFuture(null);
        }
        lastStartNanos = System.nanoTime();
        read(new ArrayList<>(pools.get()).iterator(), null).whenComplete((rows, error) -> {
            try {
                if (rows != null) {
                    ProxyUsers users = parse(rows, this::refusedByServer);
                    publish.accept(users);
                    if (accounts != users.size()) {
                        log.info("users: FROM_BACKEND: {} server accounts read", users.size());
                    }
                    accounts = users.size();
                } else {
                    log.warn("users: FROM_BACKEND: cannot read the server's accounts, logins use the last reading"
                            + " ({} accounts): {}", Math.max(accounts, 0), error.getMessage());
                }
            } catch (RuntimeException e) {
                log.warn("users: FROM_BACKEND: cannot use the server's accounts: {}", e.toString());
            } finally {
                inFlight.set(null);
                mine.complete(null);
            }
        });
        return mine;
    }

    /** Reads from the first data source that answers; fails with the last failure when none does. */
    private CompletableFuture<List<Map<String, String>>> read(Iterator<BackendPool> remaining, Throwable last) {
        if (!remaining.hasNext()) {
            return CompletableFuture.failedFuture(last != null ? last : new BackendException("no data source"));
        }
        BackendPool pool = remaining.next();
        long timeout = Math.min(MAX_READ_MILLIS, pool.dataSource().connectionTimeoutMilliseconds());
        return pool.ownConnections().query("mysql", mySqlTable ? MYSQL_ACCOUNTS : MARIADB_ACCOUNTS, timeout)
                .handle((rows, error) -> {
                    if (rows != null) {
                        return CompletableFuture.completedFuture(rows);
                    }
                    Throwable cause = error instanceof java.util.concurrent.CompletionException ce
                            && ce.getCause() != null ? ce.getCause() : error;
                    if (!mySqlTable && cause instanceof BackendException be && be.serverError() != null
                            && be.serverError().code() == ServerErrors.ER_NO_SUCH_TABLE) {
                        mySqlTable = true; // MySQL, or MariaDB before 10.4: mysql.user holds the accounts
                        return pool.ownConnections().query("mysql", MYSQL_ACCOUNTS, timeout);
                    }
                    return read(remaining, cause);
                }).thenCompose(f -> f);
    }

    /**
     * The server refused a hash that logins learned from the last reading: the account changed or went since, so the
     * accounts are read again (rate limited), and the old password stops logging in without waiting for the schedule.
     */
    private void refusedByServer() {
        log.info("users: FROM_BACKEND: the server refused a learned credential, reading the accounts again");
        refreshSoon();
    }

    /** The users of a reading, each name's most specific host first, as the server matches them. */
    static ProxyUsers parse(List<Map<String, String>> rows) {
        return parse(rows, () -> { });
    }

    /** As {@link #parse(List)}; {@code onRefused} hears when the server refuses a hash logins learned. */
    static ProxyUsers parse(List<Map<String, String>> rows, Runnable onRefused) {
        List<Map<String, String>> sorted = new ArrayList<>(rows);
        sorted.sort(Comparator.comparingInt(row -> hostRank(String.valueOf(row.get("host")))));
        List<UserConfig> users = new ArrayList<>();
        List<String> unsupported = new ArrayList<>();
        List<byte[]> ed25519Keys = new ArrayList<>();
        for (Map<String, String> row : sorted) {
            String user = row.get("user");
            String host = row.get("host");
            if (user == null || user.isEmpty() || host == null || isTrue(row.get("role"))
                    || isTrue(row.get("locked"))) {
                continue; // anonymous accounts, roles and locked accounts log in through no one
            }
            String plugin = row.get("plugin") == null || row.get("plugin").isEmpty()
                    ? Scramble.MYSQL_NATIVE_PASSWORD : row.get("plugin");
            String hash = row.get("hash") == null ? "" : row.get("hash");
            byte[] ed25519Key = ED25519.equals(plugin) ? ed25519Key(hash) : null;
            ed25519Keys.add(ed25519Key);
            if (ed25519Key != null) {
                users.add(new UserConfig(user, host, "", null, 0)); // checked against the key, never this entry
                unsupported.add(null);
            } else if (Scramble.CACHING_SHA2_PASSWORD.equals(plugin) && isCachingSha2Hash(hash)) {
                users.add(new UserConfig(user, host, null, hash, 0)); // MySQL's: the full path, every login
                unsupported.add(null);
            } else if (!Scramble.MYSQL_NATIVE_PASSWORD.equals(plugin)) {
                users.add(new UserConfig(user, host, "", null, 0));
                unsupported.add(plugin);
            } else if (hash.isEmpty()) {
                users.add(new UserConfig(user, host, "", null, 0));
                unsupported.add(null);
            } else if (isNativeHash(hash)) {
                users.add(new UserConfig(user, host, null, hash, 0));
                unsupported.add(null);
            } else {
                // MariaDB's root@localhost has "invalid" here: no password login at all.
                users.add(new UserConfig(user, host, "", null, 0));
                unsupported.add(plugin + " without a password hash");
            }
        }
        return ProxyUsers.fromServer(users, unsupported, ed25519Keys, onRefused);
    }

    /** The public key MariaDB stores for an ed25519 account (base64, without padding), or {@code null}. */
    private static byte[] ed25519Key(String stored) {
        try {
            byte[] key = Base64.getDecoder().decode(stored);
            return key.length == Ed25519.KEY_LENGTH ? key : null;
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    private static boolean isCachingSha2Hash(String hash) {
        try {
            return Credential.of(null, hash) instanceof Credential.CachingSha2Hash;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private static boolean isNativeHash(String hash) {
        try {
            return Credential.of(null, hash) instanceof Credential.NativeHash;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private static boolean isTrue(String value) {
        if (value == null) {
            return false;
        }
        String v = value.toLowerCase(Locale.ROOT);
        return v.equals("true") || v.equals("y") || v.equals("1");
    }

    /**
     * How the server orders hosts for one user: literal hosts first, then patterns by the length of their literal
     * start (longest first), {@code %} last.
     */
    static int hostRank(String host) {
        int wildcard = -1;
        for (int i = 0; i < host.length(); i++) {
            char c = host.charAt(i);
            if (c == '%' || c == '_') {
                wildcard = i;
                break;
            }
        }
        return wildcard < 0 ? 0 : 1000 - Math.min(wildcard, 999);
    }
}
