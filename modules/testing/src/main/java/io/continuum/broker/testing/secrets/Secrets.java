package io.continuum.broker.testing.secrets;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The credentials the test fixtures created, for the test-wide check that none of them ever appears in logs,
 * standard output or error, exception messages, {@code /metrics} or {@code /readyz} (R-SEC-14).
 * <p>
 * Fixtures {@link #register} every credential they hand out (the in-process router registers the one it
 * accepts); {@link SecretScan}, applied to every test class, scans what the test printed and logged;
 * tests pass HTTP bodies and caught exceptions to {@link #assertAbsent}. Registrations last for the JVM: a
 * credential must never leak, in any later test either. No failure message ever contains a credential.
 */
public final class Secrets {
    /** Shorter strings would match ordinary text; no real credential is this short (32..512 bytes). */
    public static final int MIN_LENGTH = 8;
    private static final String REDACTED = "<credential>";
    private static final List<String> REGISTERED = new CopyOnWriteArrayList<>();

    private Secrets() {
    }

    /**
     * Registers a credential: from now on it must appear nowhere.
     *
     * @return the credential, for use in initializers
     * @throws IllegalArgumentException when shorter than {@link #MIN_LENGTH}
     */
    public static String register(String credential) {
        Objects.requireNonNull(credential, "credential");
        if (credential.length() < MIN_LENGTH) {
            throw new IllegalArgumentException("a credential to watch for needs at least " + MIN_LENGTH
                    + " characters, got " + credential.length());
        }
        if (!REGISTERED.contains(credential)) {
            REGISTERED.add(credential);
        }
        return credential;
    }

    /** @return every registered credential */
    public static List<String> registered() {
        return List.copyOf(REGISTERED);
    }

    /**
     * @return whether it contains a registered credential
     */
    public static boolean containsAny(CharSequence text) {
        if (text == null) {
            return false;
        }
        String s = text.toString();
        for (String secret : REGISTERED) {
            if (s.contains(secret)) {
                return true;
            }
        }
        return false;
    }

    /**
     * @return the text with every registered credential replaced by {@code <credential>}
     */
    public static String redact(CharSequence text) {
        String s = String.valueOf(text);
        for (String secret : REGISTERED) {
            s = s.replace(secret, REDACTED);
        }
        return s;
    }

    /**
     * Fails if {@code text} contains a registered credential; the message shows where, redacted.
     *
     * @param where what the text is, e.g. {@code "GET /metrics"}
     */
    public static void assertAbsent(String where, CharSequence text) {
        if (containsAny(text)) {
            throw new AssertionError("a registered credential appears in " + where + ": " + excerpt(text));
        }
    }

    /**
     * Fails if a throwable's message, stack trace, causes or suppressed exceptions contain a registered
     * credential.
     *
     * @param where what the throwable is
     */
    public static void assertAbsent(String where, Throwable t) {
        assertAbsent(where, stackTrace(t));
    }

    /**
     * @return its printed stack trace (message, causes, suppressed)
     */
    public static String stackTrace(Throwable t) {
        StringWriter w = new StringWriter();
        t.printStackTrace(new PrintWriter(w));
        return w.toString();
    }

    /**
     * @param text text containing a credential
     * @return up to 80 characters either side of the first credential, redacted
     */
    static String excerpt(CharSequence text) {
        String s = text.toString();
        for (String secret : REGISTERED) {
            int i = s.indexOf(secret);
            if (i >= 0) {
                String around = s.substring(Math.max(0, i - 80), Math.min(s.length(), i + secret.length() + 80));
                return "\"..." + redact(around).replace("\n", "\\n") + "...\"";
            }
        }
        return "(none)";
    }
}
