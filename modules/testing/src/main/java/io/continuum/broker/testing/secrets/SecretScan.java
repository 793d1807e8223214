package io.continuum.broker.testing.secrets;

import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.LifecycleMethodExecutionExceptionHandler;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

/**
 * The test-wide credential check (R-SEC-14): while any test runs, every JUL record of every logger
 * (FINE and above by default; {@code -Dsecretscan.level=ALL} for everything) and every byte written to
 * {@code System.out} and {@code System.err} is scanned for the {@link Secrets#register registered} credentials.
 * A test during which one appeared fails (after its {@code @AfterEach} methods), naming where, redacted; output
 * between tests fails the class. A test that fails with an exception containing a credential fails with a
 * redacted message instead, so the report never shows it.
 * <p>
 * Applied to every test class of a module by JUnit's extension auto-detection: the module's test resources
 * hold {@code META-INF/services/org.junit.jupiter.api.extension.Extension} naming this class and
 * {@code junit.jupiter.extensions.autodetection.enabled = true} in {@code junit-platform.properties}.
 * <p>
 * Limits: {@code LogManager.reset()} (the app's logging set-up does it) removes every handler; the scan
 * re-attaches its handler before and after each test, and records logged in between reach only the app's own
 * handler, whose stream the test owns and checks. Output written through a stream captured before the scan
 * started (JUL's default console handler holds the original {@code System.err}) is seen as a log record
 * instead. The root logger's level is lowered to the scan level for the rest of the JVM (handlers keep theirs).
 */
public final class SecretScan implements BeforeAllCallback, BeforeEachCallback, AfterEachCallback, AfterAllCallback,
        TestExecutionExceptionHandler, LifecycleMethodExecutionExceptionHandler {
    private static final ConcurrentLinkedQueue<String> LEAKS = new ConcurrentLinkedQueue<>();
    private static final Level LEVEL = Level.parse(System.getProperty("secretscan.level", "FINE"));
    private static final LogCapture HANDLER = new LogCapture();
    private static volatile boolean streamsInstalled;

    /** Created by JUnit. */
    public SecretScan() {
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        install();
        LEAKS.clear();
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        install();
        List<String> between = drain();
        if (!between.isEmpty()) {
            // Printed between tests (a @BeforeAll, or a thread of an earlier test): the class fails at the end.
            context.getParent().ifPresent(p -> store(p).put("between", between));
        }
    }

    @Override
    public void afterEach(ExtensionContext context) {
        install();
        fail("during this test", drain());
    }

    @Override
    public void afterAll(ExtensionContext context) {
        List<String> leaks = new ArrayList<>();
        @SuppressWarnings("unchecked")
        List<String> between = store(context).remove("between", List.class);
        if (between != null) {
            leaks.addAll(between);
        }
        leaks.addAll(drain());
        fail("in this class outside its tests", leaks);
    }

    @Override
    public void handleTestExecutionException(ExtensionContext context, Throwable throwable) throws Throwable {
        throw redacted(throwable);
    }

    @Override
    public void handleBeforeAllMethodExecutionException(ExtensionContext context, Throwable t) throws Throwable {
        throw redacted(t);
    }

    @Override
    public void handleBeforeEachMethodExecutionException(ExtensionContext context, Throwable t) throws Throwable {
        throw redacted(t);
    }

    @Override
    public void handleAfterEachMethodExecutionException(ExtensionContext context, Throwable t) throws Throwable {
        throw redacted(t);
    }

    @Override
    public void handleAfterAllMethodExecutionException(ExtensionContext context, Throwable t) throws Throwable {
        throw redacted(t);
    }

    private static Throwable redacted(Throwable t) {
        String trace = Secrets.stackTrace(t);
        if (!Secrets.containsAny(trace)) {
            return t;
        }
        return new AssertionError("the test failed with an exception that contains a registered credential"
                + " (the original is withheld; redacted): " + Secrets.redact(trace));
    }

    private static void fail(String when, List<String> leaks) {
        if (!leaks.isEmpty()) {
            throw new AssertionError("a registered credential appeared " + when + " (" + leaks.size()
                    + " times); first ones:\n  " + String.join("\n  ", leaks.subList(0, Math.min(5, leaks.size()))));
        }
    }

    private static List<String> drain() {
        List<String> out = new ArrayList<>();
        String s;
        while ((s = LEAKS.poll()) != null) {
            out.add(s);
        }
        return out;
    }

    private static ExtensionContext.Store store(ExtensionContext context) {
        return context.getStore(ExtensionContext.Namespace.create(SecretScan.class, context.getUniqueId()));
    }

    /** Idempotent: the JUL handler on the root logger, the root level, and the stream tees. */
    static void install() {
        Logger root = Logger.getLogger("");
        boolean attached = false;
        for (Handler h : root.getHandlers()) {
            attached |= h == HANDLER;
        }
        if (!attached) {
            root.addHandler(HANDLER);
        }
        if (root.getLevel() == null || root.getLevel().intValue() > LEVEL.intValue()) {
            root.setLevel(LEVEL);
        }
        synchronized (SecretScan.class) {
            if (!streamsInstalled) {
                System.setOut(new PrintStream(new ScanningStream(System.out, "System.out"), true,
                        StandardCharsets.UTF_8));
                System.setErr(new PrintStream(new ScanningStream(System.err, "System.err"), true,
                        StandardCharsets.UTF_8));
                streamsInstalled = true;
            }
        }
    }

    /** Records a leak found by a capture. */
    static void leak(String where, CharSequence text) {
        LEAKS.add(where + ": " + Secrets.excerpt(text));
    }

    /** Every JUL record, formatted as a handler would, plus raw parameters and the stack trace. */
    private static final class LogCapture extends Handler {
        private final SimpleFormatter formatter = new SimpleFormatter();

        LogCapture() {
            setLevel(Level.ALL);
        }

        @Override
        public void publish(LogRecord record) {
            if (Secrets.registered().isEmpty()) {
                return;
            }
            StringBuilder text = new StringBuilder();
            try {
                text.append(formatter.formatMessage(record));
            } catch (RuntimeException e) {
                text.append(record.getMessage());
            }
            text.append('\n').append(record.getMessage());
            if (record.getParameters() != null) {
                for (Object p : record.getParameters()) {
                    text.append(' ').append(p);
                }
            }
            if (record.getThrown() != null) {
                text.append('\n').append(Secrets.stackTrace(record.getThrown()));
            }
            if (Secrets.containsAny(text)) {
                leak("log record " + record.getLevel() + " " + record.getLoggerName(), text);
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    }

    /**
     * Passes every byte through and scans it; keeps the tail of the previous write so a credential split across
     * writes is still found.
     */
    private static final class ScanningStream extends OutputStream {
        private final PrintStream target;
        private final String where;
        private String tail = "";

        ScanningStream(PrintStream target, String where) {
            this.target = target;
            this.where = where;
        }

        @Override
        public void write(int b) {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            target.write(b, off, len);
            scan(new String(b, off, len, StandardCharsets.ISO_8859_1));
        }

        @Override
        public void flush() {
            target.flush();
        }

        private synchronized void scan(String chunk) {
            List<String> secrets = Secrets.registered();
            if (secrets.isEmpty()) {
                return;
            }
            String window = tail + chunk;
            int longest = 0;
            for (String secret : secrets) {
                String bytes = new String(secret.getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1);
                longest = Math.max(longest, bytes.length());
                if (window.contains(bytes)) {
                    leak(where, new String(window.getBytes(StandardCharsets.ISO_8859_1), StandardCharsets.UTF_8));
                    window = "";
                    break;
                }
            }
            tail = window.length() < longest ? window : window.substring(window.length() - longest + 1);
        }
    }
}
