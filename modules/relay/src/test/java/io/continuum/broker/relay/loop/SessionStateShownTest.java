package io.continuum.broker.relay.loop;

import org.junit.jupiter.api.Test;

import io.continuum.broker.relay.api.SessionState;

import static org.junit.jupiter.api.Assertions.assertEquals;
import io.continuum.broker.relay.session.SessionLife;

/** {@code /statusz}'s state comes from the relay typed: every pair of loop and attempt states has exactly one answer. */
class SessionStateShownTest {
    @Test
    void aSessionsStateWinsWhenItIsWelcomedOrDraining() {
        for (SessionState loop : SessionState.values()) {
            assertEquals(SessionState.CONNECTED, SessionLoop.shown(loop, SessionLife.State.WELCOMED));
            assertEquals(SessionState.DRAINING, SessionLoop.shown(loop, SessionLife.State.DRAINING));
        }
    }

    @Test
    void otherwiseTheLoopsStateDecides() {
        assertEquals(SessionState.SYNCING, SessionLoop.shown(SessionState.SYNCING, null));
        assertEquals(SessionState.CONNECTING, SessionLoop.shown(SessionState.CONNECTING, null));
        assertEquals(SessionState.CONNECTING,
                SessionLoop.shown(SessionState.CONNECTING, SessionLife.State.CONNECTING));
        assertEquals(SessionState.CONNECTING,
                SessionLoop.shown(SessionState.CONNECTING, SessionLife.State.AWAITING_WELCOME));
        assertEquals(SessionState.BACKOFF, SessionLoop.shown(SessionState.BACKOFF, SessionLife.State.ENDED));
        assertEquals(SessionState.IDLE, SessionLoop.shown(SessionState.IDLE, null));
    }
}
