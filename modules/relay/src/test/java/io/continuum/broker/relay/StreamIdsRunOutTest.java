package io.continuum.broker.relay;

import java.util.logging.Level;

import io.continuum.broker.event.EventFormatter;
import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.relay.loop.SessionLoop;
import io.continuum.broker.relay.transport.TrackingConnector;
import io.continuum.broker.testing.bus.RouterSession;
import io.continuum.broker.testing.logs.LogLines;
import io.continuum.broker.testing.net.LoopbackListener;
import org.junit.jupiter.api.Test;

import static io.continuum.broker.relay.BrokerHarness.NAMESPACE;
import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 55 item 5: client stream ids end at 2^31-1 (RFC 9113 section 5.1.1). Before the last, the broker drains the
 * session as at shutdown ({@code draining}, new subscribes refused {@code draining}, open streams finish), ends it
 * {@code drained} and reconnects at once on a new connection (no backoff: nothing failed). Before, the open after the
 * last id failed the connection ("stream ids exhausted", a protocol failure) and the session reconnected with the
 * backoff. A seam starts the first connection's ids just below the reserve.
 */
class StreamIdsRunOutTest {
    private static final int LAST_STREAM_ID = Integer.MAX_VALUE;

    @Test
    void beforeTheLastStreamIdTheSessionDrainsAndMovesToANewConnectionAtOnce() throws Exception {
        try (BrokerHarness h = new BrokerHarness();
             LogLines loop = LogLines.capture(SessionLoop.class.getName(),
                     new EventFormatter(EventFormatter.Style.LOGFMT, false), Level.INFO)) {
            // the session stream takes the first id; data stream 1 the last one below the reserve; data stream 2
            // crosses it
            h.connector.startFirstConnectionStreamIdsAt(LAST_STREAM_ID - 2 * TrackingConnector.STREAM_IDS_RESERVE - 2);
            LoopbackListener publisher = h.publisher();
            RouterSession session = h.startSession();
            BrokerHarness.OpenStream first = h.open(session, 1, publisher);
            BrokerHarness.OpenStream second = h.open(session, 2, publisher);
            Frame.Draining draining = session.await(Frame.Draining.class, f -> true, WAIT);
            assertTrue(draining.deadlineMs() > 0);
            session.subscribe(3, NAMESPACE, "127.0.0.1", publisher.port());
            assertEquals(Code.DRAINING, assertInstanceOf(Frame.StreamRefused.class, session.awaitAnswer(3, WAIT))
                    .code());

            first.upstream().close(); // the open streams finish
            second.upstream().close();
            RouterSession next = h.router.awaitSession(WAIT);
            assertEquals("broker-a", next.hello().clientId());
            await(() -> h.metrics.get("session_ends_total{reason=drained}") == 1, "drained counted");
            assertEquals(2, h.connector.connectionsOpened(), "a new connection");
            assertEquals(0, h.metrics.get("session_ends_total{reason=connection_lost}"));
            assertTrue(loop.lines().stream().anyMatch(l -> l.contains("event=reconnect_scheduled")
                    && l.contains("delay_ms=0")), String.join("\n", loop.lines()));
        }
    }
}
