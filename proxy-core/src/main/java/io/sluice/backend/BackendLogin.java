package io.sluice.backend;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Logs a new backend connection in: the login timeout, the authentication exchange ({@link BackendAuthentication}),
 * the switch to TLS, then the session trackers (transaction pooling) and the {@link SessionCheck} that records what
 * a reset must later give back. One per connection, dropped once the connection is ready.
 */
final class BackendLogin {
    private final BackendConnection connection;
    private final BackendAuthentication authentication;
    private final long timeoutMillis;
    private ScheduledFuture<?> timeout;
    /** The authentication is over; the post-login commands run. */
    private boolean authenticated;

    BackendLogin(BackendConnection connection, BackendAuthentication authentication, long timeoutMillis) {
        this.connection = connection;
        this.authentication = authentication;
        this.timeoutMillis = timeoutMillis;
    }

    /** The TCP connection is up: the greeting is due within the login timeout. */
    void start(Channel channel) {
        timeout = channel.eventLoop().schedule(() -> connection.loginFailed(new BackendException("login to "
                + connection.address() + " timed out after " + timeoutMillis + " ms")), timeoutMillis,
                TimeUnit.MILLISECONDS);
    }

    /** Whether the authentication exchange still reads packets (the post-login commands read their own). */
    boolean isAuthenticating() {
        return !authenticated;
    }

    /**
     * One whole packet of the authentication exchange (taken).
     *
     * @throws BackendException when the server refuses the login or breaks the exchange
     */
    void onPacket(ByteBuf frame) throws BackendException {
        Channel channel = connection.channel();
        BackendAuthentication.Step step;
        try {
            step = authentication.onPacket(frame, channel.alloc());
        } catch (BackendException e) {
            throw refusalRecorded(e);
        } finally {
            frame.release();
        }
        ByteBuf reply = authentication.takeReply();
        if (reply != null) {
            channel.writeAndFlush(reply, channel.voidPromise());
        }
        if (step == BackendAuthentication.Step.START_TLS) {
            startTls(channel);
        } else if (step == BackendAuthentication.Step.DONE) {
            authenticated = true;
            connection.state().mySql(authentication.serverIsMySql());
            checkSession(authentication.serverConnectionId());
        }
    }

    /**
     * A learned credential the server refuses is recorded, so that no other connection tries it again (decision 171).
     *
     * @return what the session's client is told
     */
    private BackendException refusalRecorded(BackendException e) {
        BackendAccount account = connection.key().account();
        ServerRefusal refusal = account == null ? null : account.refusal();
        if (refusal == null || !ServerRefusal.refusesCredential(e.serverError())) {
            return e;
        }
        return new BackendException("login refused", refusal.refuse(account.user(), e.serverError()));
    }

    /**
     * The server accepted the login: the session trackers go on (transaction pooling), and the session check records
     * what a reset must give back; then the connection is ready.
     */
    private void checkSession(int serverConnectionId) {
        ConnectionState state = connection.state();
        boolean mySql = state.isMySql();
        SetSessionVariables trackers = state.tracksState() ? SetSessionVariables.sessionTrackers(mySql,
                connection.key().deprecateEof()) : null;
        // A replica's connection is read-only before anyone can use it (decision 110), checked by the same query.
        SetSessionVariables readOnly = state.readOnly() ? SetSessionVariables.readOnly() : null;
        SessionCheck check = new SessionCheck(connection.key().deprecateEof(), trackers != null, mySql,
                readOnly != null, row -> {
                    if (row == null || (trackers != null && !trackers.succeeded())
                            || (readOnly != null && !readOnly.succeeded())) {
                        connection.loginFailed(new BackendException("session check failed on "
                                + connection.address()));
                    } else if (!connection.isLoggingIn()) {
                        return; // it timed out meanwhile
                    } else if (!state.loggedIn(row)) {
                        connection.loginFailed(new BackendException("the session on replica " + connection.address()
                                + " is not read-only after " + SetSessionVariables.READ_ONLY));
                    } else {
                        finish();
                        connection.loggedIn(serverConnectionId);
                    }
                });
        connection.run(commands(trackers, readOnly, check));
    }

    /** The post-login (or post-reset) commands that are due, in order, the session check last. */
    static OwnCommand[] commands(OwnCommand trackers, OwnCommand readOnly, OwnCommand check) {
        if (trackers != null && readOnly != null) {
            return new OwnCommand[] {trackers, readOnly, check};
        }
        if (trackers != null || readOnly != null) {
            return new OwnCommand[] {trackers != null ? trackers : readOnly, check};
        }
        return new OwnCommand[] {check};
    }

    /**
     * Switches to TLS after the SSLRequest went out: the handler goes first in the pipeline (the SSLRequest has
     * already passed it in plain text) and starts the handshake; the login goes on over TLS once it is done.
     */
    private void startTls(Channel channel) {
        BackendEndpoint endpoint = connection.endpoint();
        SslHandler tls = endpoint.tls().newHandler(channel.alloc(), endpoint.host(), endpoint.port());
        channel.pipeline().addFirst("tls", tls);
        tls.handshakeFuture().addListener(f -> {
            if (authenticated || !channel.isActive()) {
                return;
            }
            if (f.isSuccess()) {
                channel.writeAndFlush(authentication.afterTls(channel.alloc()), channel.voidPromise());
            } else {
                connection.loginFailed(new BackendException("TLS handshake with " + endpoint.address() + " (sslMode "
                        + endpoint.sslMode() + ") failed: " + rootMessage(f.cause()), f.cause()));
            }
        });
    }

    /** The connection is ready or gone: the timer stops. */
    void finish() {
        if (timeout != null) {
            timeout.cancel(false);
        }
    }

    private static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getMessage() == null ? root.toString() : root.getMessage();
    }
}
