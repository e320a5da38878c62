package io.sluice.config;

import java.nio.file.Path;
import java.util.Objects;

/**
 * Where traffic captures may write and read keys ({@code capture} in config.yaml): a capture's {@code output} must lie
 * under {@code directory} and its {@code keyFile} under {@code keyDirectory}, so that whoever holds the admin token can
 * neither write capture files anywhere the proxy may write nor read (or learn anything of) a file elsewhere as a key.
 * See decision 131.
 *
 * @param directory where capture directories are made; a relative {@code output} is taken from here
 * @param keyDirectory where key files are read from; a relative {@code keyFile} is taken from here
 */
public record CaptureConfig(Path directory, Path keyDirectory) {

    /** The directory, in the install directory (the conf dir's parent), that config.yaml's captures go to. */
    public static final String DEFAULT_DIRECTORY = "captures";

    public CaptureConfig {
        directory = Objects.requireNonNull(directory, "directory").toAbsolutePath().normalize();
        keyDirectory = Objects.requireNonNull(keyDirectory, "keyDirectory").toAbsolutePath().normalize();
    }

    /**
     * What config.yaml in {@code confDir} gets without a {@code capture} section: {@code captures/} in the install
     * directory, key files from the conf dir. Without a conf dir (a configuration built in code), the working
     * directory stands for both the install and the conf dir.
     */
    public static CaptureConfig defaults(Path confDir) {
        Path conf = (confDir == null ? Path.of("") : confDir).toAbsolutePath().normalize();
        Path install = confDir == null || conf.getParent() == null ? conf : conf.getParent();
        return new CaptureConfig(install.resolve(DEFAULT_DIRECTORY), conf);
    }
}
