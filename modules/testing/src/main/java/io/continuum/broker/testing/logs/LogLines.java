package io.continuum.broker.testing.logs;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * The log lines written under one logger while a test runs, formatted by the formatter the broker
 * installs (passed in: this module does not depend on the production modules), as an operator reads them.
 * Lines are kept in order; {@link #await} waits for one that matches.
 */
public final class LogLines extends Handler implements AutoCloseable {
    private final Logger logger;
    private final Level previousLevel;
    private final LinkedBlockingQueue<String> pending = new LinkedBlockingQueue<>();
    private final List<String> all = new ArrayList<>();

    private LogLines(Logger logger, Formatter formatter, Level level) {
        this.logger = logger;
        this.previousLevel = logger.getLevel();
        setFormatter(formatter);
        setLevel(Level.ALL);
        if (level != null) {
            logger.setLevel(level);
        }
    }

    /**
     * Captures every record of {@code loggerName} and its children.
     *
     * @param loggerName logger name, e.g. {@code io.continuum}
     * @param formatter  the broker's formatter
     * @param level      the level to set on the logger while capturing (restored by {@link #close()}), or null
     * @return the capture; close it
     */
    public static LogLines capture(String loggerName, Formatter formatter, Level level) {
        LogLines l = new LogLines(Logger.getLogger(loggerName), formatter, level);
        l.logger.addHandler(l);
        return l;
    }

    /**
     * Waits for a line.
     *
     * @param match   what the line must satisfy
     * @param timeout how long to wait
     * @return the first matching line not yet returned by an earlier await
     * @throws InterruptedException when interrupted
     */
    public String await(Predicate<String> match, java.time.Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            String next = pending.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (next == null) {
                throw new AssertionError("no such log line within " + timeout + "; lines so far:\n"
                        + String.join("\n", lines()));
            }
            if (match.test(next)) {
                return next;
            }
        }
    }

    /**
     * Every line so far, without line terminators.
     *
     * @return copy
     */
    public List<String> lines() {
        synchronized (all) {
            return List.copyOf(all);
        }
    }

    @Override
    public void publish(LogRecord record) {
        if (!isLoggable(record)) {
            return;
        }
        String text = getFormatter().format(record);
        // A formatter must write exactly one line: split so that a stray line break shows up as a bad line.
        String body = text.endsWith(System.lineSeparator()) ? text.substring(0, text.length()
                - System.lineSeparator().length()) : text;
        for (String line : body.split("\r\n|\r|\n", -1)) {
            synchronized (all) {
                all.add(line);
            }
            pending.add(line);
        }
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
        logger.removeHandler(this);
        logger.setLevel(previousLevel);
    }
}
