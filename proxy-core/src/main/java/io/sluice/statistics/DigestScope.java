package io.sluice.statistics;

import java.util.Objects;

/**
 * Who ran a statement, and where: the user, the schema and the backend group, the other half of a digest entry's key.
 * Interned ({@link DigestStatistics#scope}), so that the command path compares scopes by identity.
 */
public final class DigestScope {
    private final String user;
    private final String schema;
    private final String group;
    private final int hash;

    DigestScope(String user, String schema, String group) {
        this.user = user == null ? "" : user;
        this.schema = schema == null ? "" : schema;
        this.group = group == null ? "" : group;
        this.hash = Objects.hash(this.user, this.schema, this.group);
    }

    /** The user as Sluice authenticated it. */
    public String user() {
        return user;
    }

    /** The schema the session used, "" for none. */
    public String schema() {
        return schema;
    }

    /** The read/write split group, or else the data source the session was assigned. */
    public String group() {
        return group;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof DigestScope that && user.equals(that.user) && schema.equals(that.schema)
                && group.equals(that.group);
    }

    @Override
    public int hashCode() {
        return hash;
    }

    @Override
    public String toString() {
        return user + "@" + schema + "/" + group;
    }
}
