package io.sluice.testing;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The samples of a Prometheus text-format scrape, looked up by metric name and labels. */
public final class PrometheusText {

    /** One sample line: {@code name{labels} value}. */
    public record Sample(String name, Map<String, String> labels, double value) {
    }

    private final List<Sample> samples;
    private final String text;

    private PrometheusText(List<Sample> samples, String text) {
        this.samples = samples;
        this.text = text;
    }

    public static PrometheusText parse(String text) {
        List<Sample> samples = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            int brace = line.indexOf('{');
            int space = line.lastIndexOf(' ');
            String name;
            Map<String, String> labels = new LinkedHashMap<>();
            if (brace >= 0 && brace < space) {
                name = line.substring(0, brace);
                String inner = line.substring(brace + 1, line.lastIndexOf('}'));
                int i = 0;
                while (i < inner.length()) {
                    int eq = inner.indexOf('=', i);
                    String key = inner.substring(i, eq).trim();
                    int start = eq + 2; // past ="
                    StringBuilder value = new StringBuilder();
                    int j = start;
                    while (inner.charAt(j) != '"') {
                        if (inner.charAt(j) == '\\') {
                            j++;
                        }
                        value.append(inner.charAt(j++));
                    }
                    labels.put(key, value.toString());
                    i = j + 1;
                    if (i < inner.length() && inner.charAt(i) == ',') {
                        i++;
                    }
                }
            } else {
                name = line.substring(0, line.indexOf(' '));
            }
            String value = line.substring(space + 1);
            samples.add(new Sample(name, labels, value.equals("+Inf") ? Double.POSITIVE_INFINITY
                    : value.equals("NaN") ? Double.NaN : Double.parseDouble(value)));
        }
        return new PrometheusText(samples, text);
    }

    /**
     * The value of the one sample with this name and these labels (pairs: key, value; other labels may exist),
     * 0 when there is none: a counter not yet created reads as zero.
     */
    public double value(String name, String... labelPairs) {
        List<Sample> found = find(name, labelPairs);
        if (found.size() > 1) {
            throw new AssertionError(found.size() + " samples match " + name + " " + List.of(labelPairs) + ": "
                    + found);
        }
        return found.isEmpty() ? 0 : found.get(0).value();
    }

    /** Whether a sample of this name (and these labels) exists. */
    public boolean has(String name, String... labelPairs) {
        return !find(name, labelPairs).isEmpty();
    }

    public List<Sample> find(String name, String... labelPairs) {
        List<Sample> found = new ArrayList<>();
        outer:
        for (Sample sample : samples) {
            if (!sample.name().equals(name)) {
                continue;
            }
            for (int i = 0; i + 1 < labelPairs.length; i += 2) {
                if (!labelPairs[i + 1].equals(sample.labels().get(labelPairs[i]))) {
                    continue outer;
                }
            }
            found.add(sample);
        }
        return found;
    }

    @Override
    public String toString() {
        return text;
    }
}
