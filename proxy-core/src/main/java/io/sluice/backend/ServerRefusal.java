package io.sluice.backend;

import io.sluice.protocol.ErrorCode;
import io.sluice.protocol.Packets.BackendError;

/**
 * The server refused the credential Sluice learned from clients' logins to one server account
 * ({@code users: FROM_BACKEND}): its password changed on the server, or the account was dropped, since Sluice read
 * the accounts (decision 171). Shared by every session whose login was checked against the same reading of the
 * account, since they all learned the same stage-one hash: once refused, none of them tries it on the server again,
 * so a stale hash never repeats failed logins (which the server counts, and may block the account for, with
 * {@code max_password_errors}).
 *
 * <p>Holds no credential. Written on any event loop, read on any: the one field is volatile and set once.
 */
public final class ServerRefusal {
    private final Runnable onRefused;
    private volatile BackendError refused;

    /** @param onRefused told once, at the first refusal: the accounts are worth reading again */
    public ServerRefusal(Runnable onRefused) {
        this.onRefused = onRefused;
    }

    /** The server's refusal, worded for the session's client, or {@code null} while the credential is good. */
    public BackendError refused() {
        return refused;
    }

    /**
     * The server refused a login with the credential ({@code error}, access denied): every later connection of it
     * fails at once with what this returns, without asking the server.
     */
    BackendError refuse(String user, BackendError error) {
        BackendError worded = refused;
        if (worded != null) {
            return worded;
        }
        worded = new BackendError(error.code(), error.sqlState(), "Access denied for user '" + user
                + "': the server refused the password this session logged in with (changed or dropped on the server"
                + " since); log in again");
        refused = worded;
        onRefused.run();
        return worded;
    }

    /** Whether {@code error} refuses the credential itself, as opposed to the server being unavailable. */
    static boolean refusesCredential(BackendError error) {
        return error != null && error.code() == ErrorCode.ER_ACCESS_DENIED_ERROR.code();
    }
}
