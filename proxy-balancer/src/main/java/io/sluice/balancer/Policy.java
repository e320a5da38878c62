package io.sluice.balancer;

/** The load-balancing policies, as named in config.yaml's {@code loadBalancer.type}. */
public enum Policy {
    /** Fewest open sessions per unit of weight, as HAProxy's {@code balance leastconn}; the default. */
    LEAST_CONNECTIONS,
    /** Each backend in turn. */
    ROUND_ROBIN,
    /** Each backend in turn, as often as its weight says, interleaved (nginx's smooth weighted round-robin). */
    WEIGHTED_ROUND_ROBIN,
    /** Two backends at random; the less loaded of the two. */
    POWER_OF_TWO_CHOICES,
    /** The first backend in configuration order that is up, as MySQL Router's {@code first-available}. */
    FIRST_AVAILABLE;

    /** A new, independent instance of this policy. */
    public BalancePolicy create() {
        switch (this) {
            case LEAST_CONNECTIONS:
                return new LeastConnections();
            case ROUND_ROBIN:
                return new RoundRobin();
            case WEIGHTED_ROUND_ROBIN:
                return new WeightedRoundRobin();
            case POWER_OF_TWO_CHOICES:
                return new PowerOfTwoChoices();
            case FIRST_AVAILABLE:
                return new FirstAvailable();
            default:
                throw new AssertionError(this);
        }
    }
}
