package io.continuum.broker.metadata.internal;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;

import io.continuum.broker.metadata.PublisherKey;
import io.continuum.broker.metadata.SkipReason;

/**
 * The broker's own streaming reader of {@code DynamoWorkerMetadata} list pages and watch events
 * (R-META 3, 4, 7, 8; R-SEC 12). Only resource identity, {@code resourceVersion} and
 * {@code spec.data.event_channels} are extracted; everything else ({@code endpoints},
 * {@code model_cards}, unknown members) is passed over with {@code skipChildren}, so string values are
 * never decoded. Each channel value is captured as raw JSON text of at most 64 KiB and decoded from that
 * bounded copy; a longer one is skipped unbuffered past the limit. Caps are enforced while reading and
 * every skip is recorded in the resource's {@link ParsedResource#skips()}, never failing the page.
 * <p>
 * What still fails a page or a watch (an {@link IOException}): invalid JSON syntax outside skipped
 * strings, a body that is not UTF-8, a top-level shape that is not a list or an event, and Jackson's stream constraints set
 * here (field names, materialized strings and numbers over 3 MiB, nesting deeper than 10,000), which
 * a resource admitted by the API server (request bodies at most 3 MiB) cannot reach except by depth.
 * <p>
 * Why one class of ~600 lines: list pages and watch events share one descent (resource, metadata, spec, data,
 * channel) over one Jackson parser and one tap of the raw bytes, and the caps and skip records are applied at
 * each level of it; the whole path from a byte to a skip record reads top to bottom here. Each method is one
 * level of the document.
 */
public final class MetadataParser {
    private static final int MAX_TOKEN_CHARS = 3 * 1024 * 1024;
    private static final int MAX_DEPTH = 10_000;

    private final Limits limits;

    /**
     * Creates a parser.
     *
     * @param limits caps to enforce
     */
    public MetadataParser(Limits limits) {
        this.limits = Objects.requireNonNull(limits, "limits");
    }

    /**
     * A factory per list page or watch pass: attacker-chosen field names then only grow a symbol table
     * that dies with the pass. Canonicalization itself must stay on: without it Jackson reads bytes
     * through a character reader and byte offsets (the channel value size) are unknown.
     */
    private static JsonFactory newFactory() {
        return JsonFactory.builder()
                .disable(JsonFactory.Feature.INTERN_FIELD_NAMES)
                .streamReadConstraints(StreamReadConstraints.builder()
                        .maxNameLength(MAX_TOKEN_CHARS)
                        .maxStringLength(MAX_TOKEN_CHARS)
                        .maxNumberLength(MAX_TOKEN_CHARS)
                        .maxNestingDepth(MAX_DEPTH)
                        .build())
                .build();
    }

    /**
     * The caps enforced.
     *
     * @return limits
     */
    public Limits limits() {
        return limits;
    }

    /** A list page's metadata. */
    public record ListPage(String continueToken, String resourceVersion, int items) {
    }

    /** One watch event. */
    public record WatchEvent(String type, ParsedResource object) {
    }

    /** A page or event whose shape is wrong (not a list, not an event): the pass ends with {@code error}. */
    public static final class MalformedException extends IOException {
        private static final long serialVersionUID = 1L;

        MalformedException(String message) {
            super(message);
        }
    }

    /**
     * Reads one list page from the stream, handing each item to {@code sink} as soon as it is parsed.
     *
     * @param in   response body
     * @param sink receives every item in document order
     * @return the page's {@code continue} and {@code resourceVersion}
     * @throws IOException on I/O failure, invalid JSON or a body that is not a list
     */
    public ListPage readList(InputStream in, Consumer<ParsedResource> sink) throws IOException {
        TapInputStream tap = new TapInputStream(in);
        Pass pass = new Pass(newFactory());
        try (JsonParser p = pass.json().createParser(tap)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new MalformedException("list is not an object");
            }
            requireUtf8(p);
            String cont = null;
            String rv = null;
            int items = 0;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken t = p.nextToken();
                if ("metadata".equals(field) && t == JsonToken.START_OBJECT) {
                    while (p.nextToken() == JsonToken.FIELD_NAME) {
                        String m = p.currentName();
                        JsonToken v = p.nextToken();
                        if ("continue".equals(m) && v == JsonToken.VALUE_STRING) {
                            cont = p.getText();
                        } else if ("resourceVersion".equals(m) && v == JsonToken.VALUE_STRING) {
                            rv = p.getText();
                        } else {
                            p.skipChildren();
                        }
                    }
                } else if ("items".equals(field) && t == JsonToken.START_ARRAY) {
                    while (p.nextToken() != JsonToken.END_ARRAY) {
                        sink.accept(readResource(pass, p, tap));
                        items++;
                    }
                } else if ("items".equals(field) && t != JsonToken.VALUE_NULL) {
                    throw new MalformedException("list items is not an array");
                } else {
                    p.skipChildren();
                }
            }
            return new ListPage(cont == null || cont.isEmpty() ? null : cont, rv, items);
        }
    }

    /**
     * Opens a reader of the watch events in a response body.
     *
     * @param in response body (one JSON object per event)
     * @return reader
     * @throws IOException when the parser cannot be created
     */
    public EventReader events(InputStream in) throws IOException {
        TapInputStream tap = new TapInputStream(in);
        Pass pass = new Pass(newFactory());
        return new EventReader(pass, pass.json().createParser(tap), tap);
    }

    /** Reads watch events one at a time from one response body. */
    public final class EventReader implements Closeable {
        private final Pass pass;
        private final JsonParser p;
        private final TapInputStream tap;

        private EventReader(Pass pass, JsonParser p, TapInputStream tap) {
            this.pass = pass;
            this.p = p;
            this.tap = tap;
        }

        /**
         * Reads the next event.
         *
         * @return the event, or null when the server ended the stream cleanly
         * @throws IOException on I/O failure, invalid JSON or a malformed event
         */
        public WatchEvent next() throws IOException {
            JsonToken t = p.nextToken();
            if (t == null) {
                return null;
            }
            if (t != JsonToken.START_OBJECT) {
                throw new MalformedException("event is not an object");
            }
            requireUtf8(p);
            String type = null;
            ParsedResource object = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken v = p.nextToken();
                if ("type".equals(field) && v == JsonToken.VALUE_STRING) {
                    type = p.getText();
                } else if ("object".equals(field)) {
                    object = readResource(pass, p, tap);
                } else {
                    p.skipChildren();
                }
            }
            if (type == null || object == null) {
                throw new MalformedException("event without type or object");
            }
            return new WatchEvent(type, object);
        }

        @Override
        public void close() throws IOException {
            p.close();
        }
    }

    /**
     * Jackson detects UTF-16 and UTF-32 from the first bytes and then reads characters, not bytes: the
     * byte offsets that bound each channel value are gone (-1). The API server only sends UTF-8 (RFC 8259
     * section 8.1), so anything else is a malformed body, not a page to guess at.
     */
    private static void requireUtf8(JsonParser p) throws MalformedException {
        if (p.currentTokenLocation().getByteOffset() < 0) {
            throw new MalformedException("body is not UTF-8 JSON");
        }
    }

    /** Reads the value at the current token as a resource; the parser ends on the value's last token. */
    private ParsedResource readResource(Pass pass, JsonParser p, TapInputStream tap) throws IOException {
        Resource r = new Resource();
        if (p.currentToken() != JsonToken.START_OBJECT) {
            p.skipChildren();
            return r.malformed();
        }
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken t = p.nextToken();
            switch (field) {
                case "metadata" -> {
                    if (t == JsonToken.START_OBJECT) {
                        readMetadata(p, r);
                    } else {
                        p.skipChildren();
                    }
                }
                case "spec" -> {
                    if (t == JsonToken.START_OBJECT) {
                        readSpec(pass, p, tap, r);
                    } else {
                        p.skipChildren();
                    }
                }
                case "code" -> {
                    if (t == JsonToken.VALUE_NUMBER_INT && p.getNumberType() == JsonParser.NumberType.INT) {
                        r.statusCode = p.getIntValue();
                    } else {
                        // Any other shape is ignored whole: an object or array left unskipped would end
                        // this resource at its closing token and put the parser out of place.
                        p.skipChildren();
                    }
                }
                default -> p.skipChildren();
            }
        }
        if (r.name == null || r.name.isEmpty()) {
            return r.malformed();
        }
        if (!r.hasData) {
            r.skip(SkipReason.NO_DATA);
        }
        return r.result();
    }

    private static void readMetadata(JsonParser p, Resource r) throws IOException {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken t = p.nextToken();
            if ("name".equals(field) && t == JsonToken.VALUE_STRING) {
                r.name = p.getText();
            } else if ("resourceVersion".equals(field) && t == JsonToken.VALUE_STRING) {
                r.resourceVersion = p.getText();
            } else {
                p.skipChildren();
            }
        }
    }

    private void readSpec(Pass pass, JsonParser p, TapInputStream tap, Resource r) throws IOException {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken t = p.nextToken();
            if ("data".equals(field) && t == JsonToken.START_OBJECT) {
                r.hasData = true;
                readData(pass, p, tap, r);
            } else {
                p.skipChildren();
            }
        }
    }

    private void readData(Pass pass, JsonParser p, TapInputStream tap, Resource r) throws IOException {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken t = p.nextToken();
            if ("event_channels".equals(field)) {
                if (t == JsonToken.START_OBJECT) {
                    readChannels(pass, p, tap, r);
                } else if (t != JsonToken.VALUE_NULL) {
                    // Decision: an event_channels that is not an object is one malformed channel entry.
                    p.skipChildren();
                    r.skip(SkipReason.MALFORMED_CHANNEL);
                }
            } else {
                // endpoints (request plane, R-SEC 12), model_cards, anything else: never materialized.
                p.skipChildren();
            }
        }
    }

    private void readChannels(Pass pass, JsonParser p, TapInputStream tap, Resource r)
            throws IOException {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String key = p.currentName();
            JsonToken t = p.nextToken();
            r.channels++;
            if (r.channels > limits.channelsPerResource()) {
                p.skipChildren();
                r.skip(SkipReason.CHANNEL_CAP);
            } else if (utf8Length(key) > limits.keyBytes()) {
                p.skipChildren();
                r.skip(SkipReason.OVERSIZED);
            } else if (t != JsonToken.START_OBJECT) {
                p.skipChildren();
                r.skip(SkipReason.MALFORMED_CHANNEL);
            } else {
                long start = p.currentTokenLocation().getByteOffset();
                tap.startCapture(start, limits.valueBytes());
                p.skipChildren();
                long end = p.currentLocation().getByteOffset();
                byte[] value = tap.endCapture(end - start);
                if (value == null) {
                    r.skip(SkipReason.OVERSIZED);
                } else {
                    readChannel(pass, value, r);
                }
            }
        }
    }

    /** Decodes one channel value from its bounded raw JSON text. */
    private void readChannel(Pass pass, byte[] json, Resource r) {
        Channel c = new Channel();
        try (JsonParser p = pass.json().createParser(json)) {
            p.nextToken();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken t = p.nextToken();
                switch (field) {
                    case "namespace" -> {
                        c.flatPresent = true;
                        c.flatNamespace = t == JsonToken.VALUE_STRING ? p.getText() : null;
                        p.skipChildren();
                    }
                    case "scope" -> {
                        c.scopePresent = true;
                        if (t == JsonToken.START_OBJECT) {
                            readScope(p, c);
                        } else {
                            p.skipChildren();
                        }
                    }
                    case "transport" -> {
                        if (t == JsonToken.START_OBJECT) {
                            readTransport(p, c);
                        } else {
                            p.skipChildren();
                        }
                    }
                    default -> p.skipChildren();
                }
            }
        } catch (IOException | RuntimeException e) {
            // Invalid escapes or encodings inside a channel value only spoil that channel.
            r.skip(SkipReason.MALFORMED_CHANNEL);
            return;
        }
        if (c.kind == null) {
            r.skip(SkipReason.MALFORMED_CHANNEL);
            return;
        }
        String kind = c.kind.toLowerCase(Locale.ROOT);
        boolean zmq = kind.equals("zmq");
        boolean broker = kind.equals("zmqbroker");
        if (!zmq && !broker) {
            return; // Nats or any other transport: valid, advertises nothing, not counted
        }
        String namespace = c.dynamoNamespace();
        if (namespace == null) {
            r.skip(SkipReason.MALFORMED_CHANNEL);
            return;
        }
        namespace = pass.intern(namespace);
        List<Object> endpoints = zmq ? List.of(c.endpoint == null ? Channel.NOT_A_STRING : c.endpoint)
                : c.xpubEndpoints == null ? List.of(Channel.NOT_A_STRING) : c.xpubEndpoints;
        for (Object endpoint : endpoints) {
            if (!(endpoint instanceof String text)) {
                r.skip(SkipReason.INVALID_ENDPOINT);
                continue;
            }
            switch (EndpointParser.parse(namespace, text, limits.endpointBytes())) {
                case EndpointParser.Skipped s -> r.skip(s.reason());
                case EndpointParser.Valid v -> {
                    if (r.publishers.contains(v.key())) {
                        continue; // the same publisher again: no new reference
                    }
                    if (r.publishers.size() >= limits.publishersPerResource()) {
                        r.skip(SkipReason.PUBLISHER_CAP);
                    } else {
                        r.publishers.add(v.key());
                    }
                }
            }
        }
    }

    private static void readScope(JsonParser p, Channel c) throws IOException {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken t = p.nextToken();
            switch (field) {
                case "kind" -> c.scopeKind = t == JsonToken.VALUE_STRING ? p.getText() : null;
                case "name" -> c.scopeName = t == JsonToken.VALUE_STRING ? p.getText() : null;
                case "namespace" -> c.scopeNamespace = t == JsonToken.VALUE_STRING ? p.getText() : null;
                case "endpoint" -> {
                    if (t == JsonToken.START_OBJECT) {
                        while (p.nextToken() == JsonToken.FIELD_NAME) {
                            String f = p.currentName();
                            JsonToken v = p.nextToken();
                            if ("namespace".equals(f) && v == JsonToken.VALUE_STRING) {
                                c.scopeEndpointNamespace = p.getText();
                            } else {
                                p.skipChildren();
                            }
                        }
                    }
                }
                default -> {
                }
            }
            p.skipChildren();
        }
    }

    private static void readTransport(JsonParser p, Channel c) throws IOException {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken t = p.nextToken();
            if ("kind".equals(field)) {
                c.kind = t == JsonToken.VALUE_STRING ? p.getText() : null;
            } else if ("config".equals(field) && t == JsonToken.START_OBJECT) {
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String f = p.currentName();
                    JsonToken v = p.nextToken();
                    if ("endpoint".equals(f)) {
                        c.endpoint = v == JsonToken.VALUE_STRING ? p.getText() : null;
                    } else if ("xpub_endpoints".equals(f)) {
                        if (v == JsonToken.START_ARRAY) {
                            c.xpubEndpoints = new ArrayList<>();
                            while (p.nextToken() != JsonToken.END_ARRAY) {
                                c.xpubEndpoints.add(p.currentToken() == JsonToken.VALUE_STRING
                                        ? p.getText() : Channel.NOT_A_STRING);
                                p.skipChildren();
                            }
                        } else {
                            c.xpubEndpoints = null;
                        }
                    }
                    // xsub_endpoints is where publishers connect: never advertised.
                    p.skipChildren();
                }
            }
            p.skipChildren();
        }
    }

    static int utf8Length(String s) {
        int n = 0;
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            if (ch < 0x80) {
                n += 1;
            } else if (ch < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(ch) && i + 1 < s.length()
                    && Character.isLowSurrogate(s.charAt(i + 1))) {
                n += 4;
                i++;
            } else {
                n += 3;
            }
        }
        return n;
    }

    /**
     * What one list page or watch pass shares: its JSON factory, and one copy of each Dynamo namespace
     * string (every publisher key of a pass shares it; at most 1,024 distinct ones are kept).
     */
    private static final class Pass {
        private static final int MAX_INTERNED = 1_024;
        private final JsonFactory json;
        private final Map<String, String> namespaces = new HashMap<>();

        Pass(JsonFactory json) {
            this.json = json;
        }

        JsonFactory json() {
            return json;
        }

        String intern(String namespace) {
            String known = namespaces.get(namespace);
            if (known != null) {
                return known;
            }
            if (namespaces.size() < MAX_INTERNED) {
                namespaces.put(namespace, namespace);
            }
            return namespace;
        }
    }

    /** Mutable state while reading one resource. */
    private static final class Resource {
        String name;
        String resourceVersion;
        boolean hasData;
        int statusCode = -1;
        int channels;
        final LinkedHashSet<PublisherKey> publishers = new LinkedHashSet<>();
        final Map<SkipReason, Integer> skips = new EnumMap<>(SkipReason.class);

        void skip(SkipReason reason) {
            skips.merge(reason, 1, Integer::sum);
        }

        ParsedResource malformed() {
            return new ParsedResource(name, resourceVersion, false, List.of(), statusCode,
                    Map.of(SkipReason.MALFORMED_RESOURCE, 1));
        }

        ParsedResource result() {
            return new ParsedResource(name, resourceVersion, true, new ArrayList<>(publishers), statusCode, skips);
        }
    }

    /** Mutable state while reading one channel value. */
    private static final class Channel {
        static final Object NOT_A_STRING = new Object();

        boolean flatPresent;
        String flatNamespace;
        boolean scopePresent;
        String scopeKind;
        String scopeName;
        String scopeNamespace;
        String scopeEndpointNamespace;
        String kind;
        String endpoint;
        List<Object> xpubEndpoints;

        /**
         * The channel's Dynamo namespace, or null when it cannot be determined: a scope of unknown kind
         * or without its namespace, a non-string flat namespace, neither shape, or both shapes naming
         * different namespaces.
         */
        String dynamoNamespace() {
            String fromScope = null;
            if (scopePresent) {
                if (scopeKind == null) {
                    return null;
                }
                fromScope = switch (scopeKind.toLowerCase(Locale.ROOT)) {
                    case "namespace" -> scopeName;
                    case "component" -> scopeNamespace;
                    case "endpoint" -> scopeEndpointNamespace;
                    default -> null;
                };
                if (fromScope == null || fromScope.isEmpty()) {
                    return null;
                }
            }
            if (flatPresent) {
                if (flatNamespace == null || flatNamespace.isEmpty()) {
                    return null;
                }
                if (fromScope != null && !fromScope.equals(flatNamespace)) {
                    return null;
                }
                return flatNamespace;
            }
            return fromScope;
        }
    }
}
