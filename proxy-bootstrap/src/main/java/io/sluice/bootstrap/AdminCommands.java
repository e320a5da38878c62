package io.sluice.bootstrap;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code sluice-ctl backends}, {@code sessions}, {@code version}, {@code reload}, {@code drain NAME} and
 * {@code undrain NAME}: one call of the admin API each, on every instance {@code --admin} names.
 */
final class AdminCommands {
    private AdminCommands() {
    }

    @Command(name = "backends", mixinStandardHelpOptions = true, versionProvider = SluiceCtl.Version.class,
            separator = " ", description = "the backends: status, weight, sessions, pool")
    static final class Backends implements Callable<Integer> {
        @Mixin
        private AdminApi admin;

        @Override
        public Integer call() {
            return admin.callEach("GET", "/api/backends", null);
        }
    }

    @Command(name = "sessions", mixinStandardHelpOptions = true, versionProvider = SluiceCtl.Version.class,
            separator = " ", description = "sessions by backend (every session with --verbose)")
    static final class Sessions implements Callable<Integer> {
        @Mixin
        private AdminApi admin;

        @Option(names = "--verbose", description = "every session, not only the counts by backend")
        private boolean verbose;

        @Override
        public Integer call() {
            return admin.callEach("GET", verbose ? "/api/sessions?verbose" : "/api/sessions", null);
        }
    }

    @Command(name = "version", mixinStandardHelpOptions = true, versionProvider = SluiceCtl.Version.class,
            separator = " ", description = "the running version")
    static final class Version implements Callable<Integer> {
        @Mixin
        private AdminApi admin;

        @Override
        public Integer call() {
            return admin.callEach("GET", "/api/version", null);
        }
    }

    @Command(name = "reload", mixinStandardHelpOptions = true, versionProvider = SluiceCtl.Version.class,
            separator = " ", description = "reads config.yaml again and applies it")
    static final class Reload implements Callable<Integer> {
        @Mixin
        private AdminApi admin;

        @Override
        public Integer call() {
            return admin.callEach("POST", "/api/config/reload", "");
        }
    }

    @Command(name = "drain", mixinStandardHelpOptions = true, versionProvider = SluiceCtl.Version.class,
            separator = " ", description = "takes backend NAME out of rotation; its sessions finish")
    static final class Drain implements Callable<Integer> {
        @Mixin
        private AdminApi admin;

        @Parameters(paramLabel = "NAME", description = "the backend, as config.yaml names it")
        private String backend;

        @Override
        public Integer call() {
            return admin.callEach("POST", backendPath(backend, "drain"), "");
        }
    }

    @Command(name = "undrain", mixinStandardHelpOptions = true, versionProvider = SluiceCtl.Version.class,
            separator = " ", description = "puts backend NAME back in rotation")
    static final class Undrain implements Callable<Integer> {
        @Mixin
        private AdminApi admin;

        @Parameters(paramLabel = "NAME", description = "the backend, as config.yaml names it")
        private String backend;

        @Override
        public Integer call() {
            return admin.callEach("POST", backendPath(backend, "undrain"), "");
        }
    }

    private static String backendPath(String backend, String action) {
        return "/api/backends/" + URLEncoder.encode(backend, StandardCharsets.UTF_8) + "/" + action;
    }
}
