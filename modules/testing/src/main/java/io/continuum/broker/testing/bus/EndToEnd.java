package io.continuum.broker.testing.bus;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.Tag;

/**
 * A test class that runs the broker end to end against the {@link InProcessRouter}. Such classes run twice: once on
 * the default {@link Http2Stack}, once more with {@link Http2Stack#PROPERTY} set to {@code netty} (the relay's
 * {@code e2e-on-netty} surefire execution selects them by the tag {@value #TAG}), so a new end-to-end test is also
 * held against a second, independent HTTP/2 implementation by carrying this annotation.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Tag(EndToEnd.TAG)
public @interface EndToEnd {
    /** The JUnit tag, for build tools. */
    String TAG = "end-to-end";
}
