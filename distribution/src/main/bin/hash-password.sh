#!/usr/bin/env bash
#
# Prints the passwordHash values for authority.users in config.yaml, so no plain-text password needs to be on disk.
#
#   bin/hash-password.sh               asks for the password (no echo)
#   echo -n 'secret' | bin/hash-password.sh
#
# Both lines are valid; keep one. caching_sha2_password's form makes a client's first login take the full path
# (TLS, or the RSA key on plain connections) and later ones the fast path; the mysql_native_password form works
# with every client but is the weaker hash (SHA-1).

set -u
SLUICE_HOME=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd) || exit 1
JAVA=${JAVA_HOME:+$JAVA_HOME/bin/}java
exec "$JAVA" -cp "$SLUICE_HOME/lib/*" io.sluice.auth.PasswordHash
