package io.continuum.broker.metadata;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

import io.continuum.broker.metadata.internal.Catalog;
import io.continuum.broker.metadata.internal.Limits;
import io.continuum.broker.metadata.internal.MetadataParser;
import io.continuum.broker.metadata.internal.ParsedResource;
import io.continuum.broker.metadata.internal.Snapshot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The streaming parser against the fixtures: both channel shapes, transports, every skip reason and its
 * counter (R-META 3, 4, 7; R-SEC 4, 12; dynamo-worker-metadata.md).
 */
public class MetadataParserTest {
    private final CountingMetrics metrics = new CountingMetrics();

    public static String fixture(String name) {
        try (InputStream in = MetadataParserTest.class.getResourceAsStream("/fixtures/" + name)) {
            if (in == null) {
                throw new IllegalArgumentException("no fixture " + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String page(List<String> items) {
        return "{\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[" + String.join(",", items) + "]}";
    }

    private Snapshot list(Limits limits, String pageJson) throws IOException {
        Catalog catalog = new Catalog(limits, metrics);
        Catalog.Listing listing = catalog.startListing("k8s-ns");
        new MetadataParser(limits).readList(stream(pageJson), listing::add);
        return listing.commit();
    }

    private Snapshot listFixtures(String... names) throws IOException {
        List<String> items = new ArrayList<>();
        for (String n : names) {
            items.add(fixture(n));
        }
        return list(Limits.SPEC, page(items));
    }

    private static InputStream stream(String json) {
        return new ByteArrayInputStream(json.getBytes(StandardCharsets.UTF_8));
    }

    private static Set<String> advertised(Snapshot s) {
        List<String> out = new ArrayList<>();
        s.references().forEach((k, v) -> out.add(k.toString()));
        return Set.copyOf(out);
    }

    @Test
    void flatShapeZmqIsAdvertisedAndRequestPlaneAndModelCardsAreNot() throws IOException {
        Snapshot s = listFixtures("flat-zmq.json");
        assertEquals(Set.of("dynamo/10.244.3.7:5557"), advertised(s)); // R-SEC 12: not 10.244.3.7:9000
        assertTrue(s.advertises(PublisherKey.of("dynamo", "10.244.3.7", 5557)));
        assertFalse(s.advertises(PublisherKey.of("dynamo", "10.244.3.7", 9000)));
        assertFalse(s.advertises(PublisherKey.of("dynamo", "10.9.9.9", 1)));
        assertEquals(Map.of(), metrics.skips());
    }

    @Test
    void scopedShapesAllThreeKindsCaseInsensitiveKindsAndHostNormalisation() throws IOException {
        Snapshot s = listFixtures("scoped-all-kinds.json");
        assertEquals(Set.of("ns-a/10.244.3.8:5557", "ns-b/10.244.3.8:5558", "ns-c/[fd00:0:0:0:0:0:0:8]:5559",
                "ns-a/worker-8.dynamo.svc:6000"), advertised(s));
        // subscribe targets carry the host without brackets, any spelling of the same IPv6 address
        assertTrue(s.advertises(PublisherKey.of("ns-c", "fd00:0::8", 5559)));
        assertTrue(s.advertises(PublisherKey.of("ns-a", "WORKER-8.dynamo.svc", 6000)));
        // the namespace is part of the key
        assertFalse(s.advertises(PublisherKey.of("ns-b", "10.244.3.8", 5557)));
        assertEquals(4, s.totalReferences()); // the duplicate is one reference
        assertEquals(Map.of(), metrics.skips());
    }

    @Test
    void zmqBrokerAdvertisesXpubNeverXsub() throws IOException {
        Snapshot s = listFixtures("zmq-broker.json");
        assertEquals(Set.of("dynamo/10.244.5.1:7001", "dynamo/10.244.5.2:7001"), advertised(s));
        assertFalse(s.advertises(PublisherKey.of("dynamo", "10.244.5.1", 7000)));
    }

    @Test
    void natsOtherTransportsAndRequestPlaneAdvertiseNothingAndCountNothing() throws IOException {
        Snapshot s = listFixtures("nats-and-others.json", "request-plane-only.json");
        assertEquals(Set.of(), advertised(s));
        assertEquals(2, s.resourceCount());
        assertEquals(Map.of(), metrics.skips());
    }

    @Test
    void malformedChannelsAreSkippedAndCounted() throws IOException {
        Snapshot s = listFixtures("malformed-channels.json");
        assertEquals(Set.of("dynamo/10.244.8.1:5557"), advertised(s));
        assertEquals(Map.of(SkipReason.MALFORMED_CHANNEL, 9), metrics.skips());
    }

    @Test
    void invalidEndpointsAreSkippedAndCounted() throws IOException {
        Snapshot s = listFixtures("invalid-endpoints.json");
        assertEquals(Set.of("dynamo/10.244.9.3:7001", "dynamo/[fd00:0:0:0:0:0:0:7]:5557", "dynamo/10.244.9.1:5557"),
                advertised(s));
        assertEquals(Map.of(SkipReason.INVALID_ENDPOINT, 24), metrics.skips());
    }

    @Test
    void oversizedKeysAndEndpointsAreSkippedAndCounted() throws IOException {
        Snapshot s = listFixtures("oversized.json");
        String longHost = "a".repeat(60) + "." + "b".repeat(60) + "." + "c".repeat(60) + "." + "d".repeat(60);
        assertEquals(Set.of("dynamo/10.244.10.1:5557", "dynamo/" + longHost + ":5557"), advertised(s));
        assertEquals(Map.of(SkipReason.OVERSIZED, 2), metrics.skips());
    }

    @Test
    void noDataResourcesAreHeldWithoutPublishers() throws IOException {
        Snapshot s = listFixtures("no-data.json", "data-not-object.json");
        assertEquals(2, s.resourceCount());
        assertEquals(0, s.publisherCount());
        assertEquals(Map.of(SkipReason.NO_DATA, 2), metrics.skips());
    }

    @Test
    void malformedResourcesNeverFailThePage() throws IOException {
        Snapshot s = list(Limits.SPEC, fixture("list-page-malformed-resources.json"));
        assertEquals(2, s.resourceCount());
        assertTrue(s.held("k8s-ns").resources().containsKey("good-1"));
        assertTrue(s.held("k8s-ns").resources().containsKey("good-2"));
        assertEquals(Set.of("dynamo/10.244.12.1:5557"), advertised(s));
        assertEquals(Map.of(SkipReason.MALFORMED_RESOURCE, 5), metrics.skips());
    }

    /** R-META 4: the value's size is its JSON text as received; 64 KiB is kept, one byte more is not. */
    @Test
    void channelValueOver64KiBIsOversizedAndExactly64KiBIsKept() throws IOException {
        String atLimit = channelOfSize("tcp://10.244.13.1:5557", 64 * 1024);
        String overLimit = channelOfSize("tcp://10.244.13.2:5557", 64 * 1024 + 1);
        assertEquals(64 * 1024, atLimit.getBytes(StandardCharsets.UTF_8).length);
        assertEquals(64 * 1024 + 1, overLimit.getBytes(StandardCharsets.UTF_8).length);
        String resource = "{\"metadata\":{\"name\":\"r\"},\"spec\":{\"data\":{\"event_channels\":{\"at\":" + atLimit
                + ",\"over\":" + overLimit + "}}}}";
        Snapshot s = list(Limits.SPEC, page(List.of(resource)));
        assertEquals(Set.of("dynamo/10.244.13.1:5557"), advertised(s));
        assertEquals(Map.of(SkipReason.OVERSIZED, 1), metrics.skips());
    }

    /** A huge channel value (8 MiB, one string) is skipped without failing the page. */
    @Test
    void hugeChannelValueIsSkippedNotBuffered() throws IOException {
        String huge = channelOfSize("tcp://10.244.13.3:5557", 8 * 1024 * 1024);
        String resource = "{\"metadata\":{\"name\":\"r\"},\"spec\":{\"data\":{\"event_channels\":{\"huge\":" + huge
                + ",\"ok\":" + channelOfSize("tcp://10.244.13.4:5557", 200) + "}}}}";
        Snapshot s = list(Limits.SPEC, page(List.of(resource)));
        assertEquals(Set.of("dynamo/10.244.13.4:5557"), advertised(s));
        assertEquals(Map.of(SkipReason.OVERSIZED, 1), metrics.skips());
    }

    /** A Zmq channel of exactly {@code size} bytes, padded with an ignored member (multi-byte UTF-8 too). */
    static String channelOfSize(String endpoint, int size) {
        String head = "{\"namespace\":\"dynamo\",\"transport\":{\"kind\":\"Zmq\",\"config\":{\"endpoint\":\""
                + endpoint + "\"}},\"pad\":\"é";
        String tail = "\"}";
        int fixed = head.getBytes(StandardCharsets.UTF_8).length + tail.length();
        return head + "x".repeat(size - fixed) + tail;
    }

    /** R-META 3: 1,024 channel entries inspected per resource, one channel_cap per entry past them. */
    @Test
    void channelCapCountsEveryEntryPastTheFirst1024() throws IOException {
        StringBuilder channels = new StringBuilder();
        for (int i = 0; i < 1_030; i++) {
            if (i > 0) {
                channels.append(',');
            }
            // entries 0..1023 are inspected (and all Nats: advertise nothing), 1024.. carry valid Zmq publishers
            String kind = i < 1_024 ? "Nats" : "Zmq";
            channels.append("\"c").append(i).append("\":{\"namespace\":\"dynamo\",\"transport\":{\"kind\":\"")
                    .append(kind).append("\",\"config\":{\"endpoint\":\"tcp://10.244.14.1:").append(1_000 + i)
                    .append("\"}}}");
        }
        String resource = "{\"metadata\":{\"name\":\"r\"},\"spec\":{\"data\":{\"event_channels\":{" + channels + "}}}}";
        Snapshot s = list(Limits.SPEC, page(List.of(resource)));
        assertEquals(0, s.publisherCount());
        assertEquals(Map.of(SkipReason.CHANNEL_CAP, 6), metrics.skips());
    }

    /** R-META 3: 256 distinct valid publishers per resource; invalid ones and duplicates do not count. */
    @Test
    void publisherCapKeepsTheFirst256DistinctValidPublishers() throws IOException {
        StringBuilder xpub = new StringBuilder("\"tcp://*:1\",\"ipc:///x\"");
        for (int i = 0; i < 300; i++) {
            xpub.append(",\"tcp://10.244.15.1:").append(2_000 + i).append('"');
            if (i == 10) {
                xpub.append(",\"tcp://10.244.15.1:2000\""); // duplicate: no new reference
            }
        }
        String resource = "{\"metadata\":{\"name\":\"r\"},\"spec\":{\"data\":{\"event_channels\":{\"b\":"
                + "{\"namespace\":\"dynamo\",\"transport\":{\"kind\":\"ZmqBroker\",\"config\":{\"xpub_endpoints\":["
                + xpub + "]}}}}}}}";
        Snapshot s = list(Limits.SPEC, page(List.of(resource)));
        assertEquals(256, s.publisherCount());
        assertTrue(s.advertises(PublisherKey.of("dynamo", "10.244.15.1", 2_255)));
        assertFalse(s.advertises(PublisherKey.of("dynamo", "10.244.15.1", 2_256)));
        assertEquals(Map.of(SkipReason.PUBLISHER_CAP, 44, SkipReason.INVALID_ENDPOINT, 2), metrics.skips());
    }

    /** R-META 3: 16,384 resources per namespace; one resource_cap per resource past them. */
    @Test
    void resourceCapPerNamespace() throws IOException {
        List<String> items = new ArrayList<>();
        for (int i = 0; i < 16_384 + 3; i++) {
            items.add("{\"metadata\":{\"name\":\"w" + i + "\"},\"spec\":{\"data\":{}}}");
        }
        Snapshot s = list(Limits.SPEC, page(items));
        assertEquals(16_384, s.resourceCount());
        assertEquals(Map.of(SkipReason.RESOURCE_CAP, 3), metrics.skips());
        assertNull(s.held("k8s-ns").resources().get("w16384"));
    }

    /** R-META 3, 6: 65,536 references in total, duplicates across resources counting; enforced while paging. */
    @Test
    void totalCapCountsDuplicatesAcrossResources() throws IOException {
        List<String> items = new ArrayList<>();
        for (int r = 0; r < 257; r++) {
            items.add(resourceWithPorts("w" + r, "10.244.16.1", 1, 256)); // the same 256 publishers each time
        }
        Snapshot s = list(Limits.SPEC, page(items));
        assertEquals(65_536, s.totalReferences());
        assertEquals(256, s.publisherCount());
        assertEquals(257, s.resourceCount()); // the last one is held with what fit: nothing
        assertEquals(0, s.held("k8s-ns").resources().get("w256").size());
        assertEquals(Map.of(SkipReason.TOTAL_CAP, 256), metrics.skips());
    }

    static String resourceWithPorts(String name, String host, int firstPort, int count) {
        StringBuilder xpub = new StringBuilder();
        for (int i = 0; i < count; i++) {
            if (i > 0) {
                xpub.append(',');
            }
            xpub.append("\"tcp://").append(host).append(':').append(firstPort + i).append('"');
        }
        return "{\"metadata\":{\"name\":\"" + name + "\"},\"spec\":{\"data\":{\"event_channels\":{\"b\":"
                + "{\"namespace\":\"dynamo\",\"transport\":{\"kind\":\"ZmqBroker\",\"config\":{\"xpub_endpoints\":["
                + xpub + "]}}}}}}}";
    }

    @Test
    void pageThatIsNotAListFails() {
        MetadataParser parser = new MetadataParser(Limits.SPEC);
        assertThrows(MetadataParser.MalformedException.class, () -> parser.readList(stream("[1,2]"), r -> {
        }));
        assertThrows(MetadataParser.MalformedException.class, () -> parser.readList(stream("{\"items\":7}"), r -> {
        }));
        assertThrows(IOException.class, () -> parser.readList(stream("{\"items\":[{\"metadata\":"), r -> {
        }));
    }

    @Test
    void listMetadataAndWatchEventsAreRead() throws IOException {
        MetadataParser parser = new MetadataParser(Limits.SPEC);
        List<ParsedResource> got = new ArrayList<>();
        MetadataParser.ListPage p = parser.readList(stream(
                "{\"items\":[" + fixture("zmq-broker.json") + "],\"metadata\":{\"continue\":\"abc\",\"resourceVersion\":\"9\"}}"),
                got::add);
        assertEquals(new MetadataParser.ListPage("abc", "9", 1), p);
        assertEquals("worker-broker", got.getFirst().name());

        String events = "{\"type\":\"ADDED\",\"object\":" + fixture("flat-zmq.json") + "}\n"
                + "{\"object\":{\"metadata\":{\"resourceVersion\":\"12\"}},\"type\":\"BOOKMARK\"}\n"
                + "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410}}\n";
        try (MetadataParser.EventReader r = parser.events(stream(events))) {
            MetadataParser.WatchEvent e1 = r.next();
            assertEquals("ADDED", e1.type());
            assertEquals(List.of(PublisherKey.of("dynamo", "10.244.3.7", 5557)), e1.object().publishers());
            MetadataParser.WatchEvent e2 = r.next();
            assertEquals("BOOKMARK", e2.type());
            assertEquals("12", e2.object().resourceVersion());
            assertEquals(410, r.next().object().statusCode());
            assertNull(r.next());
        }
        try (MetadataParser.EventReader r = parser.events(stream("{\"type\":\"ADDED\"}"))) {
            assertThrows(MetadataParser.MalformedException.class, r::next);
        }
    }

    /**
     * A member the parser reads only as a scalar ({@code code} of a watch ERROR Status) may hold any
     * value in a resource. Found by fuzzing: a {@code code} object was not skipped, so the parser ended
     * the resource at that object's end, handed the rest of the resource to the event or page level, and
     * read the next event's first token out of place ("event is not an object").
     */
    @Test
    void aResourceMemberOfUnexpectedShapeIsSkippedWhole() throws IOException {
        MetadataParser parser = new MetadataParser(Limits.SPEC);
        for (String code : List.of("{\"name\":\"w\",\"spec\":{}}", "[1,{\"a\":[2]}]", "4294967296", "\"410\"")) {
            String odd = "{\"code\":" + code + ",\"metadata\":{\"name\":\"odd\"},\"spec\":{\"data\":{}}}";
            String events = "{\"type\":\"ADDED\",\"object\":" + odd + "}\n"
                    + "{\"type\":\"ADDED\",\"object\":" + fixture("flat-zmq.json") + "}\n";
            try (MetadataParser.EventReader r = parser.events(stream(events))) {
                MetadataParser.WatchEvent first = r.next();
                assertEquals("odd", first.object().name(), code);
                assertEquals(-1, first.object().statusCode(), code);
                assertEquals(List.of(PublisherKey.of("dynamo", "10.244.3.7", 5557)), r.next().object().publishers(), code);
                assertNull(r.next(), code);
            }
            List<ParsedResource> got = new ArrayList<>();
            parser.readList(stream(page(List.of(odd, fixture("flat-zmq.json")))), got::add);
            assertEquals(List.of("odd", "worker-flat"), got.stream().map(ParsedResource::name).toList(), code);
        }
    }

    /** The fuzzer's input itself (three ADDED events, the middle one with a {@code code} object). */
    @Test
    void theWatchBodyTheFuzzerFoundIsReadWhole() throws IOException {
        byte[] body;
        try (InputStream in = MetadataParserTest.class.getResourceAsStream(
                "/io/continuum/broker/metadata/internal/MetadataParserFuzzTestInputs/metadata/regression-code-object-loses-place")) {
            body = in.readAllBytes();
        }
        int events = 0;
        try (MetadataParser.EventReader r = new MetadataParser(Limits.SPEC).events(new ByteArrayInputStream(body))) {
            while (r.next() != null) {
                events++;
            }
        }
        assertEquals(3, events);
    }

    @Test
    void skipReasonLabelsAreTheNormativeNames() {
        assertEquals(List.of("malformed_resource", "no_data", "malformed_channel", "invalid_endpoint", "oversized",
                        "channel_cap", "publisher_cap", "resource_cap", "total_cap"),
                java.util.Arrays.stream(SkipReason.values()).map(SkipReason::label).collect(Collectors.toList()));
        assertEquals(List.of("expired", "error", "closed", "timeout", "disconnected"),
                java.util.Arrays.stream(RestartReason.values()).map(RestartReason::label).collect(Collectors.toList()));
    }
}
