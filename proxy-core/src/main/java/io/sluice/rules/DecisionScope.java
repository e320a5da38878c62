package io.sluice.rules;

import java.net.InetAddress;
import java.util.Objects;

/**
 * What besides a statement's shape a rule's decision depends on: the user, the schema, and the client's address
 * when some rule names networks. One object per value on each event loop, so that the table of decisions compares
 * scopes by identity.
 */
final class DecisionScope {
    private final String user;
    private final String schema;
    private final InetAddress client;

    DecisionScope(String user, String schema, InetAddress client) {
        this.user = user;
        this.schema = schema;
        this.client = client;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof DecisionScope that && Objects.equals(user, that.user)
                && Objects.equals(schema, that.schema) && Objects.equals(client, that.client);
    }

    @Override
    public int hashCode() {
        return Objects.hash(user, schema, client);
    }
}
