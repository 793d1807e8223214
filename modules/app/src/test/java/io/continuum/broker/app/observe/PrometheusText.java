package io.continuum.broker.app.observe;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads samples out of Prometheus text exposition for assertions (the format's validity itself is
 * checked by promtool in {@link BrokerMetricsTest}).
 */
final class PrometheusText {
    private static final Pattern SAMPLE = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)})? (\\S+)");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\",?");

    record Sample(String name, Map<String, String> labels, double value) {
    }

    private PrometheusText() {
    }

    static List<Sample> samples(String text) {
        List<Sample> out = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            Matcher m = SAMPLE.matcher(line);
            if (!m.matches()) {
                throw new AssertionError("not a sample line: " + line);
            }
            Map<String, String> labels = new LinkedHashMap<>();
            if (m.group(3) != null) {
                Matcher l = LABEL.matcher(m.group(3));
                while (l.find()) {
                    labels.put(l.group(1), l.group(2));
                }
            }
            out.add(new Sample(m.group(1), labels, Double.parseDouble(m.group(4))));
        }
        return out;
    }

    static double value(String text, String name, String labelKey, String labelValue) {
        return samples(text).stream()
                .filter(s -> s.name().equals(name))
                .filter(s -> labelKey == null || labelValue.equals(s.labels().get(labelKey)))
                .mapToDouble(Sample::value)
                .findFirst()
                .orElseThrow(() -> new AssertionError("no sample " + name + " " + labelKey + "=" + labelValue
                                                              + " in\n" + text));
    }
}
