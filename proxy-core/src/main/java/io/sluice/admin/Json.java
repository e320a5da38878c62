package io.sluice.admin;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * A small JSON writer for the admin API's few shapes: objects, arrays, strings, numbers, booleans and null, with the
 * commas placed for the caller. Not a general library on purpose: the API needs nothing more, and no JSON
 * dependency comes with it.
 */
final class Json {
    private final StringBuilder out = new StringBuilder(256);
    /** Per open object or array: whether the next value needs a comma before it. */
    private final Deque<Boolean> needsComma = new ArrayDeque<>();
    private boolean afterName;

    Json beginObject() {
        separate();
        out.append('{');
        needsComma.push(false);
        return this;
    }

    Json endObject() {
        needsComma.pop();
        out.append('}');
        return this;
    }

    Json beginArray() {
        separate();
        out.append('[');
        needsComma.push(false);
        return this;
    }

    Json endArray() {
        needsComma.pop();
        out.append(']');
        return this;
    }

    /** The name of the next member of the current object. */
    Json name(String name) {
        separate();
        string(name);
        out.append(':');
        afterName = true;
        return this;
    }

    Json value(String value) {
        separate();
        if (value == null) {
            out.append("null");
        } else {
            string(value);
        }
        return this;
    }

    Json value(long value) {
        separate();
        out.append(value);
        return this;
    }

    Json value(double value) {
        separate();
        if (Double.isNaN(value) || Double.isInfinite(value)) {
            out.append("null"); // JSON has no NaN or infinity
        } else {
            out.append(value);
        }
        return this;
    }

    Json value(boolean value) {
        separate();
        out.append(value);
        return this;
    }

    Json member(String name, String value) {
        return name(name).value(value);
    }

    Json member(String name, long value) {
        return name(name).value(value);
    }

    Json member(String name, boolean value) {
        return name(name).value(value);
    }

    private void separate() {
        if (afterName) {
            afterName = false;
            return;
        }
        if (!needsComma.isEmpty()) {
            if (needsComma.pop()) {
                out.append(',');
            }
            needsComma.push(true);
        }
    }

    private void string(String s) {
        io.sluice.capture.Json.quote(out, s); // one escaper for every JSON Sluice writes
    }

    @Override
    public String toString() {
        return out.toString();
    }
}
