package io.continuum.broker.relay;

import java.util.logging.Level;
import java.util.logging.Logger;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The credential scan every broker harness runs can fail: a leak in a message or a stack trace is caught. */
class CredentialScanTest {
    private static final String SECRET = "scan-test-credential-0123456789abcdef";

    @Test
    void aCredentialInADebugMessageFailsTheScanWithoutPrintingIt() {
        CredentialScan scan = CredentialScan.install(SECRET);
        Logger.getLogger("leaky").fine("header authorization: Bearer " + SECRET);
        AssertionError e = assertThrows(AssertionError.class, scan::closeAndAssertClean);
        assertTrue(!e.getMessage().contains(SECRET) && e.getMessage().contains("<credential>"), e.getMessage());
    }

    @Test
    void aCredentialInAStackTraceFailsTheScan() {
        CredentialScan scan = CredentialScan.install(SECRET);
        Logger.getLogger("leaky").log(Level.WARNING, "failed", new IllegalStateException("token " + SECRET));
        assertThrows(AssertionError.class, scan::closeAndAssertClean);
    }
}
