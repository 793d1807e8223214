package io.continuum.broker.app.runtime;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * R-BEH-8 / bus-protocol-v1.md 4.6: the first SIGTERM/SIGINT starts a graceful shutdown; a second
 * exits at once with 128 + that signal's number.
 */
class ShutdownSignalsTest {
    @Test
    void firstSignalReleasesTheWaitSecondExitsWith128PlusItsNumber() throws Exception {
        List<Integer> exits = new ArrayList<>();
        try (ShutdownSignals signals = ShutdownSignals.install(exits::add)) {
            signals.started();
            signals.onSignal("TERM", 15);
            assertEquals(15, signals.awaitFirst());
            assertEquals(List.of(), exits);
            signals.onSignal("INT", 2);
            assertEquals(List.of(130), exits);
        }
    }

    @Test
    void aSignalDuringStartUpExitsZeroAtOnce() {
        List<Integer> exits = new ArrayList<>();
        try (ShutdownSignals signals = ShutdownSignals.install(exits::add)) {
            signals.onSignal("TERM", 15); // the configuration, say, is still being read
            assertEquals(List.of(0), exits);
        }
    }
}
