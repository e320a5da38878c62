package io.sluice.config;

import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * One of a read/write splitting rule's {@code loadBalancers}: how reads are spread over a group's replicas, in
 * ShardingSphere 5.4's words.
 *
 * @param name the name groups refer to it by ({@code loadBalancerName})
 * @param type {@code ROUND_ROBIN}, {@code RANDOM} or {@code WEIGHT}
 * @param props the algorithm's properties: for {@code WEIGHT}, each read data source's weight
 */
public record ReadLoadBalancer(String name, Type type, Map<String, String> props) {

    /** ShardingSphere 5.4's built-in read load balancers. */
    public enum Type {
        ROUND_ROBIN, RANDOM, WEIGHT;

        /** The type named in any case, or {@code null}. */
        static Type of(String name) {
            try {
                return valueOf(name.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                return null;
            }
        }
    }

    /** What a group without {@code loadBalancerName} gets, as in ShardingSphere. */
    public static final ReadLoadBalancer DEFAULT = new ReadLoadBalancer("", Type.ROUND_ROBIN, Map.of());

    public ReadLoadBalancer {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        props = Map.copyOf(props);
    }

    /**
     * A read data source's weight under {@code WEIGHT}, 1 when the props do not name it.
     *
     * @throws IllegalArgumentException when its weight is not a number of 0 or more
     */
    public double weight(String dataSource) {
        String value = props.get(dataSource);
        if (value == null) {
            return 1;
        }
        try {
            double weight = Double.parseDouble(value.trim());
            if (weight >= 0 && !Double.isNaN(weight) && !Double.isInfinite(weight)) {
                return weight;
            }
        } catch (NumberFormatException e) {
            // refused below
        }
        throw new IllegalArgumentException("props." + dataSource + ": \"" + value
                + "\" (expected: a weight of 0 or more)");
    }
}
