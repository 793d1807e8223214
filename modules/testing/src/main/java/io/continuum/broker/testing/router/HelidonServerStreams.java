package io.continuum.broker.testing.router;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.Objects;

import io.helidon.http.http2.Http2ErrorCode;
import io.helidon.http.http2.Http2Flag;
import io.helidon.http.http2.Http2FrameData;
import io.helidon.http.http2.Http2RstStream;
import io.helidon.http.http2.Http2Settings;
import io.helidon.http.http2.Http2Stream;
import io.helidon.http.http2.Http2StreamWriter;
import io.helidon.http.http2.Http2WindowUpdate;
import io.helidon.webserver.http.ServerResponse;

/**
 * Two things a router must do that Helidon's HTTP/2 server has no public API for: send the
 * response HEADERS before the first body byte, and reset a live stream (an exception from the
 * handler becomes RST_STREAM only after the request body is drained: never, for a duplex
 * stream). Test support reaching Helidon internals reflectively (the class path is open in tests); never
 * product code. Shared by {@link TestRouter}'s streams and the bus-level in-process router.
 */
public final class HelidonServerStreams {
    private HelidonServerStreams() {
    }

    /** Sends the response HEADERS now: Helidon's HTTP/2 response otherwise waits for the first body byte. */
    public static void flushHeaders(ServerResponse res) {
        try {
            Method flush = res.getClass().getDeclaredMethod("flushHeaders");
            flush.setAccessible(true);
            flush.invoke(res);
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("cannot send the response head without a body byte", e);
        }
    }

    /**
     * Sends a connection-level WINDOW_UPDATE of {@code increment} on the response's connection. Helidon's
     * server keeps its connection receive window equal to its stream window (65,535 here) and returns it
     * only as handlers read, so one unread stream holds the whole connection: a router opens it, as
     * bus-protocol-v1 section 6 asks of the client. Helidon's server does not police its inbound connection
     * window, so its own later updates simply add to this one.
     */
    public static void openConnectionWindow(ServerResponse res, int increment) {
        try {
            Object stream = field(res, "stream");
            Object writer = field(stream, "writer");
            Http2Settings settings = (Http2Settings) field(stream, "serverSettings");
            Http2FrameData frame = new Http2WindowUpdate(increment)
                    .toFrameData(settings, 0, Http2Flag.NoFlags.create());
            ((Http2StreamWriter) writer).write(frame);
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("cannot open the connection window", e);
        }
    }

    /** Resets the response's stream with RST_STREAM CANCEL. */
    public static void reset(ServerResponse res) {
        reset(res, Http2ErrorCode.CANCEL.code());
    }

    /**
     * Writes RST_STREAM with {@code errorCode} (CANCEL when Helidon knows no such code) through the stream's own
     * frame writer and marks the stream reset locally, so its handler's reads end.
     */
    public static void reset(ServerResponse res, int errorCode) {
        try {
            Object stream = field(res, "stream");
            Object writer = field(stream, "writer");
            int streamId = (Integer) field(stream, "streamId");
            Http2Settings settings = (Http2Settings) field(stream, "serverSettings");
            Http2ErrorCode code = Objects.requireNonNullElse(Http2ErrorCode.get(errorCode), Http2ErrorCode.CANCEL);
            Http2FrameData frame = new Http2RstStream(code)
                    .toFrameData(settings, streamId, Http2Flag.NoFlags.create());
            ((Http2StreamWriter) writer).write(frame);
            ((Http2Stream) stream).rstStream(new Http2RstStream(Http2ErrorCode.CANCEL));
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("cannot reset the stream", e);
        }
    }

    private static Object field(Object target, String name) throws ReflectiveOperationException {
        Class<?> type = target.getClass();
        while (type != null) {
            try {
                Field f = type.getDeclaredField(name);
                f.setAccessible(true);
                return f.get(target);
            } catch (NoSuchFieldException e) {
                type = type.getSuperclass();
            }
        }
        throw new NoSuchFieldException(name);
    }
}
