package io.continuum.broker.app.config;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Recognises the variables the kubelet injects for every Service in a Pod's namespace (service
 * links, on unless a Pod sets {@code enableServiceLinks: false}). A Service named
 * {@code continuum-event-broker-metrics} with port 9464 named {@code metrics} yields
 * <pre>
 * CONTINUUM_EVENT_BROKER_METRICS_SERVICE_HOST=10.0.0.11
 * CONTINUUM_EVENT_BROKER_METRICS_SERVICE_PORT=9464
 * CONTINUUM_EVENT_BROKER_METRICS_SERVICE_PORT_METRICS=9464
 * CONTINUUM_EVENT_BROKER_METRICS_PORT=tcp://10.0.0.11:9464
 * CONTINUUM_EVENT_BROKER_METRICS_PORT_9464_TCP=tcp://10.0.0.11:9464
 * CONTINUUM_EVENT_BROKER_METRICS_PORT_9464_TCP_PROTO=tcp
 * CONTINUUM_EVENT_BROKER_METRICS_PORT_9464_TCP_PORT=9464
 * CONTINUUM_EVENT_BROKER_METRICS_PORT_9464_TCP_ADDR=10.0.0.11
 * </pre>
 * (the Service name upper-cased, {@code -} as {@code _}; the kubelet's {@code envvars.FromServices}).
 * These share the overlay's prefix, so the overlay ignores them, but only when both the name and
 * the value have the kubelet's shape: a mistyped field such as {@code ..._METRICS_PORT=9464} (a
 * bare port where the kubelet writes {@code tcp://addr:port}) is still an unknown field.
 */
final class ServiceLinks {
    private static final String SERVICE = "[A-Z][A-Z0-9_]*";
    private static final Pattern SERVICE_HOST = Pattern.compile(SERVICE + "_SERVICE_HOST");
    private static final Pattern SERVICE_PORT = Pattern.compile(SERVICE + "_SERVICE_PORT(_[A-Z0-9_]{1,15})?");
    private static final Pattern LINK = Pattern.compile(SERVICE + "_PORT");
    private static final Pattern PORT_LINK = Pattern.compile(
            SERVICE + "_PORT_([0-9]{1,5})_(TCP|UDP|SCTP)(_PROTO|_PORT|_ADDR)?");
    private static final Pattern URL = Pattern.compile("(tcp|udp|sctp)://(.+):([0-9]{1,5})");

    private ServiceLinks() {
    }

    /**
     * Whether a variable is one the kubelet injects for a Service.
     *
     * @param name  variable name
     * @param value its value
     * @return true for a service-link variable
     */
    static boolean isServiceLink(String name, String value) {
        // Shapes overlap (..._PORT_9464_TCP_PORT also ends like ..._PORT): any shape whose value fits will do.
        if (SERVICE_HOST.matcher(name).matches() && isAddress(value)) {
            return true;
        }
        if (SERVICE_PORT.matcher(name).matches() && isPort(value)) {
            return true;
        }
        if (LINK.matcher(name).matches() && isUrl(value, null, null)) {
            return true;
        }
        Matcher m = PORT_LINK.matcher(name);
        if (!m.matches() || !isPort(m.group(1))) {
            return false;
        }
        String proto = m.group(2).toLowerCase(Locale.ROOT);
        String suffix = m.group(3);
        if (suffix == null) {
            return isUrl(value, proto, m.group(1));
        }
        return switch (suffix) {
            case "_PROTO" -> value.equals(proto);
            case "_PORT" -> value.equals(m.group(1));
            default -> isAddress(value);
        };
    }

    private static boolean isUrl(String value, String proto, String port) {
        Matcher m = URL.matcher(value);
        if (!m.matches() || !isPort(m.group(3))) {
            return false;
        }
        String host = m.group(2);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
            if (IpLiterals.ipv6Bytes(host).isEmpty()) {
                return false;
            }
        } else if (IpLiterals.ipv4(host).isEmpty()) {
            return false;
        }
        return (proto == null || proto.equals(m.group(1))) && (port == null || port.equals(m.group(3)));
    }

    private static boolean isAddress(String value) {
        return IpLiterals.ipv4(value).isPresent() || IpLiterals.ipv6Bytes(value).isPresent();
    }

    private static boolean isPort(String value) {
        if (!value.matches("[0-9]{1,5}")) {
            return false;
        }
        int p = Integer.parseInt(value);
        return p >= 1 && p <= 65_535;
    }
}
