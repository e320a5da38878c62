package io.sluice.admin;

import io.sluice.config.ProxyConfig;
import io.sluice.json.Json;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The running configuration as JSON for {@code GET /api/config}, with every secret masked.
 *
 * <p>Built from the configuration records themselves, component by component, so that a key added to a record shows
 * up here without anyone remembering to: what is masked is decided by the component's name ({@link #SECRETS}), and a
 * new secret must be named like one of them. A masked secret reads {@value #MASK}; an empty one reads {@code ""},
 * because an empty password is exactly what an operator checking the configuration wants to see.
 */
final class ConfigView {

    /** Record components that hold secrets, whatever record they are in. */
    static final Set<String> SECRETS = Set.of("password", "passwordHash", "token", "readToken");
    static final String MASK = "****";

    private ConfigView() {
    }

    /** {@code config} as a JSON object, secrets masked. */
    static String json(ProxyConfig config) {
        return Json.writer().value(view(config)).toString();
    }

    /** A record as a map of its components; maps and lists element by element; anything else as it is. */
    private static Object view(Object value) {
        if (value instanceof Record record) {
            Map<String, Object> members = new LinkedHashMap<>();
            for (RecordComponent component : record.getClass().getRecordComponents()) {
                Object member = read(component, record);
                members.put(component.getName(), SECRETS.contains(component.getName()) ? mask(member) : view(member));
            }
            return members;
        }
        if (value instanceof Map<?, ?> map) {
            Map<String, Object> members = new LinkedHashMap<>();
            map.forEach((key, member) -> members.put(String.valueOf(key), view(member)));
            return members;
        }
        if (value instanceof List<?> list) {
            List<Object> items = new ArrayList<>();
            list.forEach(item -> items.add(view(item)));
            return items;
        }
        if (value == null || value instanceof Number || value instanceof Boolean) {
            return value;
        }
        // Strings, enums, and paths, which must not reach Json as what they also are: an Iterable of themselves.
        return value.toString();
    }

    private static Object mask(Object secret) {
        if (secret == null) {
            return null;
        }
        return secret.toString().isEmpty() ? "" : MASK;
    }

    private static Object read(RecordComponent component, Record record) {
        try {
            return component.getAccessor().invoke(record);
        } catch (IllegalAccessException | InvocationTargetException e) {
            // Every configuration record is public with public accessors; failing here is a bug, not a state.
            throw new IllegalStateException("cannot read " + record.getClass().getSimpleName() + "."
                    + component.getName(), e);
        }
    }
}
