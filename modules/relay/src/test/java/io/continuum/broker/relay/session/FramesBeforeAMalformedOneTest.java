package io.continuum.broker.relay.session;

import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.FrameCodec;
import io.continuum.broker.relay.BrokerHarness;
import io.continuum.broker.testing.router.RawBusRouter;
import io.continuum.broker.testing.router.RawBusRouter.Windows;
import org.junit.jupiter.api.Test;

import static io.continuum.broker.relay.BrokerHarness.WAIT;
import static io.continuum.broker.testing.await.Poll.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Issue 54 item 5, docs/protocol.md decision 17: frames that come before a malformed one in the same read are acted
 * on, whatever the chunking. A terminal {@code superseded} followed by garbage in one DATA frame ends the session as
 * {@code terminal_error}; before, the reader decoded the chunk as a list, the exception dropped the error frame and
 * the session ended {@code protocol_error}.
 */
class FramesBeforeAMalformedOneTest {
    @Test
    void aTerminalErrorThenAMalformedFrameInOneReadEndsTheSessionAsTerminalError() throws Exception {
        try (BrokerHarness.RawPeerBroker raw = BrokerHarness.RawPeerBroker.start(c -> c)) {
            RawBusRouter session = RawBusRouter.accept(raw.peer(), WAIT, Windows.OPEN_SESSION_ONLY).sendSessionHead();
            session.send(RawBusRouter.welcome("raw"));
            await(() -> raw.metrics().connected(), "welcomed");
            session.sendPacked(FrameCodec.encode(new Frame.ErrorFrame(Code.SUPERSEDED, "another broker", true)),
                    FrameCodec.encodeJson("{\"type\":\"subscribe\",\"stream_id\":0}"));
            await(() -> raw.metrics().get("session_ends_total{reason=terminal_error}")
                    + raw.metrics().get("session_ends_total{reason=protocol_error}") == 1, "the session ended");
            assertEquals(1, raw.metrics().get("session_ends_total{reason=terminal_error}"));
            assertEquals(0, raw.metrics().get("session_ends_total{reason=protocol_error}"));
        }
    }
}
