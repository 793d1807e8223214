package io.continuum.broker.app.architecture;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The dependency rules of docs/architecture.md, checked on the compiled production classes (tests
 * excluded). JPMS already refuses a module that reads one it does not require; these rules also say
 * which way packages inside a module depend, which nothing else checks, and they hold on the class
 * path where the tests run.
 *
 * <p>The module graph: bus-protocol ← metadata ← relay ← app, with testing beside them. Inside the
 * relay a subscribe goes session → data stream → dial checks ({@code dial}) → transport, never back, and the
 * facade {@code EventBroker} sits on top of the packages it wires, beside the boundary types in {@code relay.api}.
 */
@AnalyzeClasses(packages = "io.continuum.broker", importOptions = ImportOption.DoNotIncludeTests.class)
class ArchitectureTest {
    private static final String PROTOCOL = "io.continuum.broker.protocol..";
    private static final String METADATA = "io.continuum.broker.metadata..";
    private static final String RELAY = "io.continuum.broker.relay..";
    private static final String APP = "io.continuum.broker.app..";
    private static final String TESTING = "io.continuum.broker.testing..";
    private static final String DEMO = "io.continuum.broker.demo..";
    private static final String BENCH = "io.continuum.broker.bench..";
    private static final String H2 = "io.continuum.broker.h2..";
    private static final String EVENT = "io.continuum.broker.event..";

    @ArchTest
    static final ArchRule productionNeverReachesTheTestPeers = noClasses()
            .that().resideInAnyPackage(PROTOCOL, METADATA, RELAY, APP)
            .should().dependOnClassesThat().resideInAnyPackage(TESTING, DEMO, BENCH)
            .because("the test peers, the demo and the benchmarks are never part of the product");

    @ArchTest
    static final ArchRule theFrameCodecIsBelowEverything = noClasses()
            .that().resideInAPackage(H2)
            .should().dependOnClassesThat().resideInAnyPackage(PROTOCOL, EVENT, METADATA, RELAY, APP, TESTING, DEMO,
                    BENCH)
            .because("the HTTP/2 frame codec is shared by the transport and the test peers below both: "
                    + "a dependency upward would be a cycle");

    @ArchTest
    static final ArchRule theProtocolIsTheBottom = noClasses()
            .that().resideInAPackage(PROTOCOL)
            .should().dependOnClassesThat().resideInAnyPackage(METADATA, RELAY, APP)
            .because("bus-protocol is the wire format alone, without I/O");

    @ArchTest
    static final ArchRule metadataKnowsNothingOfTheRelay = noClasses()
            .that().resideInAPackage(METADATA)
            .should().dependOnClassesThat().resideInAnyPackage(RELAY, APP)
            .because("the metadata view is asked by the relay, it never calls it");

    @ArchTest
    static final ArchRule theMetadataApiIsTheMetadataBottom = noClasses()
            .that().resideInAPackage("io.continuum.broker.metadata")
            .should().dependOnClassesThat().resideInAnyPackage(
                    "io.continuum.broker.metadata.internal..", "io.continuum.broker.metadata.watch..")
            .because("the relay and the app read the view through these types alone; the parser, the catalog"
                    + " and the watch loop are built on them, never the other way");

    @ArchTest
    static final ArchRule theMetadataInternalsNeverReachTheWatch = noClasses()
            .that().resideInAPackage("io.continuum.broker.metadata.internal..")
            .should().dependOnClassesThat().resideInAPackage("io.continuum.broker.metadata.watch..")
            .because("parsing and the catalog work on whatever bytes they are given; only the watch talks to"
                    + " the API server");

    @ArchTest
    static final ArchRule theRelayKnowsNothingOfTheApp = noClasses()
            .that().resideInAPackage(RELAY)
            .should().dependOnClassesThat().resideInAPackage(APP)
            .because("app builds the relay from configuration and observes it through interfaces");

    @ArchTest
    static final ArchRule theTransportIsTheRelaysBottom = noClasses()
            .that().resideInAPackage("io.continuum.broker.relay.transport..")
            .should().dependOnClassesThat().resideInAnyPackage(
                    "io.continuum.broker.relay", "io.continuum.broker.relay.session..", "io.continuum.broker.relay.stream..",
                    "io.continuum.broker.relay.loop..", "io.continuum.broker.relay.dial..")
            .because("the transport carries HTTP/2 streams and knows neither sessions nor targets");

    @ArchTest
    static final ArchRule dialChecksNeverCallBackIntoTheSession = noClasses()
            .that().resideInAPackage("io.continuum.broker.relay.dial..")
            .should().dependOnClassesThat().resideInAnyPackage(
                    "io.continuum.broker.relay.session..", "io.continuum.broker.relay.stream..",
                    "io.continuum.broker.relay.loop..", "io.continuum.broker.relay.transport..")
            .because("a dial check answers one question and returns; it holds no session and no stream");

    @ArchTest
    static final ArchRule aStreamNeverReachesItsSessionOrTheLoop = noClasses()
            .that().resideInAPackage("io.continuum.broker.relay.stream..")
            .should().dependOnClassesThat().resideInAnyPackage(
                    "io.continuum.broker.relay.session..", "io.continuum.broker.relay.loop..")
            .because("a data stream asks its session only through StreamContext; reaching the session would let"
                    + " it call back up into the handshake, the drain or another stream");

    @ArchTest
    static final ArchRule aSessionNeverReachesTheLoop = noClasses()
            .that().resideInAPackage("io.continuum.broker.relay.session..")
            .should().dependOnClassesThat().resideInAPackage("io.continuum.broker.relay.loop..")
            .because("one attempt ends with a SessionOutcome and returns; what comes next (backoff, reconnect,"
                    + " death) is the loop's alone");

    /*
     * Every package is a slice of its own, with no exception: metadata's internal package uses the module's
     * API types, and the running view (metadata.watch) sits above both.
     */
    @ArchTest
    static final ArchRule packagesDependOneWay = slices()
            .matching("io.continuum.broker.(**)")
            .should().beFreeOfCycles()
            .because("two packages that use each other are one package in two places: a change to either"
                    + " means reading both");
}
