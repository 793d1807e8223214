package io.continuum.broker.relay;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Captures every log record (message, parameters and stack traces) while a broker runs, and fails
 * the test if the credential appears anywhere in them (R-SEC-14: never logged, never in an
 * exception message).
 */
final class CredentialScan extends Handler {
    private final String credential;
    private final List<String> leaks = new ArrayList<>();
    private final Logger root = Logger.getLogger("");
    private final Level previousLevel = root.getLevel();

    private CredentialScan(String credential) {
        this.credential = credential;
        setLevel(Level.ALL);
    }

    static CredentialScan install(String credential) {
        CredentialScan scan = new CredentialScan(credential);
        scan.root.addHandler(scan);
        // Debug records too: a credential in a FINE message is still a leak.
        scan.root.setLevel(Level.FINE);
        return scan;
    }

    @Override
    public void publish(LogRecord record) {
        StringBuilder text = new StringBuilder(String.valueOf(record.getMessage()));
        if (record.getParameters() != null) {
            for (Object p : record.getParameters()) {
                text.append(' ').append(p);
            }
        }
        if (record.getThrown() != null) {
            StringWriter trace = new StringWriter();
            record.getThrown().printStackTrace(new PrintWriter(trace));
            text.append(trace);
        }
        if (text.indexOf(credential) >= 0) {
            synchronized (leaks) {
                leaks.add(record.getLoggerName() + ": " + record.getMessage());
            }
        }
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
        root.removeHandler(this);
        root.setLevel(previousLevel);
    }

    void closeAndAssertClean() {
        close();
        synchronized (leaks) {
            if (!leaks.isEmpty()) {
                throw new AssertionError("the credential appeared in " + leaks.size() + " log records, first: "
                        + leaks.getFirst().replace(credential, "<credential>"));
            }
        }
    }
}
