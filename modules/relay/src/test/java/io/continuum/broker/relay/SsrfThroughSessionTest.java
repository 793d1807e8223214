package io.continuum.broker.relay;

import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;

import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.FrameCodec;
import io.continuum.broker.relay.api.Cidr;
import io.continuum.broker.relay.dial.AcceptRecorder;
import io.continuum.broker.testing.bus.RouterSession;
import io.continuum.broker.testing.leaks.LeakCheck;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static io.continuum.broker.relay.BrokerHarness.NAMESPACE;
import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/**
 * A few rows of the SSRF matrix ({@code target.SsrfMatrixTest}) end to end, through a real session: the test
 * router sends {@code subscribe}, the broker answers {@code stream_refused} with the row's code on the wire,
 * counts {@code refusals_total{code}}, and no connection reaches this host (a wildcard listener that records
 * accepts gets the target's port). Every target is advertised, so the refusal comes from the host syntax, the
 * namespace or the address filter (bus-protocol-v1.md section 5 rows 4-9; R-SEC 1-9a).
 */
@ExtendWith(LeakCheck.class)
@LeakCheck.IgnoreThreads(BrokerHarness.ROUTER_THREADS)
class SsrfThroughSessionTest {
    @RegisterExtension
    static final AcceptRecorder.PerClass listener = new AcceptRecorder.PerClass();

    static Stream<Arguments> rows() {
        return Stream.of(
                row("IPv4-mapped loopback", "", NAMESPACE, "::ffff:127.0.0.1", Code.TARGET_NOT_ALLOWED),
                row("IPv6 loopback", "", NAMESPACE, "::1", Code.TARGET_NOT_ALLOWED),
                row("AWS IPv6 metadata", "", NAMESPACE, "fd00:ec2::254", Code.TARGET_NOT_ALLOWED),
                row("0.0.0.0/0 does not unblock the unspecified address", "0.0.0.0/0", NAMESPACE, "0.0.0.0",
                        Code.TARGET_NOT_ALLOWED),
                row("127.0.0.1/32 does not unblock 127.0.0.2", "127.0.0.1/32", NAMESPACE, "127.0.0.2",
                        Code.TARGET_NOT_ALLOWED),
                row("a DNS name resolving to loopback, outside allowed_cidrs", "10.0.0.0/8", NAMESPACE, "localhost",
                        Code.TARGET_NOT_ALLOWED),
                row("hex IPv4 spelling", "127.0.0.0/8", NAMESPACE, "0x7f.1", Code.UNSUPPORTED_TARGET),
                row("a namespace the broker does not cover", "127.0.0.0/8", "kube-system", "127.0.0.1",
                        Code.TARGET_NOT_ADVERTISED));
    }

    private static Arguments row(String name, String allowed, String namespace, String host, Code code) {
        return Arguments.of(name, allowed, namespace, host, code);
    }

    @ParameterizedTest(name = "{0}: {3} with allowed_cidrs [{1}] is {4}")
    @MethodSource("rows")
    void refusedOnTheWireCountedAndNeverDialed(String name, String allowed, String namespace, String host,
                                                Code code) throws Exception {
        List<Cidr> cidrs = allowed.isEmpty() ? List.of() : Stream.of(allowed.split(" ")).map(Cidr::parse).toList();
        try (BrokerHarness h = new BrokerHarness(c -> c.allowedCidrs(cidrs), r -> r)) {
            advertise(h, namespace, host, listener.port());
            RouterSession session = started(h);
            session.subscribe(1, namespace, host, listener.port());
            assertEquals(code, assertInstanceOf(Frame.StreamRefused.class, session.awaitAnswer(1, WAIT)).code());
            assertEquals(1, h.metrics.get("refusals_total{code=" + code.wire() + "}"));
            assertEquals(List.of(), listener.acceptedBeforeSentinel(), "no connection reached this host");
        }
    }

    @ParameterizedTest(name = "port {0} is unsupported_target")
    @MethodSource("badPorts")
    void portsOutsideOneTo65535AreRefusedOnTheWire(long port) throws Exception {
        try (BrokerHarness h = new BrokerHarness(c -> c.allowedCidrs(List.of(Cidr.parse("127.0.0.0/8"))), r -> r)) {
            RouterSession session = started(h);
            // raw JSON: the port is out of range for the protocol's own target type
            session.sendRaw(FrameCodec.encodeJson("{\"type\":\"subscribe\",\"stream_id\":7,\"target\":{\"kind\":"
                    + "\"zmq_tcp\",\"namespace\":\"" + NAMESPACE + "\",\"host\":\"127.0.0.1\",\"port\":" + port + "}}"));
            Frame.StreamRefused refused = assertInstanceOf(Frame.StreamRefused.class, session.awaitAnswer(7, WAIT));
            assertEquals(Code.UNSUPPORTED_TARGET, refused.code());
            assertEquals(1, h.metrics.get("refusals_total{code=unsupported_target}"));
            assertEquals(List.of(), listener.acceptedBeforeSentinel(), "no connection reached this host");
        }
    }

    static Stream<Long> badPorts() {
        return Stream.of(0L, 65536L);
    }

    private static RouterSession started(BrokerHarness h) {
        h.start();
        return h.router.awaitSession(WAIT);
    }

    /** Advertises the target if it can be a publisher key at all (an invalid host cannot be advertised). */
    private static void advertise(BrokerHarness h, String namespace, String host, int port) {
        Consumer<String> advertiseIn = ns -> {
            try {
                h.view.advertise(ns, host, port);
            } catch (IllegalArgumentException notAKey) {
                // invalid host: nothing can advertise it, the refusal comes from row 4
            }
        };
        advertiseIn.accept(namespace);
    }
}
