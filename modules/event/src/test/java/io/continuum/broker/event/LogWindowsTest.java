package io.continuum.broker.event;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

/** Fixed windows per key: the first event of a window is logged, the rest counted and reported by the next one. */
class LogWindowsTest {
    private static final long SECOND = 1_000_000_000L;

    private final AtomicLong now = new AtomicLong(42 * SECOND);
    private final LogWindows<String> windows = new LogWindows<>(now::get, Duration.ofSeconds(60));

    @Test
    void theFirstEventOfAWindowIsLoggedAndTheRestAreCountedForTheNextWindowsFirstLine() {
        assertEquals(0, windows.admit("a"), "the first event ever: logged, nothing suppressed before it");
        for (int i = 0; i < 199; i++) {
            now.addAndGet(SECOND / 100);
            assertEquals(LogWindows.SUPPRESS, windows.admit("a"));
        }
        now.addAndGet(60 * SECOND);
        assertEquals(199, windows.admit("a"), "the next window's first line says how many were left out");
        assertEquals(LogWindows.SUPPRESS, windows.admit("a"));
        now.addAndGet(60 * SECOND);
        assertEquals(1, windows.admit("a"));
    }

    @Test
    void eachKeyHasItsOwnWindow() {
        assertEquals(0, windows.admit("a"));
        assertEquals(0, windows.admit("b"), "another key is not held by a's window");
        assertEquals(LogWindows.SUPPRESS, windows.admit("a"));
        assertEquals(LogWindows.SUPPRESS, windows.admit("b"));
    }

    @Test
    void aWindowIsFixedFromItsFirstEventNotSlidByLaterOnes() {
        assertEquals(0, windows.admit("a"));
        now.addAndGet(59 * SECOND);
        assertEquals(LogWindows.SUPPRESS, windows.admit("a"));
        now.addAndGet(SECOND);
        assertEquals(1, windows.admit("a"), "60 s after the window opened, whatever came in between");
    }

    @Test
    void aWindowMustBePositive() {
        assertThrows(IllegalArgumentException.class, () -> new LogWindows<String>(now::get, Duration.ZERO));
    }
}
