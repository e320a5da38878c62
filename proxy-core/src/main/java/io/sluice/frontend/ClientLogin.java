package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.sluice.auth.Credential;
import io.sluice.auth.Ed25519;
import io.sluice.auth.RsaKeyPair;
import io.sluice.backend.BackendAccount;
import io.sluice.protocol.ErrorCode;
import io.sluice.protocol.Packets;
import io.sluice.protocol.Scramble;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;

/**
 * The authentication exchange of one login (or COM_CHANGE_USER), Sluice as the server: mysql_native_password, and
 * caching_sha2_password complete, with its fast path, full authentication over TLS and the RSA-encrypted password
 * on plain connections; for {@code users: FROM_BACKEND}, a server account's mysql_native_password, MariaDB ed25519
 * (the password in clear, over TLS only) or MySQL caching_sha2_password (its full path, every login).
 *
 * <p>It reads the client's packets and produces at most one reply per packet; the session writes the replies and,
 * at the end, the OK or ERR. One instance per exchange, used on one event loop.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_caching_sha2_authentication_exchanges.html">caching_sha2_password exchanges</a>
 */
final class ClientLogin {

    /** What the session does after a packet. */
    enum Result {
        /** Send the reply and wait for the client's next packet. */
        CONTINUE,
        /** Send the reply if any, then OK at {@link #resultSequenceId()}. */
        SUCCESS,
        /** Send the ERR of {@link #failure()} at {@link #resultSequenceId()} and close. */
        FAILURE
    }

    private enum State {
        AWAIT_SWITCH_RESPONSE,
        /** perform_full_authentication went out: the password comes in clear (TLS), or 0x02 for the RSA key. */
        AWAIT_FULL_AUTH,
        /** The public key went out: the RSA-encrypted password is due. */
        AWAIT_ENCRYPTED_PASSWORD,
        /** An ed25519 server account: the switch to mysql_clear_password went out, the password is due (TLS). */
        AWAIT_CLEAR_PASSWORD,
        DONE
    }

    /** AuthMoreData: a status byte, or the public key, follows. */
    private static final int AUTH_MORE_DATA = 0x01;
    private static final int AUTH_SWITCH_REQUEST = 0xFE;
    private static final int REQUEST_PUBLIC_KEY = 0x02;
    private static final byte FAST_AUTH_SUCCESS = 0x03;
    private static final byte PERFORM_FULL_AUTHENTICATION = 0x04;
    /** The password in clear, NUL-terminated: only over TLS, for MariaDB's ed25519 accounts (decision 172). */
    static final String MYSQL_CLEAR_PASSWORD = "mysql_clear_password";

    private ProxyUsers.Account account;
    private final byte[] nonce;
    private final boolean secure;
    private final RsaKeyPair rsa;
    private final boolean clientPluginAuth;

    private State state;
    private String plugin;
    private ByteBuf reply;
    private int resultSequenceId;
    private ErrorCode failure = ErrorCode.ER_ACCESS_DENIED_ERROR;
    private boolean usedPassword;
    /**
     * A server account's login ({@code users: FROM_BACKEND}): the server account with SHA1(password), recovered from
     * the client's mysql_native_password scramble, to log in to the server as it. In memory only, for the session.
     */
    private BackendAccount serverAccount;
    /** The mysql_native_password response checked last, to check again against an account read anew. */
    private byte[] lastNativeResponse;
    /**
     * An ed25519 or caching_sha2_password server account's password that did not match the last reading, to check
     * again against the account read anew; zeroed once checked or discarded.
     */
    private byte[] lastClearPassword;

    /**
     * @param account the entry matching the user and client address, or {@code null} (the login fails)
     * @param nonce the 20-byte nonce of the greeting
     * @param secure whether the connection is TLS, so a password may travel in clear
     * @param rsa the key for encrypted passwords on plain connections
     * @param clientPluginAuth whether the client has CLIENT_PLUGIN_AUTH, so an AuthSwitchRequest can be sent
     */
    ClientLogin(ProxyUsers.Account account, byte[] nonce, boolean secure, RsaKeyPair rsa, boolean clientPluginAuth) {
        this.account = account;
        this.nonce = nonce;
        this.secure = secure;
        this.rsa = rsa;
        this.clientPluginAuth = clientPluginAuth;
    }

    /**
     * The client's first proof, from HandshakeResponse41 or COM_CHANGE_USER.
     *
     * @param clientPlugin the plugin that produced {@code response}, {@code null} for the protocol's old default
     * @param sequenceId the sequence id of the client's packet
     */
    Result start(String clientPlugin, byte[] response, int sequenceId, ByteBufAllocator alloc) {
        usedPassword = response.length > 0;
        resultSequenceId = sequenceId + 1;
        if (account != null && account.unsupportedPlugin() != null) {
            // A server account Sluice cannot log in as: a clear refusal, never the data source's account instead.
            failure = ErrorCode.ER_NOT_SUPPORTED_AUTH_MODE;
            return done(Result.FAILURE);
        }
        if (account != null && account.ed25519Key() != null) {
            return startClearPassword(clientPlugin, response, alloc);
        }
        String used = clientPlugin == null ? Scramble.MYSQL_NATIVE_PASSWORD : clientPlugin;
        String wanted = wantedPlugin(used);
        if (!wanted.equals(used)) {
            if (!clientPluginAuth) {
                failure = ErrorCode.ER_NOT_SUPPORTED_AUTH_MODE;
                return done(Result.FAILURE);
            }
            // Ask for the account's method over the same nonce, as MySQL does.
            plugin = wanted;
            state = State.AWAIT_SWITCH_RESPONSE;
            reply = authSwitchRequest(alloc, wanted, resultSequenceId);
            return Result.CONTINUE;
        }
        plugin = used;
        return check(response, alloc);
    }

    /** A further packet of the exchange (payload borrowed). */
    Result onPacket(ByteBuf payload, int sequenceId, ByteBufAllocator alloc) {
        resultSequenceId = sequenceId + 1;
        byte[] data = new byte[payload.readableBytes()];
        payload.getBytes(payload.readerIndex(), data);
        switch (state) {
            case AWAIT_SWITCH_RESPONSE:
                usedPassword = data.length > 0;
                return check(data, alloc);
            case AWAIT_FULL_AUTH:
                if (data.length == 1 && data[0] == REQUEST_PUBLIC_KEY && !secure) {
                    state = State.AWAIT_ENCRYPTED_PASSWORD;
                    reply = authMoreData(alloc, rsa.publicKeyPem());
                    return Result.CONTINUE;
                }
                if (secure) {
                    return verifyCleartext(withoutTrailingNul(data));
                }
                return decryptAndVerify(data); // a client that had the public key already
            case AWAIT_ENCRYPTED_PASSWORD:
                return decryptAndVerify(data);
            case AWAIT_CLEAR_PASSWORD:
                usedPassword = data.length > 1 || (data.length == 1 && data[0] != 0);
                return verifyServerPassword(withoutTrailingNul(data));
            default:
                return done(Result.FAILURE);
        }
    }

    /** The account the client proved to be; meaningful after SUCCESS only. */
    ProxyUsers.Account account() {
        return account;
    }

    /**
     * The server account the session's backend connections log in as, {@code null} for the data source's own;
     * meaningful after SUCCESS only.
     */
    BackendAccount backendAccount() {
        if (account.fromServer()) {
            // Never the data source's account in its place (null would mean that).
            if (serverAccount == null) {
                throw new IllegalStateException("a server account's login succeeded without its credential");
            }
            return serverAccount;
        }
        return account.backendAccount();
    }

    /** The account the login was checked against (may be {@code null}: none matched). */
    ProxyUsers.Account checkedAccount() {
        return account;
    }

    /**
     * Whether a failure may be a password changed on the server since Sluice read the accounts: a server account's
     * login whose proof {@link #recheck} can check again (the same mysql_native_password scramble, or the password
     * an ed25519 or caching_sha2_password login sent).
     */
    boolean mayRecheck() {
        return state == State.DONE && (lastNativeResponse != null || lastClearPassword != null) && account != null
                && account.fromServer()
                && failure == ErrorCode.ER_ACCESS_DENIED_ERROR;
    }

    /**
     * Checks the last mysql_native_password response again against {@code refreshed}, the account read anew from
     * the server ({@code null}: it is gone), as the server would check it now. One step: SUCCESS or FAILURE.
     */
    Result recheck(ProxyUsers.Account refreshed) {
        if (lastClearPassword != null) {
            byte[] password = lastClearPassword;
            lastClearPassword = null;
            if (refreshed == null || (refreshed.ed25519Key() == null
                    && !(refreshed.credential() instanceof Credential.CachingSha2Hash))) {
                Arrays.fill(password, (byte) 0);
                return done(Result.FAILURE);
            }
            account = refreshed;
            Result result = verifyServerPassword(password);
            forgetClearPassword();
            return result;
        }
        byte[] response = lastNativeResponse;
        lastNativeResponse = null;
        if (refreshed == null || refreshed.unsupportedPlugin() != null
                || !Scramble.MYSQL_NATIVE_PASSWORD.equals(refreshed.credential().plugin())) {
            return done(Result.FAILURE);
        }
        account = refreshed;
        return check(response, null);
    }

    /** The plugin the exchange ended with, for COM_CHANGE_USER's default. */
    String plugin() {
        return plugin;
    }

    /** The reply produced by the last call, handed over to the caller (may be {@code null}). */
    ByteBuf takeReply() {
        ByteBuf out = reply;
        reply = null;
        return out;
    }

    /** The sequence id of the final OK or ERR. */
    int resultSequenceId() {
        return resultSequenceId;
    }

    /** The error a failed login gets: access denied, or 1251 for a client that cannot switch plugins. */
    ErrorCode failure() {
        return failure;
    }

    /** Whether the client offered a password at all, for "(using password: YES)". */
    boolean usedPassword() {
        return usedPassword;
    }

    /** Releases a reply nobody took (the connection closed mid-exchange). */
    void discard() {
        forgetClearPassword();
        if (reply != null) {
            reply.release();
            reply = null;
        }
    }

    private String wantedPlugin(String used) {
        String required = account == null ? null : account.credential().plugin();
        if (required != null) {
            return required;
        }
        boolean known = Scramble.MYSQL_NATIVE_PASSWORD.equals(used) || Scramble.CACHING_SHA2_PASSWORD.equals(used);
        return known ? used : Scramble.MYSQL_NATIVE_PASSWORD; // the method every client has
    }

    private Result check(byte[] response, ByteBufAllocator alloc) {
        if (account == null) {
            return done(Result.FAILURE);
        }
        Credential credential = account.credential();
        if (account.fromServer() && credential instanceof Credential.CachingSha2Hash) {
            // MySQL's caching_sha2_password account: only its password logs in to the server later, so the fast path
            // (which proves the password without revealing it) is never taken: the full path, every login.
            if (response.length == 0) {
                return done(Result.FAILURE);
            }
            state = State.AWAIT_FULL_AUTH;
            reply = authMoreData(alloc, new byte[] {PERFORM_FULL_AUTHENTICATION});
            return Result.CONTINUE;
        }
        if (account.fromServer()) {
            return checkServerAccount(credential, response);
        }
        if (credential.isEmpty()) {
            boolean empty = response.length == 0 || (response.length == 1 && response[0] == 0);
            return done(empty ? Result.SUCCESS : Result.FAILURE);
        }
        if (Scramble.MYSQL_NATIVE_PASSWORD.equals(plugin)) {
            return done(credential.verifyNative(nonce, response) ? Result.SUCCESS : Result.FAILURE);
        }
        if (response.length == 0) {
            return done(Result.FAILURE); // no password for an account that has one
        }
        byte[] stage2 = account.sha2Stage2();
        if (stage2 != null) {
            if (!Scramble.checkCachingSha2(stage2, nonce, response)) {
                // MySQL asks for the password here, since its cache may predate an ALTER USER. Sluice's users change
                // only with a restart, so the entry is current and a mismatch is a wrong password.
                return done(Result.FAILURE);
            }
            reply = authMoreData(alloc, new byte[] {FAST_AUTH_SUCCESS}); // the fast path; OK follows
            return done(Result.SUCCESS);
        }
        // Only the stored hash is known, and no login has proven the password yet: ask for the password itself.
        state = State.AWAIT_FULL_AUTH;
        reply = authMoreData(alloc, new byte[] {PERFORM_FULL_AUTHENTICATION});
        return Result.CONTINUE;
    }

    /**
     * A server account's mysql_native_password login: the scramble is checked against the stored hash
     * SHA1(SHA1(password)) as the server checks it, and the same arithmetic yields SHA1(password), with which Sluice
     * logs in to the server as the account (decision 146). Only that hash is kept, in memory, for the session.
     */
    private Result checkServerAccount(Credential credential, byte[] response) {
        lastNativeResponse = Scramble.MYSQL_NATIVE_PASSWORD.equals(plugin) ? response : null;
        String serverUser = account.user();
        if (credential.isEmpty()) {
            boolean empty = response.length == 0 || (response.length == 1 && response[0] == 0);
            serverAccount = empty ? BackendAccount.withNativeStage1(serverUser, null, account.refusal()) : null;
            return done(empty ? Result.SUCCESS : Result.FAILURE);
        }
        if (!(credential instanceof Credential.NativeHash hash)) {
            return done(Result.FAILURE);
        }
        byte[] stage1 = Scramble.recoverNativeStage1(hash.stage2(), nonce, response);
        if (stage1 == null) {
            return done(Result.FAILURE);
        }
        serverAccount = BackendAccount.withNativeStage1(serverUser, stage1, account.refusal());
        Arrays.fill(stage1, (byte) 0); // the account holds its own copy
        return done(Result.SUCCESS);
    }

    /**
     * A MariaDB ed25519 server account (decision 172): the server stores only the public key, and logging in to it
     * later needs the password itself, so the client is asked for the password in clear (mysql_clear_password), over
     * TLS only. A client that sends it at once with that plugin is checked at once.
     */
    private Result startClearPassword(String clientPlugin, byte[] response, ByteBufAllocator alloc) {
        plugin = MYSQL_CLEAR_PASSWORD;
        boolean sentClear = MYSQL_CLEAR_PASSWORD.equals(clientPlugin);
        if (!secure || !(clientPluginAuth || sentClear)) {
            failure = ErrorCode.ER_NOT_SUPPORTED_AUTH_MODE; // ClientErrors says why: TLS, or the switch
            return done(Result.FAILURE);
        }
        if (sentClear) {
            return verifyServerPassword(withoutTrailingNul(response));
        }
        state = State.AWAIT_CLEAR_PASSWORD;
        reply = authSwitchRequest(alloc, MYSQL_CLEAR_PASSWORD, resultSequenceId);
        return Result.CONTINUE;
    }

    /**
     * Checks a server account's password, sent in clear over TLS (or RSA-encrypted, caching_sha2_password), as the
     * server would: against an ed25519 account's public key, or a caching_sha2_password account's SHA-256 crypt. On
     * success the session keeps the password (in memory, in its key) to log in to the server with (decision 172).
     */
    private Result verifyServerPassword(byte[] password) {
        byte[] key = account.ed25519Key();
        boolean good = key != null ? MessageDigest.isEqual(Ed25519.publicKey(password), key)
                : account.credential() instanceof Credential.CachingSha2Hash
                        && account.credential().verifyCleartext(password);
        if (!good) {
            forgetClearPassword();
            lastClearPassword = password; // a reading since may hold a new key: recheck
            return done(Result.FAILURE);
        }
        serverAccount = BackendAccount.withLearnedPassword(account.user(), new String(password,
                StandardCharsets.UTF_8), account.refusal());
        Arrays.fill(password, (byte) 0);
        return done(Result.SUCCESS);
    }

    private void forgetClearPassword() {
        if (lastClearPassword != null) {
            Arrays.fill(lastClearPassword, (byte) 0);
            lastClearPassword = null;
        }
    }

    private Result decryptAndVerify(byte[] encrypted) {
        if (secure || encrypted.length != rsa.encryptedLength()) {
            return done(Result.FAILURE);
        }
        byte[] secret;
        try {
            secret = rsa.decrypt(encrypted);
        } catch (GeneralSecurityException e) {
            return done(Result.FAILURE);
        }
        // The client XORed the NUL-terminated password with the nonce before encrypting it.
        for (int i = 0; i < secret.length; i++) {
            secret[i] ^= nonce[i % nonce.length];
        }
        return verifyCleartext(withoutTrailingNul(secret));
    }

    private Result verifyCleartext(byte[] password) {
        if (account.fromServer()) {
            return verifyServerPassword(password);
        }
        if (!account.credential().verifyCleartext(password)) {
            return done(Result.FAILURE);
        }
        account.cacheSha2(password);
        Arrays.fill(password, (byte) 0);
        return done(Result.SUCCESS);
    }

    private Result done(Result result) {
        state = State.DONE;
        return result;
    }

    private ByteBuf authMoreData(ByteBufAllocator alloc, byte[] data) {
        ByteBuf buf = Packets.startFrame(alloc, 1 + data.length);
        buf.writeByte(AUTH_MORE_DATA).writeBytes(data);
        return Packets.finishFrame(buf, resultSequenceId++);
    }

    private ByteBuf authSwitchRequest(ByteBufAllocator alloc, String name, int sequenceId) {
        byte[] pluginName = name.getBytes(StandardCharsets.US_ASCII);
        ByteBuf buf = Packets.startFrame(alloc, 2 + pluginName.length + nonce.length + 1);
        buf.writeByte(AUTH_SWITCH_REQUEST).writeBytes(pluginName).writeByte(0).writeBytes(nonce).writeByte(0);
        resultSequenceId = sequenceId + 1;
        return Packets.finishFrame(buf, sequenceId);
    }

    private static byte[] withoutTrailingNul(byte[] data) {
        int end = data.length;
        while (end > 0 && data[end - 1] == 0) {
            end--;
        }
        return end == data.length ? data : Arrays.copyOf(data, end);
    }
}
