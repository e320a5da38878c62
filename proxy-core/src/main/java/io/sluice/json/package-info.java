/**
 * The one JSON codec of Sluice: {@link io.sluice.json.Json} reads request bodies and manifests and writes the admin
 * API's responses, the capture's status and manifest, and the replay report. It is the package's whole public face;
 * its parser is a class of its own only to keep each file short.
 *
 * <p>A bottom package: it depends on nothing of Sluice (only on {@code java.base}), so that any package may use it
 * without dragging another in. Sluice has no JSON library dependency on purpose: the shapes it reads and writes are
 * small, and a hand-written codec of a few hundred lines is cheaper to audit than a library.
 */
package io.sluice.json;
