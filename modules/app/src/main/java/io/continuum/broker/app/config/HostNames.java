package io.continuum.broker.app.config;

import java.util.regex.Pattern;

/**
 * Host-name and Kubernetes-name syntax checks.
 */
final class HostNames {
    private static final Pattern LABEL = Pattern.compile("[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?");
    private static final Pattern DNS_1123_LABEL = Pattern.compile("[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?");

    private HostNames() {
    }

    /**
     * A DNS host name: labels of letters, digits and hyphens, at most 253 characters, and (R-SEC-9a)
     * a last label that is not all digits, so {@code 0x7f.1} or {@code 127.1} never pass as names.
     *
     * @param host candidate
     * @return whether valid
     */
    static boolean isDnsName(String host) {
        if (host.isEmpty() || host.length() > 253 || host.endsWith(".")) {
            return false;
        }
        String[] labels = host.split("\\.", -1);
        for (String l : labels) {
            if (!LABEL.matcher(l).matches()) {
                return false;
            }
        }
        return !labels[labels.length - 1].chars().allMatch(Character::isDigit);
    }

    /**
     * A Kubernetes namespace name (RFC 1123 label).
     *
     * @param name candidate
     * @return whether valid
     */
    static boolean isNamespaceName(String name) {
        return DNS_1123_LABEL.matcher(name).matches();
    }
}
