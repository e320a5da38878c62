package io.sluice.config;

/**
 * A configuration Sluice refuses to start with. The message names the key and, when the configuration came from a
 * file, the line: {@code config.yaml line 12: dataSources.ds_0.maxPoolSize: "ten" (expected: an integer)}.
 */
public final class ConfigException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ConfigException(String message) {
        super(message);
    }

    public ConfigException(String message, Throwable cause) {
        super(message, cause);
    }
}
