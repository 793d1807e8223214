package io.continuum.broker.testing.secrets;

import java.util.logging.Level;
import java.util.logging.Logger;

import io.continuum.broker.testing.leaks.OnlyInTestKit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

/**
 * The credential scan can fail: a registered credential in a debug log record, a stack trace, standard output
 * (even split across writes) or a test's own exception fails the test, and no failure message shows it.
 */
class SecretScanTest {
    static final String SECRET = Secrets.register("scan-self-test-credential-0123456789abcdef");

    private static String failureOf(Class<?> sample) {
        Events events = EngineTestKit.engine("junit-jupiter")
                .configurationParameter(OnlyInTestKit.PARAMETER, "true")
                .selectors(selectClass(sample))
                .execute()
                .testEvents();
        assertEquals(1, events.failed().count(), "the sample test fails");
        Throwable t = events.failed().stream().findFirst().orElseThrow()
                .getPayload(TestExecutionResult.class).orElseThrow().getThrowable().orElseThrow();
        String text = Secrets.stackTrace(t);
        assertFalse(text.contains(SECRET), "the failure never shows the credential: " + text);
        assertTrue(text.contains("<credential>"), text);
        return t.getMessage();
    }

    @Test
    void aCredentialInADebugRecordFailsTheTest() {
        assertTrue(failureOf(LogsAtFine.class).contains("log record FINE leaky.sample"));
    }

    @Test
    void aCredentialInALoggedStackTraceFailsTheTest() {
        assertTrue(failureOf(LogsAnException.class).contains("log record WARNING"));
    }

    @Test
    void aCredentialOnStandardOutputSplitAcrossWritesFailsTheTest() {
        assertTrue(failureOf(PrintsInPieces.class).contains("System.out"));
    }

    @Test
    void aTestFailingWithTheCredentialInItsExceptionFailsRedacted() {
        assertTrue(failureOf(ThrowsIt.class).contains("exception that contains a registered credential"));
    }

    @Test
    void aCleanTestPasses() {
        Events events = EngineTestKit.engine("junit-jupiter")
                .configurationParameter(OnlyInTestKit.PARAMETER, "true")
                .selectors(selectClass(Clean.class))
                .execute()
                .testEvents();
        assertEquals(1, events.succeeded().count());
    }

    @Test
    void bodiesAndExceptionsAreCheckedOnDemandWithoutShowingTheCredential() {
        Secrets.assertAbsent("GET /metrics", "continuum_event_broker_session_connected 1\n");
        AssertionError e = assertThrows(AssertionError.class,
                () -> Secrets.assertAbsent("GET /readyz", "{\"token\":\"" + SECRET + "\"}"));
        assertTrue(e.getMessage().contains("GET /readyz") && !e.getMessage().contains(SECRET), e.getMessage());
        assertThrows(AssertionError.class, () -> Secrets.assertAbsent("exception",
                new IllegalStateException("wrapped", new RuntimeException("bearer " + SECRET))));
        assertThrows(IllegalArgumentException.class, () -> Secrets.register("short"));
    }

    @OnlyInTestKit
    @ExtendWith(SecretScan.class)
    static class LogsAtFine {
        @Test
        void logs() {
            Logger.getLogger("leaky.sample").fine("authorization: Bearer " + SECRET);
        }
    }

    @OnlyInTestKit
    @ExtendWith(SecretScan.class)
    static class LogsAnException {
        @Test
        void logs() {
            Logger.getLogger("leaky.sample").log(Level.WARNING, "failed",
                    new IllegalStateException("outer", new RuntimeException("token " + SECRET)));
        }
    }

    @OnlyInTestKit
    @ExtendWith(SecretScan.class)
    static class PrintsInPieces {
        @Test
        void prints() {
            int half = SECRET.length() / 2;
            System.out.print("header value " + SECRET.substring(0, half));
            System.out.flush();
            System.out.print(SECRET.substring(half) + " end\n");
            System.out.flush();
        }
    }

    @OnlyInTestKit
    @ExtendWith(SecretScan.class)
    static class ThrowsIt {
        @Test
        void fails() {
            throw new IllegalStateException("could not authenticate with " + SECRET);
        }
    }

    @OnlyInTestKit
    @ExtendWith(SecretScan.class)
    static class Clean {
        @Test
        void quiet() {
            Logger.getLogger("quiet.sample").fine("nothing to see");
            System.out.println("nothing to see");
        }
    }
}
