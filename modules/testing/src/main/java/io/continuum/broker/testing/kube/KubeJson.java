package io.continuum.broker.testing.kube;

import java.io.IOException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;

/**
 * The few JSON shapes the fake API server writes or reads. Resources stay raw text, served as given
 * (tests serve malformed things on purpose), so nothing here builds a tree.
 */
final class KubeJson {
    private static final Pattern METADATA_OPEN = Pattern.compile("\"metadata\"\\s*:\\s*\\{");
    private static final JsonFactory JSON = new JsonFactory();

    private KubeJson() {
    }

    /** A Kubernetes {@code Status} body for this code. */
    static String status(int code) {
        String reason = code == 410 ? "Expired" : code == 404 ? "NotFound" : "InternalError";
        return "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\""
                + (code == 410 ? "too old resource version or expired continue token" : "injected failure")
                + "\",\"reason\":\"" + reason + "\",\"code\":" + code + "}";
    }

    /** The text with {@code "resourceVersion"} inserted into its first {@code "metadata"} object. */
    static String withResourceVersion(String json, long rv) {
        Matcher m = METADATA_OPEN.matcher(json);
        if (!m.find()) {
            return json;
        }
        int at = m.end();
        int next = at;
        while (next < json.length() && Character.isWhitespace(json.charAt(next))) {
            next++;
        }
        boolean empty = next < json.length() && json.charAt(next) == '}';
        return json.substring(0, at) + "\"resourceVersion\":\"" + rv + "\"" + (empty ? "" : ",") + json.substring(at);
    }

    /** {@code metadata.name} of a well-formed resource, else null. */
    static String nameOf(String json) {
        try (JsonParser p = JSON.createParser(json)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken t = p.nextToken();
                if ("metadata".equals(field) && t == JsonToken.START_OBJECT) {
                    while (p.nextToken() == JsonToken.FIELD_NAME) {
                        String f = p.currentName();
                        JsonToken v = p.nextToken();
                        if ("name".equals(f) && v == JsonToken.VALUE_STRING) {
                            return p.getText();
                        }
                        p.skipChildren();
                    }
                    return null;
                }
                p.skipChildren();
            }
            return null;
        } catch (IOException e) {
            return null;
        }
    }
}
