package io.sluice.backend.pool;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Transaction pooling: the schemas a login has already found on one server with the pool's credentials. A later login
 * to one of them is answered without taking a backend connection (a churning client then costs the pool nothing); a
 * 1049 on any acquire forgets the schema, and new credentials forget them all. Only schemas that exist get in, so the
 * set is as small as the server's list of databases, and capped besides. Thread-safe.
 */
public final class KnownSchemas {
    private static final int CAP = 4096;
    private final Set<String> schemas = ConcurrentHashMap.newKeySet();

    /** Whether a login has already found {@code schema} on this server with the current credentials. */
    public boolean contains(String schema) {
        return schema != null && schemas.contains(schema);
    }

    /** A login found {@code schema}: the next login to it needs no backend connection to check it. */
    public void seen(String schema) {
        if (schema != null && schemas.size() < CAP) {
            schemas.add(schema);
        }
    }

    /** The server answered 1049 for {@code schema}: logins to it are checked by the server again. */
    public void missing(String schema) {
        if (schema != null) {
            schemas.remove(schema);
        }
    }

    /** The credentials changed: other credentials may not see the same schemas. */
    void forgetAll() {
        schemas.clear();
    }
}
