package io.continuum.broker.metadata.internal;

import com.code_intelligence.jazzer.junit.FuzzTest;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.continuum.broker.metadata.Host;
import io.continuum.broker.metadata.MetadataMetrics;
import io.continuum.broker.metadata.PublisherKey;
import io.continuum.broker.metadata.SkipReason;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Coverage-guided fuzzing of the {@code DynamoWorkerMetadata} parser (R-META 3, 4, 7, 8; R-SEC 12;
 * dynamo-worker-metadata.md; docs/reliability.md, "Fuzzing"). Every input is read both as a list page and as a watch
 * body, under the normative caps ({@link Limits#SPEC}) and under tiny ones (so that the fuzzer
 * reaches every cap with small inputs), and the parsed resources go through a {@link Catalog} as
 * the watcher would put them. The contract asserted:
 * <ol>
 *     <li>nothing but an {@link IOException} (invalid JSON, a body that is not a list or an event)
 *     ever leaves the parser; a page that is valid JSON of the right shape never fails, and every
 *     one of its items is handed over, malformed or not (bad resources are skipped and counted,
 *     not thrown);</li>
 *     <li>every advertised publisher is a well-formed {@code tcp://host:port} endpoint (checked
 *     here independently of the parser's own endpoint code), written in the {@code transport} of
 *     a channel in {@code spec.data.event_channels} (never {@code endpoints} or
 *     {@code model_cards}: R-SEC 12), under that channel's namespace, within the first
 *     {@code channelsPerResource} entries, from a key of at most {@code keyBytes}, a value of at
 *     most {@code valueBytes} as received and an endpoint string of at most
 *     {@code endpointBytes};</li>
 *     <li>at most {@code publishersPerResource} distinct publishers per resource, exactly one
 *     {@code channel_cap} count per entry past the channel cap, one {@code malformed_resource}
 *     per malformed item;</li>
 *     <li>the catalog never holds more than {@code totalReferences} references nor more than
 *     {@code resourcesPerNamespace} resources, and advertises nothing the parser did not return.</li>
 * </ol>
 * The reference reading ({@link Tree}) is a plain, unbounded walk of the same JSON with Jackson.
 * Inputs: {@code src/test/resources/io/continuum/broker/metadata/internal/MetadataParserFuzzTestInputs/metadata/}
 * (the fixtures of {@code MetadataParserTest} as list pages and watch events, and past findings).
 */
class MetadataParserFuzzTest {
    /** Caps small enough for the fuzzer to cross each of them in a few hundred bytes. */
    private static final Limits TINY = new Limits(3, 4, 2, 5, 16, 300, 40);
    private static final String NAMESPACE = "gpu-serving";

    @FuzzTest(maxDuration = "15s")
    void metadata(byte[] body) {
        if (body == null) {
            return;
        }
        Tree.Document doc = Tree.read(body);
        for (Limits limits : List.of(Limits.SPEC, TINY)) {
            listPage(body, doc, limits);
            watchBody(body, doc, limits);
        }
    }

    private static void listPage(byte[] body, Tree.Document doc, Limits limits) {
        Catalog catalog = new Catalog(limits, MetadataMetrics.NONE);
        Catalog.Listing listing = catalog.startListing(NAMESPACE);
        List<ParsedResource> parsed = new ArrayList<>();
        IOException failure = null;
        try {
            new MetadataParser(limits).readList(new ByteArrayInputStream(body), resource -> {
                parsed.add(resource);
                listing.add(resource);
            });
        } catch (IOException e) {
            failure = e;
        }
        Tree.Node root = doc.values().isEmpty() ? null : doc.values().getFirst();
        if (root != null) {
            List<Tree.Node> items = new ArrayList<>();
            boolean badShape = !(root instanceof Tree.Obj page);
            if (!badShape) {
                for (Tree.Node value : ((Tree.Obj) root).all("items")) {
                    if (value instanceof Tree.Arr array) {
                        items.addAll(array.items());
                    } else if (!(value instanceof Tree.Null)) {
                        badShape = true;
                        break;
                    }
                }
            }
            if (badShape) {
                assertTrue(failure instanceof MetadataParser.MalformedException, "a page of the wrong shape fails as such");
            } else {
                if (failure != null) {
                    throw new AssertionError("a valid list page failed", failure);
                }
                assertEquals(items.size(), parsed.size(), "every item is handed over, malformed or not");
                for (int i = 0; i < items.size(); i++) {
                    checkResource(limits, items.get(i), parsed.get(i));
                }
            }
        }
        if (failure == null) {
            checkCatalog(limits, listing.commit(), parsed);
        }
    }

    private static void watchBody(byte[] body, Tree.Document doc, Limits limits) {
        Catalog catalog = new Catalog(limits, MetadataMetrics.NONE);
        List<ParsedResource> parsed = new ArrayList<>();
        int events = 0;
        IOException failure = null;
        try (MetadataParser.EventReader reader = new MetadataParser(limits).events(new ByteArrayInputStream(body))) {
            MetadataParser.WatchEvent event;
            while ((event = reader.next()) != null) {
                if (events < doc.values().size()) {
                    Tree.Node value = doc.values().get(events);
                    assertTrue(value instanceof Tree.Obj, "an event is an object");
                    List<Tree.Node> objects = ((Tree.Obj) value).all("object");
                    assertFalse(objects.isEmpty(), "an event has an object");
                    checkResource(limits, objects.getLast(), event.object());
                }
                events++;
                parsed.add(event.object());
                switch (event.type()) {
                    case "ADDED", "MODIFIED" -> catalog.upsert(NAMESPACE, event.object());
                    case "DELETED" -> {
                        if (event.object().name() != null) {
                            catalog.delete(NAMESPACE, event.object().name());
                        }
                    }
                    default -> {
                    }
                }
                checkCatalog(limits, catalog.snapshot(), parsed);
            }
        } catch (IOException e) {
            failure = e;
        }
        if (doc.complete() && doc.values().stream().allMatch(MetadataParserFuzzTest::isEvent)) {
            if (failure != null) {
                throw new AssertionError("a valid watch body failed", failure);
            }
            assertEquals(doc.values().size(), events, "every event is read");
        }
    }

    private static boolean isEvent(Tree.Node value) {
        return value instanceof Tree.Obj o && !o.all("object").isEmpty()
                && o.all("type").stream().anyMatch(t -> t instanceof Tree.Str);
    }

    /** One resource against its reference reading. */
    private static void checkResource(Limits limits, Tree.Node item, ParsedResource r) {
        String name = item instanceof Tree.Obj ? lastName(item) : null;
        if (!r.wellFormed()) {
            assertEquals(List.of(), r.publishers());
            assertEquals(Map.of(SkipReason.MALFORMED_RESOURCE, 1), r.skips(), "a malformed resource is counted once");
            assertTrue(name == null || name.isEmpty(), "an object with a metadata.name is well-formed");
            return;
        }
        assertTrue(item instanceof Tree.Obj, "only an object is a resource");
        assertEquals(name, r.name(), "the resource's name is its (last) metadata.name");
        assertTrue(r.publishers().size() <= limits.publishersPerResource(), "R-META 3: publishers per resource");
        assertEquals(r.publishers().size(), new HashSet<>(r.publishers()).size(), "publishers are distinct");

        List<Channel> channels = channels((Tree.Obj) item);
        int overCap = Math.max(0, channels.size() - limits.channelsPerResource());
        assertEquals(overCap, r.skips().getOrDefault(SkipReason.CHANNEL_CAP, 0), "R-META 3: one channel_cap per entry");
        List<Channel> inspected = channels.subList(0, Math.min(channels.size(), limits.channelsPerResource()));
        for (PublisherKey key : r.publishers()) {
            assertEquals(key.host(), Host.parse(key.host()).text(), "an advertised host is canonical");
            boolean found = false;
            for (Channel c : inspected) {
                if (c.key().getBytes(StandardCharsets.UTF_8).length > limits.keyBytes()
                        || c.rawBytes() > limits.valueBytes() || !c.namespaces().contains(key.namespace())) {
                    continue;
                }
                for (String endpoint : c.endpoints()) {
                    if (endpoint.getBytes(StandardCharsets.UTF_8).length <= limits.endpointBytes()
                            && isEndpointOf(endpoint, key)) {
                        found = true;
                    }
                }
            }
            if (!found) {
                fail("advertised " + key + " is no well-formed tcp:// endpoint of an event channel within the caps");
            }
        }
    }

    private static String lastName(Tree.Node item) {
        String name = null;
        for (Tree.Node m : ((Tree.Obj) item).all("metadata")) {
            if (m instanceof Tree.Obj mo) {
                for (Tree.Node n : mo.all("name")) {
                    if (n instanceof Tree.Str s) {
                        name = s.text();
                    }
                }
            }
        }
        return name;
    }

    /** A channel entry of {@code spec.data.event_channels}, in document order, with what it could advertise. */
    private record Channel(String key, long rawBytes, Set<String> namespaces, List<String> endpoints) {
    }

    private static List<Channel> channels(Tree.Obj resource) {
        List<Channel> out = new ArrayList<>();
        for (Tree.Node spec : resource.all("spec")) {
            if (!(spec instanceof Tree.Obj s)) {
                continue;
            }
            for (Tree.Node data : s.all("data")) {
                if (!(data instanceof Tree.Obj d)) {
                    continue;
                }
                for (Tree.Node channels : d.all("event_channels")) {
                    if (!(channels instanceof Tree.Obj map)) {
                        continue;
                    }
                    for (Tree.Member entry : map.members()) {
                        out.add(channel(entry));
                    }
                }
            }
        }
        return out;
    }

    private static Channel channel(Tree.Member entry) {
        Set<String> namespaces = new HashSet<>();
        List<String> endpoints = new ArrayList<>();
        long raw = Long.MAX_VALUE;
        if (entry.value() instanceof Tree.Obj value) {
            raw = value.rawBytes();
            strings(value.all("namespace"), namespaces);
            for (Tree.Node scope : value.all("scope")) {
                if (scope instanceof Tree.Obj so) {
                    strings(so.all("name"), namespaces);
                    strings(so.all("namespace"), namespaces);
                    for (Tree.Node ep : so.all("endpoint")) {
                        if (ep instanceof Tree.Obj epo) {
                            strings(epo.all("namespace"), namespaces);
                        }
                    }
                }
            }
            for (Tree.Node transport : value.all("transport")) {
                if (!(transport instanceof Tree.Obj t)) {
                    continue;
                }
                for (Tree.Node config : t.all("config")) {
                    if (config instanceof Tree.Obj co) {
                        strings(co.all("endpoint"), endpoints);
                        for (Tree.Node xpub : co.all("xpub_endpoints")) {
                            if (xpub instanceof Tree.Arr a) {
                                strings(a.items(), endpoints);
                            }
                        }
                    }
                }
            }
        }
        return new Channel(entry.name(), raw, namespaces, endpoints);
    }

    private static void strings(List<Tree.Node> nodes, java.util.Collection<String> out) {
        for (Tree.Node n : nodes) {
            if (n instanceof Tree.Str s) {
                out.add(s.text());
            }
        }
    }

    /**
     * Whether {@code endpoint} is exactly {@code tcp://HOST:PORT} naming {@code key}: HOST a DNS name or
     * canonical IPv4 literal, or a bracketed IPv6 literal, never a wildcard; PORT 1..65535 in plain
     * decimal (dynamo-worker-metadata.md). Written apart from the parser's own endpoint code.
     */
    static boolean isEndpointOf(String endpoint, PublisherKey key) {
        if (!endpoint.startsWith("tcp://")) {
            return false;
        }
        String rest = endpoint.substring("tcp://".length());
        int colon = rest.lastIndexOf(':');
        if (colon < 0) {
            return false;
        }
        String hostPart = rest.substring(0, colon);
        String portPart = rest.substring(colon + 1);
        if (!portPart.matches("[1-9][0-9]{0,4}") || Integer.parseInt(portPart) > 65_535) {
            return false;
        }
        String host;
        if (hostPart.startsWith("[") && hostPart.endsWith("]")) {
            host = hostPart.substring(1, hostPart.length() - 1);
            if (!host.contains(":")) {
                return false;
            }
        } else if (hostPart.contains(":") || hostPart.contains("[") || hostPart.contains("]")) {
            return false;
        } else {
            host = hostPart;
        }
        Host parsed;
        try {
            parsed = Host.parse(host);
        } catch (Host.InvalidHostException e) {
            return false;
        }
        if (parsed instanceof Host.IpLiteral ip && ip.address().isAnyLocalAddress()) {
            return false;
        }
        return key.equals(PublisherKey.of(key.namespace(), parsed, Integer.parseInt(portPart)));
    }

    private static void checkCatalog(Limits limits, Snapshot snapshot, List<ParsedResource> parsed) {
        assertTrue(snapshot.totalReferences() <= limits.totalReferences(), "R-META 3: total references");
        assertTrue(snapshot.held(NAMESPACE).resources().size() <= limits.resourcesPerNamespace(),
                "R-META 3: resources per namespace");
        Set<PublisherKey> returned = new HashSet<>();
        parsed.forEach(r -> returned.addAll(r.publishers()));
        snapshot.references().forEach((key, count) -> assertTrue(returned.contains(key),
                "the catalog advertises only what the parser returned"));
    }
}
