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
 * @param demo whether {@code --demo} was asked for: an embedded backend and a configuration of its own, no conf dir
 */
record CommandLine(Integer port, Path confDir, boolean help, boolean version, boolean demo) {

    static final Path DEFAULT_CONF_DIR = Path.of("conf");

    static final String USAGE = """
            Usage: sluice [port] [conf-dir]
                   sluice --demo [port]
              port      the port to listen on, overriding server.port in config.yaml (0 picks a free one)
              conf-dir  the directory holding config.yaml (default: conf)
              --demo    try Sluice with an embedded MariaDB and sample data, on 127.0.0.1 (never for production)
              --help    print this and exit
              --version print the version and exit""";

    /** A command line that runs the proxy ({@code help} false) or prints the usage. */
    CommandLine(Integer port, Path confDir, boolean help) {
        this(port, confDir, help, false, false);
    }

    /** A command line that runs the proxy, prints the usage or prints the version. */
    CommandLine(Integer port, Path confDir, boolean help, boolean version) {
        this(port, confDir, help, version, false);
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
        if (args.length > 0 && args[0].equals("--demo")) {
            return demo(args);
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

    /**
     * {@code --demo [port]}. A conf dir is refused: the demo never reads config.yaml, so that nothing of a real
     * configuration (an open address, real accounts) can end up in front of the demo's database and its printed
     * password.
     */
    private static CommandLine demo(String... args) {
        if (args.length > 2) {
            throw new IllegalArgumentException("--demo takes a port only, not a conf dir: the demo has a configuration"
                    + " of its own and listens on 127.0.0.1 (expected: --demo [port]; for a config.yaml, leave out"
                    + " --demo)");
        }
        Integer port = null;
        if (args.length == 2) {
            if (args[1].startsWith("-")) {
                throw new IllegalArgumentException("unknown option after --demo: " + args[1]
                        + " (expected: --demo [port])");
            }
            port = port(args[1]);
        }
        return new CommandLine(port, DEFAULT_CONF_DIR, false, false, true);
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
