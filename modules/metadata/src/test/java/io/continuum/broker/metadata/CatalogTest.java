package io.continuum.broker.metadata;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.continuum.broker.metadata.internal.Catalog;
import io.continuum.broker.metadata.internal.Limits;
import io.continuum.broker.metadata.internal.MetadataParser;
import io.continuum.broker.metadata.internal.ParsedResource;
import io.continuum.broker.metadata.internal.Snapshot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The snapshot's reference counting and caps under watch updates (R-META 3, 6). */
class CatalogTest {
    private final CountingMetrics metrics = new CountingMetrics();
    private final Catalog catalog = new Catalog(Limits.SPEC, metrics);
    private final MetadataParser parser = new MetadataParser(Limits.SPEC);

    private ParsedResource parse(String json) throws IOException {
        List<ParsedResource> out = new ArrayList<>();
        parser.readList(new ByteArrayInputStream(("{\"items\":[" + json + "]}").getBytes(StandardCharsets.UTF_8)),
                out::add);
        return out.getFirst();
    }

    /** 256 resources of 256 distinct publishers each: exactly the 65,536 cap, "w{i}" on host 10.0.{i/256}.{i%256}. */
    private void fillToTheCap(int firstResourcePublishers) throws IOException {
        Catalog.Listing listing = catalog.startListing("ns");
        for (int i = 0; i < 256; i++) {
            int count = i == 0 ? firstResourcePublishers : 256;
            listing.add(parse(MetadataParserTest.resourceWithPorts("w" + i, "10.1." + i + ".1", 1, count)));
        }
        // top up with a resource that brings the total to exactly 65,536
        int missing = 256 - firstResourcePublishers;
        if (missing > 0) {
            listing.add(parse(MetadataParserTest.resourceWithPorts("filler", "10.2.0.1", 1, missing)));
        }
        Snapshot s = listing.commit();
        assertEquals(65_536, s.totalReferences());
        assertEquals(Map.of(), metrics.skips());
    }

    /**
     * R-META 6: at the cap, an update that brings new publishers first removes the resource's previous
     * advertisement, then keeps the new ones that fit; the rest are total_cap. Nothing stale survives.
     */
    @Test
    void updateAtTheCapRemovesThePreviousAdvertisementFirst() throws IOException {
        fillToTheCap(100);
        assertTrue(catalog.snapshot().advertises(PublisherKey.of("dynamo", "10.1.0.1", 50)));

        catalog.upsert("ns", parse(MetadataParserTest.resourceWithPorts("w0", "10.3.0.1", 1, 200)));

        Snapshot s = catalog.snapshot();
        for (int port = 1; port <= 100; port++) {
            assertFalse(s.advertises(PublisherKey.of("dynamo", "10.1.0.1", port)), "stale " + port);
            assertTrue(s.advertises(PublisherKey.of("dynamo", "10.3.0.1", port)), "new " + port);
        }
        assertFalse(s.advertises(PublisherKey.of("dynamo", "10.3.0.1", 101)));
        assertEquals(65_536, s.totalReferences());
        assertEquals(100, s.held("ns").resources().get("w0").size());
        assertEquals(Map.of(SkipReason.TOTAL_CAP, 100), metrics.skips());
    }

    /** A brand-new resource at the cap is held with no publishers (all total_cap). */
    @Test
    void newResourceAtTheCapAdvertisesNothing() throws IOException {
        fillToTheCap(256);
        catalog.upsert("ns", parse(MetadataParserTest.resourceWithPorts("late", "10.4.0.1", 1, 3)));
        Snapshot s = catalog.snapshot();
        assertFalse(s.advertises(PublisherKey.of("dynamo", "10.4.0.1", 1)));
        assertEquals(0, s.held("ns").resources().get("late").size());
        assertEquals(Map.of(SkipReason.TOTAL_CAP, 3), metrics.skips());
        // deleting a full resource makes room again
        catalog.delete("ns", "w1");
        catalog.upsert("ns", parse(MetadataParserTest.resourceWithPorts("late", "10.4.0.1", 1, 3)));
        assertTrue(catalog.snapshot().advertises(PublisherKey.of("dynamo", "10.4.0.1", 3)));
    }

    /** Reference counts: a publisher advertised by two resources survives the deletion of one. */
    @Test
    void duplicatesAcrossResourcesAreReferenceCounted() throws IOException {
        Catalog.Listing listing = catalog.startListing("ns");
        listing.add(parse(MetadataParserTest.resourceWithPorts("a", "10.5.0.1", 1, 2)));
        listing.add(parse(MetadataParserTest.resourceWithPorts("b", "10.5.0.1", 2, 2)));
        Snapshot s = listing.commit();
        assertEquals(4, s.totalReferences());
        assertEquals(3, s.publisherCount());
        PublisherKey shared = PublisherKey.of("dynamo", "10.5.0.1", 2);

        catalog.delete("ns", "a");
        assertTrue(catalog.snapshot().advertises(shared));
        assertFalse(catalog.snapshot().advertises(PublisherKey.of("dynamo", "10.5.0.1", 1)));
        catalog.delete("ns", "b");
        assertFalse(catalog.snapshot().advertises(shared));
        assertEquals(0, catalog.snapshot().totalReferences());
        assertEquals(0, catalog.snapshot().resourceCount());
    }

    /** R-META 3 on watch events: a new resource past 16,384 in a namespace is resource_cap; updates still apply. */
    @Test
    void resourceCapOnWatchAdds() throws IOException {
        Catalog.Listing listing = catalog.startListing("ns");
        for (int i = 0; i < 16_384; i++) {
            listing.add(parse("{\"metadata\":{\"name\":\"w" + i + "\"},\"spec\":{\"data\":{}}}"));
        }
        listing.commit();
        Snapshot before = catalog.snapshot();
        catalog.upsert("ns", parse(MetadataParserTest.resourceWithPorts("extra", "10.6.0.1", 1, 1)));
        assertSame(before, catalog.snapshot());
        assertEquals(1, metrics.skipCount(SkipReason.RESOURCE_CAP));
        catalog.upsert("ns", parse(MetadataParserTest.resourceWithPorts("w7", "10.6.0.1", 1, 1)));
        assertNotSame(before, catalog.snapshot());
        assertTrue(catalog.snapshot().advertises(PublisherKey.of("dynamo", "10.6.0.1", 1)));
        // another namespace has its own 16,384
        catalog.upsert("other", parse(MetadataParserTest.resourceWithPorts("x", "10.6.0.2", 1, 1)));
        assertEquals(16_385, catalog.snapshot().resourceCount());
    }

    /** 256 resources of 256 publishers each on hosts 10.{octet}.{i}.1: the whole 65,536 cap. */
    private void addFullCap(Catalog.Listing listing, int octet) throws IOException {
        for (int i = 0; i < 256; i++) {
            listing.add(parse(MetadataParserTest.resourceWithPorts("w" + i, "10." + octet + "." + i + ".1", 1, 256)));
        }
    }

    /**
     * R-META 6 with namespaces listing concurrently: the cap is shared while paging, so two listings in
     * progress never keep more than 65,536 references together, and each reference over it is counted
     * total_cap once (while paging, not again at the commit).
     */
    @Test
    void listingsInProgressShareTheTotalCap() throws IOException {
        Catalog.Listing a = catalog.startListing("a");
        Catalog.Listing b = catalog.startListing("b");
        addFullCap(a, 1);
        b.add(parse(MetadataParserTest.resourceWithPorts("late", "10.2.0.1", 1, 10)));
        assertEquals(Map.of(SkipReason.TOTAL_CAP, 10), metrics.skips());
        a.commit();
        Snapshot s = b.commit();
        assertEquals(65_536, s.totalReferences());
        assertEquals(0, s.held("b").resources().get("late").size());
        assertFalse(s.advertises(PublisherKey.of("dynamo", "10.2.0.1", 1)));
        assertEquals(Map.of(SkipReason.TOTAL_CAP, 10), metrics.skips());
    }

    /** A list pass that fails (its listing closed, never committed) gives its reservation back. */
    @Test
    void anAbandonedListingReleasesItsShareOfTheCap() throws IOException {
        Catalog.Listing failed = catalog.startListing("a");
        addFullCap(failed, 1);
        failed.close();
        Catalog.Listing b = catalog.startListing("b");
        b.add(parse(MetadataParserTest.resourceWithPorts("w", "10.2.0.1", 1, 10)));
        assertEquals(10, b.commit().totalReferences());
        assertEquals(Map.of(), metrics.skips());
    }

    /**
     * A namespace that relists claims the larger of what it holds and what its new listing has kept, so
     * the old snapshot (still served, R-META 2) and the listings in progress stay within the cap, and
     * the relist, once it commits, is not cut by a namespace that paged beside it.
     */
    @Test
    void aRelistingNamespaceClaimsTheLargerOfHeldAndReserved() throws IOException {
        Catalog.Listing first = catalog.startListing("a");
        for (int i = 0; i < 40; i++) {
            first.add(parse(MetadataParserTest.resourceWithPorts("w" + i, "10.1." + i + ".1", 1, 256)));
        }
        first.commit(); // a holds 10,240
        Catalog.Listing relist = catalog.startListing("a");
        for (int i = 0; i < 150; i++) {
            relist.add(parse(MetadataParserTest.resourceWithPorts("w" + i, "10.1." + i + ".1", 1, 256)));
        } // a's relist has reserved 38,400
        Catalog.Listing b = catalog.startListing("b");
        for (int i = 0; i < 150; i++) {
            b.add(parse(MetadataParserTest.resourceWithPorts("y" + i, "10.4." + i + ".1", 1, 256)));
        }
        // b kept 65,536 - 38,400 = 27,136 while paging; the rest is total_cap
        assertEquals(38_400 - 27_136, metrics.skipCount(SkipReason.TOTAL_CAP));
        assertEquals(10_240 + 27_136, b.commit().totalReferences());
        Snapshot s = relist.commit();
        assertEquals(65_536, s.totalReferences());
        assertEquals(38_400, s.held("a").references());
        assertEquals(38_400 - 27_136, metrics.skipCount(SkipReason.TOTAL_CAP));
    }

    /** Many namespaces paging at once on their own threads keep exactly the cap, counting each excess once. */
    @Test
    void concurrentListingsKeepExactlyTheCap() throws Exception {
        List<ParsedResource> items = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            items.add(parse(MetadataParserTest.resourceWithPorts("w" + i, "10.7." + i + ".1", 1, 256)));
        }
        int namespaces = 8; // 8 x 25,600 offered
        java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int n = 0; n < namespaces; n++) {
            String ns = "ns" + n;
            threads.add(Thread.ofVirtual().start(() -> {
                try (Catalog.Listing listing = catalog.startListing(ns)) {
                    go.await();
                    items.forEach(listing::add);
                    listing.commit();
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            }));
        }
        go.countDown();
        for (Thread t : threads) {
            t.join();
        }
        Snapshot s = catalog.snapshot();
        assertEquals(65_536, s.totalReferences());
        assertEquals(namespaces * 25_600 - 65_536, metrics.skipCount(SkipReason.TOTAL_CAP));
        assertEquals(namespaces * 100, s.resourceCount());
    }
}
