package io.sluice.balancer;

/** Whether a backend takes new sessions, in the words HAProxy and TiProxy users know. */
public enum BackendStatus {
    /** Healthy and in rotation. */
    UP,
    /** Failed its health checks, or a session could not connect to it: out of rotation until it rises again. */
    DOWN,
    /** Healthy, but taken out of rotation by an operator: its open sessions finish, no new session comes. */
    DRAINING
}
