package io.sluice.backend;

import java.util.Objects;

/**
 * The server account a session's backend connections log in as, when it is not the data source's own: a mapped
 * account ({@code backendUser} in config.yaml, with its password) or the client's own account read from the server
 * ({@code users: FROM_BACKEND}, with only the stage-one hash SHA1(password) that the client's login revealed).
 *
 * <p>Two accounts are equal when their user names are: connections are pooled per server account, and a connection
 * logged in as {@code acc_reader} serves any session of {@code acc_reader}, whichever credential opened it. The
 * credential is what a new connection logs in with; it never appears in {@link #toString()}.
 */
public final class BackendAccount {
    private final String user;
    /** The password in plain text, or {@code null} when only {@link #nativeStage1} is known. */
    private final String password;
    /** SHA1(password), or {@code null}: enough for mysql_native_password, nothing else. */
    private final byte[] nativeStage1;
    /** Where the server's refusal of a learned credential is kept, or {@code null} (a credential of config.yaml). */
    private final ServerRefusal refusal;

    private BackendAccount(String user, String password, byte[] nativeStage1, ServerRefusal refusal) {
        this.user = Objects.requireNonNull(user, "user");
        this.password = password;
        this.nativeStage1 = nativeStage1;
        this.refusal = refusal;
    }

    /** An account whose password Sluice holds (a mapped account of config.yaml). */
    public static BackendAccount withPassword(String user, String password) {
        return new BackendAccount(user, password == null ? "" : password, null, null);
    }

    /**
     * An account known only by SHA1(password), learned from a client's mysql_native_password login: Sluice can log in
     * with mysql_native_password only.
     */
    public static BackendAccount withNativeStage1(String user, byte[] stage1) {
        return withNativeStage1(user, stage1, null);
    }

    /**
     * As {@link #withNativeStage1(String, byte[])}, the server's refusal of it kept in {@code refusal}, shared by
     * every session that learned the same hash (decision 171).
     */
    public static BackendAccount withNativeStage1(String user, byte[] stage1, ServerRefusal refusal) {
        if (stage1 != null && stage1.length != 20) {
            throw new IllegalArgumentException("stage1: " + stage1.length + " bytes (expected: 20)");
        }
        return new BackendAccount(user, null, stage1 == null ? null : stage1.clone(), refusal);
    }

    /**
     * An account whose password a client sent in clear over TLS (an ed25519 account of {@code users: FROM_BACKEND},
     * decision 172), the server's refusal of it kept in {@code refusal}.
     */
    public static BackendAccount withLearnedPassword(String user, String password, ServerRefusal refusal) {
        return new BackendAccount(user, Objects.requireNonNull(password, "password"), null, refusal);
    }

    /** Where the server's refusal of this credential is kept, or {@code null}: never recorded. */
    public ServerRefusal refusal() {
        return refusal;
    }

    /** The server's user name. */
    public String user() {
        return user;
    }

    /** The password, or {@code null} when Sluice holds only the stage-one hash. */
    String password() {
        return password;
    }

    /** SHA1(password), or {@code null}; the empty password has neither and logs in with an empty response. */
    byte[] nativeStage1() {
        return nativeStage1;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof BackendAccount other && user.equals(other.user);
    }

    @Override
    public int hashCode() {
        return user.hashCode();
    }

    @Override
    public String toString() {
        return user; // never the credential
    }
}
