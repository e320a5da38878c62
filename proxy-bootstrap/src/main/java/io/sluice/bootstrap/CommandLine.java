package io.sluice.bootstrap;

import java.nio.file.Path;

/**
 * The arguments of {@code bin/start.sh} and {@link SluiceMain}: {@code [port] [conf-dir]}, in ShardingSphere-Proxy's
 * order, so scripts written for it keep working.
 *
 * @param port the port that overrides {@code server.port}, or {@code null} to keep the file's
 * @param confDir the directory holding config.yaml
 * @param help whether {@code --help} was asked for
 * @param version whether {@code --version} was asked for
 */
record CommandLine(Integer port, Path confDir, boolean help, boolean version) {

    static final Path DEFAULT_CONF_DIR = Path.of("conf");

    static final String USAGE = """
            Usage: sluice [port] [conf-dir]
              port      the port to listen on, overriding server.port in config.yaml (0 picks a free one)
              conf-dir  the directory holding config.yaml (default: conf)
              --help    print this and exit
              --version print the version and exit""";

    /** A command line that runs the proxy ({@code help} false) or prints the usage. */
    CommandLine(Integer port, Path confDir, boolean help) {
        this(port, confDir, help, false);
    }

    /**
     * Parses the arguments.
     *
     * @throws IllegalArgumentException with a message for the user when the arguments are not of that form
     */
    static CommandLine parse(String... args) {
        for (String arg : args) {
            if (arg.equals("--help") || arg.equals("-h")) {
                return new CommandLine(null, DEFAULT_CONF_DIR, true);
            }
        }
        for (String arg : args) {
            if (arg.equals("--version")) {
                return new CommandLine(null, DEFAULT_CONF_DIR, false, true);
            }
        }
        if (args.length > 2) {
            throw new IllegalArgumentException("too many arguments: " + String.join(" ", args)
                    + " (expected: [port] [conf-dir])");
        }
        for (String arg : args) {
            if (arg.startsWith("-")) {
                throw new IllegalArgumentException("unknown option: " + arg
                        + " (expected: [port] [conf-dir], --help or --version)");
            }
            if (arg.isBlank()) {
                throw new IllegalArgumentException("empty argument (expected: [port] [conf-dir])");
            }
        }
        Integer port = args.length >= 1 ? port(args[0]) : null;
        Path confDir = args.length == 2 ? Path.of(args[1]) : DEFAULT_CONF_DIR;
        return new CommandLine(port, confDir, false);
    }

    private static int port(String arg) {
        int port;
        try {
            port = Integer.parseInt(arg);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("port: " + arg + " (expected: a number in 0..65535)");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port: " + arg + " (expected: a number in 0..65535)");
        }
        return port;
    }

    /** The config.yaml this command line names. */
    Path configFile() {
        return confDir.resolve("config.yaml");
    }
}
