package io.sluice.api;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * Which Sluice this is: the version the build wrote into {@code build.properties}. One place for every surface that
 * shows it ({@code --version}, the startup line, {@code /api/version}, {@code /health}, {@code sluice_build_info}),
 * so they can never disagree.
 */
public final class BuildInfo {

    /** What is shown when the resource is missing (a class path assembled by hand). */
    public static final String UNKNOWN = "unknown";

    private static final String VERSION = read();

    private BuildInfo() {
    }

    /** This build's version, such as {@code 0.1.0}; {@link #UNKNOWN} when the build left no record of it. */
    public static String version() {
        return VERSION;
    }

    /** The Java runtime's version, as {@code /api/version} and {@code sluice_build_info} report it. */
    public static String javaVersion() {
        return Runtime.version().toString();
    }

    private static String read() {
        try (InputStream in = BuildInfo.class.getResourceAsStream("build.properties")) {
            if (in == null) {
                return UNKNOWN;
            }
            Properties properties = new Properties();
            properties.load(in);
            String version = properties.getProperty("version", UNKNOWN);
            // An unfiltered copy (an IDE that copies resources without Maven) still says ${project.version}.
            return version.isBlank() || version.startsWith("${") ? UNKNOWN : version;
        } catch (IOException e) {
            return UNKNOWN; // a missing version must never stop the proxy
        }
    }
}
