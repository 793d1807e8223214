package io.continuum.broker.relay;

import org.junit.jupiter.api.Test;

import io.continuum.broker.relay.api.SessionState;
import io.continuum.broker.relay.session.BusSession;
import io.continuum.broker.relay.session.SessionLoop;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** {@code /statusz}'s state comes from the relay typed: every inner state has exactly one answer. */
class StatusStateTest {
    @Test
    void aSessionsStateWinsWhenItIsWelcomedOrDraining() {
        for (SessionLoop.State loop : SessionLoop.State.values()) {
            assertEquals(SessionState.CONNECTED, EventBroker.state(loop, BusSession.State.WELCOMED));
            assertEquals(SessionState.DRAINING, EventBroker.state(loop, BusSession.State.DRAINING));
        }
    }

    @Test
    void otherwiseTheLoopsStateDecides() {
        assertEquals(SessionState.SYNCING, EventBroker.state(SessionLoop.State.NEW, null));
        assertEquals(SessionState.SYNCING, EventBroker.state(SessionLoop.State.WAITING_FOR_SYNC, null));
        assertEquals(SessionState.CONNECTING, EventBroker.state(SessionLoop.State.CONNECTING, null));
        assertEquals(SessionState.CONNECTING,
                EventBroker.state(SessionLoop.State.SESSION, BusSession.State.AWAITING_WELCOME));
        assertEquals(SessionState.BACKOFF, EventBroker.state(SessionLoop.State.BACKING_OFF, BusSession.State.ENDED));
        assertEquals(SessionState.IDLE, EventBroker.state(SessionLoop.State.STOPPED, null));
    }
}
