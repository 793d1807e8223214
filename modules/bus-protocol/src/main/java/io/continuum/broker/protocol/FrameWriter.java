package io.continuum.broker.protocol;

import com.fasterxml.jackson.core.JsonGenerator;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.OptionalLong;

/**
 * Writes frames as length-prefixed JSON with Jackson's streaming generator. Every value is checked
 * against the same rules the decoder applies, so {@code decode(encode(f))} equals {@code f} (up to
 * {@code message} truncation); a value that breaks them is a programming error
 * ({@link IllegalArgumentException}), not a protocol error.
 */
final class FrameWriter {
    private FrameWriter() {
    }

    static byte[] encode(Frame frame) {
        PrefixedBytes out = new PrefixedBytes();
        try (JsonGenerator g = Json.FACTORY.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("type", frame.type());
            writeMembers(g, frame);
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot encode " + frame.type(), e);
        }
        return out.toFrame();
    }

    static byte[] frameOf(byte[] payload) {
        if (payload.length > SessionLimits.MAX_FRAME_BYTES_CEILING) {
            throw new IllegalArgumentException("payload of " + payload.length + " bytes exceeds "
                    + SessionLimits.MAX_FRAME_BYTES_CEILING);
        }
        byte[] frame = new byte[4 + payload.length];
        putLength(frame, payload.length);
        System.arraycopy(payload, 0, frame, 4, payload.length);
        return frame;
    }

    private static void writeMembers(JsonGenerator g, Frame frame) throws IOException {
        switch (frame) {
            case Frame.Hello h -> {
                g.writeArrayFieldStart("protocol_versions");
                for (int v : h.protocolVersions()) {
                    require(v >= 1, "hello.protocol_versions element " + v + " out of range 1..2147483647");
                    g.writeNumber(v);
                }
                g.writeEndArray();
                g.writeStringField("role", h.role());
                g.writeStringField("client_id", h.clientId());
                g.writeStringField("kubernetes_namespace", h.kubernetesNamespace());
                g.writeArrayFieldStart("dynamo_namespaces");
                for (String ns : h.dynamoNamespaces()) {
                    g.writeString(ns);
                }
                g.writeEndArray();
                if (h.agent() != null) {
                    g.writeStringField("agent", h.agent());
                }
            }
            case Frame.Heartbeat ignored -> {
                // no members
            }
            case Frame.StreamOpened o -> streamId(g, o.streamId());
            case Frame.StreamRefused r -> {
                streamId(g, r.streamId());
                g.writeStringField("code", r.code().wire());
                message(g, r.message());
            }
            case Frame.StreamClosed c -> {
                streamId(g, c.streamId());
                g.writeStringField("code", c.code().wire());
            }
            case Frame.Draining d -> {
                require(d.deadlineMs() >= 0, "draining.deadline_ms " + d.deadlineMs() + " is negative");
                g.writeNumberField("deadline_ms", d.deadlineMs());
            }
            case Frame.Welcome w -> {
                require(w.protocolVersion() >= 1, "welcome.protocol_version " + w.protocolVersion()
                        + " out of range 1..2147483647");
                String problem = Checks.sessionIdProblem(w.sessionId());
                require(problem == null, problem);
                g.writeNumberField("protocol_version", w.protocolVersion());
                g.writeStringField("session_id", w.sessionId());
                optional(g, "heartbeat_interval_ms", w.heartbeatIntervalMs());
                optional(g, "idle_timeout_ms", w.idleTimeoutMs());
                optional(g, "max_streams", w.maxStreams());
                optional(g, "max_stream_buffer_bytes", w.maxStreamBufferBytes());
                optional(g, "max_frame_bytes", w.maxFrameBytes());
            }
            case Frame.Subscribe s -> {
                streamId(g, s.streamId());
                g.writeObjectFieldStart("target");
                switch (s.target()) {
                    case Target.ZmqTcp z -> {
                        require(z.namespace() != null && !z.namespace().isEmpty(), "target.namespace is empty");
                        require(z.host() != null, "target.host is null");
                        String problem = Checks.hostProblem(z.host());
                        require(problem == null, problem);
                        require(Checks.isPort(z.port()), "target.port " + z.port() + " out of range 1..65535");
                        g.writeStringField("kind", Target.KIND_ZMQ_TCP);
                        g.writeStringField("namespace", z.namespace());
                        g.writeStringField("host", z.host());
                        g.writeNumberField("port", z.port());
                    }
                    case Target.AnnouncedSource a -> {
                        g.writeStringField("kind", Target.KIND_ANNOUNCED_SOURCE);
                        if (a.sourceId() != null) {
                            g.writeStringField("source_id", a.sourceId());
                        }
                    }
                    case Target.Unsupported u -> throw new IllegalArgumentException(
                            "an Unsupported target has no wire form; use FrameCodec.encodeJson for malformed targets");
                }
                g.writeEndObject();
            }
            case Frame.Unsubscribe u -> streamId(g, u.streamId());
            case Frame.Drain d -> {
                g.writeStringField("reason", d.reason());
                if (d.deadlineMs().isPresent()) {
                    require(d.deadlineMs().getAsLong() >= 0, "drain.deadline_ms " + d.deadlineMs().getAsLong()
                            + " is negative");
                    g.writeNumberField("deadline_ms", d.deadlineMs().getAsLong());
                }
            }
            case Frame.ErrorFrame e -> {
                g.writeStringField("code", e.code().wire());
                message(g, e.message());
                g.writeBooleanField("terminal", e.terminal());
            }
            case Frame.Unknown u -> require(FrameType.of(u.type()) == null,
                    "frame type '" + u.type() + "' is known; encode its record instead of Unknown");
        }
    }

    private static void streamId(JsonGenerator g, long id) throws IOException {
        require(Checks.isStreamId(id), "stream_id " + id + " out of range " + Checks.STREAM_ID_RANGE);
        g.writeNumberField("stream_id", id);
    }

    private static void message(JsonGenerator g, String message) throws IOException {
        if (message != null) {
            g.writeStringField("message", Checks.truncateMessage(message));
        }
    }

    private static void optional(JsonGenerator g, String member, OptionalLong value) throws IOException {
        if (value.isPresent()) {
            g.writeNumberField(member, value.getAsLong());
        }
    }

    private static void require(boolean condition, String problem) {
        if (!condition) {
            throw new IllegalArgumentException(problem);
        }
    }

    static void putLength(byte[] frame, int length) {
        frame[0] = (byte) (length >>> 24);
        frame[1] = (byte) (length >>> 16);
        frame[2] = (byte) (length >>> 8);
        frame[3] = (byte) length;
    }

    /** A byte sink that reserves the 4 prefix bytes and fills them in at the end. */
    private static final class PrefixedBytes extends ByteArrayOutputStream {
        PrefixedBytes() {
            super(128);
            count = 4;
        }

        byte[] toFrame() {
            int payload = count - 4;
            if (payload > SessionLimits.MAX_FRAME_BYTES_CEILING) {
                throw new IllegalArgumentException("encoded frame of " + payload + " bytes exceeds "
                        + SessionLimits.MAX_FRAME_BYTES_CEILING);
            }
            byte[] frame = Arrays.copyOf(buf, count);
            putLength(frame, payload);
            return frame;
        }
    }
}
