package io.continuum.broker.protocol;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;

import java.io.IOException;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

import io.continuum.broker.protocol.FrameType.Direction;

/**
 * Reads one frame payload (the JSON after the length prefix) into a {@link Frame}
 * (bus-protocol-v1.md section 3; the rules are listed in docs/protocol.md).
 * <p>
 * Errors are reported in two tiers so that the message does not depend on member order: first
 * anything wrong with the bytes and the JSON document as a whole (UTF-8, syntax, parser limits,
 * duplicate names, trailing data, not an object, the {@code type} member, a type the peer may not
 * send), then the first member-level error in document order (mistyped or out-of-range value),
 * then the first missing required member in the frame's member order.
 * <p>
 * When {@code type} is the first member (everyone writes it first) the payload is parsed once;
 * otherwise a first pass finds {@code type} and a second one reads the members. Unknown members
 * are skipped token by token and never materialized.
 * <p>
 * Why one class of ~600 lines: every frame reader and every value reader moves the same parser cursor and
 * records into the same two-tier error state, in document order; split across classes, that state would be
 * passed around or shared, and the order of the errors (which the conformance tests pin) would be harder to see.
 * Each method is short: one per frame type, one per value shape.
 */
final class FrameReader {
    private static final BigDecimal LONG_MAX = BigDecimal.valueOf(Long.MAX_VALUE);
    private static final BigDecimal LONG_MIN = BigDecimal.valueOf(Long.MIN_VALUE);
    private static final String VERSION_RANGE = "1..2147483647";
    private static final String NON_NEGATIVE_RANGE = "0..2^63-1";

    private static final Target TARGET_MISSING = new Target.Unsupported(null, "target missing");
    private static final Target TARGET_NOT_OBJECT = new Target.Unsupported(null, "target is not an object");
    private static final Target KIND_MISSING = new Target.Unsupported(null, "target.kind missing or not a string");

    private final byte[] bytes;
    private final int offset;
    private final int length;
    private final Direction direction;
    private JsonParser p;
    /** Name of the member whose value the parser is on. */
    private String name;
    /** First member-level error in document order; thrown once the whole object was read. */
    private String memberError;

    private FrameReader(byte[] bytes, int offset, int length, Direction direction) {
        this.bytes = bytes;
        this.offset = offset;
        this.length = length;
        this.direction = direction;
    }

    /**
     * Decodes one payload.
     *
     * @param bytes     buffer
     * @param offset    first payload byte
     * @param length    payload length, at least 1
     * @param direction who sent it
     * @return the frame; for a router-direction read always a {@link Frame.RouterFrame}, for a
     *         client-direction read a {@link Frame.ClientFrame} or a {@link Frame.Unknown}
     * @throws ProtocolException if the payload is malformed
     */
    static Frame read(byte[] bytes, int offset, int length, Direction direction) throws ProtocolException {
        Utf8.check(bytes, offset, length);
        FrameReader reader = new FrameReader(bytes, offset, length, direction);
        try {
            return reader.readFrame();
        } catch (JsonProcessingException e) {
            throw Json.toProtocolException(e);
        } catch (IOException e) {
            throw new ProtocolException("unreadable frame: " + Json.printable(String.valueOf(e.getMessage())), e);
        } finally {
            reader.close();
        }
    }

    private JsonParser open() throws IOException {
        return Json.FACTORY.createParser(bytes, offset, length);
    }

    private void close() {
        if (p != null) {
            try {
                p.close();
            } catch (IOException ignored) {
                // a byte-array parser has nothing to release that can fail
            }
        }
    }

    private Frame readFrame() throws IOException, ProtocolException {
        p = open();
        if (p.nextToken() != JsonToken.START_OBJECT) {
            throw new ProtocolException("frame is not a JSON object");
        }
        JsonToken first = p.nextToken();
        String type;
        if (first == JsonToken.FIELD_NAME && "type".equals(p.currentName())) {
            if (p.nextToken() != JsonToken.VALUE_STRING) {
                p.skipChildren();
                skipMembers();
                throw new ProtocolException("member 'type' is not a string");
            }
            type = p.getText();
        } else {
            type = scanForType(first);
            p.close();
            p = open();
            p.nextToken(); // START_OBJECT; the document is known to be well-formed now
        }
        FrameType known = FrameType.of(type);
        if (known == null) {
            skipMembers();
            return new Frame.Unknown(type);
        }
        if (!known.sentBy(direction)) {
            skipMembers();
            throw new ProtocolException("frame type '" + type + "' is not valid from a " + direction.peer);
        }
        return switch (known) {
            case HEARTBEAT -> {
                skipMembers();
                yield Frame.Heartbeat.INSTANCE;
            }
            case WELCOME -> readWelcome();
            case SUBSCRIBE -> readSubscribe();
            case UNSUBSCRIBE -> new Frame.Unsubscribe(readStreamIdOnly("unsubscribe"));
            case DRAIN -> readDrain();
            case ERROR -> readError();
            case HELLO -> readHello();
            case STREAM_OPENED -> new Frame.StreamOpened(readStreamIdOnly("stream_opened"));
            case STREAM_REFUSED -> readStreamRefused();
            case STREAM_CLOSED -> readStreamClosed();
            case DRAINING -> readDraining();
        };
    }

    /** Reads every top-level member looking for {@code type}, then checks the end of the frame. */
    private String scanForType(JsonToken current) throws IOException, ProtocolException {
        String type = null;
        boolean notString = false;
        JsonToken t = current;
        while (t == JsonToken.FIELD_NAME) {
            boolean isType = "type".equals(p.currentName());
            JsonToken value = p.nextToken();
            if (isType) {
                if (value == JsonToken.VALUE_STRING) {
                    type = p.getText();
                } else {
                    notString = true;
                }
            }
            p.skipChildren();
            t = p.nextToken();
        }
        checkNothingFollows();
        if (notString) {
            throw new ProtocolException("member 'type' is not a string");
        }
        if (type == null) {
            throw new ProtocolException("missing string member 'type'");
        }
        return type;
    }

    // ---- frame bodies -------------------------------------------------------------------------

    private Frame readWelcome() throws IOException, ProtocolException {
        Long version = null;
        String sessionId = null;
        Long heartbeat = null;
        Long idle = null;
        Long streams = null;
        Long buffer = null;
        Long frame = null;
        while (nextMember()) {
            switch (name) {
                case "protocol_version" -> version = integerIn("welcome.protocol_version", 1, Integer.MAX_VALUE,
                        VERSION_RANGE);
                case "session_id" -> {
                    sessionId = string("welcome.session_id");
                    if (sessionId != null) {
                        String problem = Checks.sessionIdProblem(sessionId);
                        if (problem != null) {
                            fail(problem);
                        }
                    }
                }
                case "heartbeat_interval_ms" -> heartbeat = integer("welcome.heartbeat_interval_ms");
                case "idle_timeout_ms" -> idle = integer("welcome.idle_timeout_ms");
                case "max_streams" -> streams = integer("welcome.max_streams");
                case "max_stream_buffer_bytes" -> buffer = integer("welcome.max_stream_buffer_bytes");
                case "max_frame_bytes" -> frame = integer("welcome.max_frame_bytes");
                default -> p.skipChildren();
            }
        }
        endOfMembers();
        int v = (int) (long) required(version, "integer", "welcome.protocol_version");
        String id = required(sessionId, "string", "welcome.session_id");
        return new Frame.Welcome(v, id, optional(heartbeat), optional(idle), optional(streams), optional(buffer),
                optional(frame));
    }

    private Frame readSubscribe() throws IOException, ProtocolException {
        Long streamId = null;
        Target target = null;
        while (nextMember()) {
            switch (name) {
                case "stream_id" -> streamId = streamId("subscribe.stream_id");
                case "target" -> target = target();
                default -> p.skipChildren();
            }
        }
        endOfMembers();
        long id = required(streamId, "integer", "subscribe.stream_id");
        return new Frame.Subscribe(id, target == null ? TARGET_MISSING : target);
    }

    private long readStreamIdOnly(String frame) throws IOException, ProtocolException {
        Long streamId = null;
        while (nextMember()) {
            if (name.equals("stream_id")) {
                streamId = streamId(frame + ".stream_id");
            } else {
                p.skipChildren();
            }
        }
        endOfMembers();
        return required(streamId, "integer", frame + ".stream_id");
    }

    private Frame readDrain() throws IOException, ProtocolException {
        String reason = null;
        Long deadline = null;
        while (nextMember()) {
            switch (name) {
                case "reason" -> reason = string("drain.reason");
                case "deadline_ms" -> deadline = integerIn("drain.deadline_ms", 0, Long.MAX_VALUE, NON_NEGATIVE_RANGE);
                default -> p.skipChildren();
            }
        }
        endOfMembers();
        return new Frame.Drain(reason == null ? "" : reason, optional(deadline));
    }

    private Frame readError() throws IOException, ProtocolException {
        String code = null;
        String message = null;
        Boolean terminal = null;
        while (nextMember()) {
            switch (name) {
                case "code" -> code = string("error.code");
                case "message" -> message = string("error.message");
                case "terminal" -> terminal = bool("error.terminal");
                default -> p.skipChildren();
            }
        }
        endOfMembers();
        return new Frame.ErrorFrame(Code.fromWire(code), Checks.truncateMessage(message),
                terminal != null && terminal);
    }

    private Frame readHello() throws IOException, ProtocolException {
        List<Integer> versions = null;
        String role = null;
        String clientId = null;
        String kubernetesNamespace = null;
        List<String> dynamoNamespaces = null;
        String agent = null;
        while (nextMember()) {
            switch (name) {
                case "protocol_versions" -> versions = versions("hello.protocol_versions");
                case "role" -> role = string("hello.role");
                case "client_id" -> clientId = string("hello.client_id");
                case "kubernetes_namespace" -> kubernetesNamespace = string("hello.kubernetes_namespace");
                case "dynamo_namespaces" -> dynamoNamespaces = strings("hello.dynamo_namespaces");
                case "agent" -> agent = string("hello.agent");
                default -> p.skipChildren();
            }
        }
        endOfMembers();
        return new Frame.Hello(
                required(versions, "array of integers", "hello.protocol_versions"),
                required(role, "string", "hello.role"),
                required(clientId, "string", "hello.client_id"),
                required(kubernetesNamespace, "string", "hello.kubernetes_namespace"),
                required(dynamoNamespaces, "array of strings", "hello.dynamo_namespaces"),
                agent);
    }

    private Frame readStreamRefused() throws IOException, ProtocolException {
        Long streamId = null;
        String code = null;
        String message = null;
        while (nextMember()) {
            switch (name) {
                case "stream_id" -> streamId = streamId("stream_refused.stream_id");
                case "code" -> code = string("stream_refused.code");
                case "message" -> message = string("stream_refused.message");
                default -> p.skipChildren();
            }
        }
        endOfMembers();
        long id = required(streamId, "integer", "stream_refused.stream_id");
        String c = required(code, "string", "stream_refused.code");
        return new Frame.StreamRefused(id, Code.fromWire(c), Checks.truncateMessage(message));
    }

    private Frame readStreamClosed() throws IOException, ProtocolException {
        Long streamId = null;
        String code = null;
        while (nextMember()) {
            switch (name) {
                case "stream_id" -> streamId = streamId("stream_closed.stream_id");
                case "code" -> code = string("stream_closed.code");
                default -> p.skipChildren();
            }
        }
        endOfMembers();
        long id = required(streamId, "integer", "stream_closed.stream_id");
        String c = required(code, "string", "stream_closed.code");
        return new Frame.StreamClosed(id, Code.fromWire(c));
    }

    private Frame readDraining() throws IOException, ProtocolException {
        Long deadline = null;
        while (nextMember()) {
            if (name.equals("deadline_ms")) {
                deadline = integerIn("draining.deadline_ms", 0, Long.MAX_VALUE, NON_NEGATIVE_RANGE);
            } else {
                p.skipChildren();
            }
        }
        endOfMembers();
        return new Frame.Draining(required(deadline, "integer", "draining.deadline_ms"));
    }

    // ---- subscribe target ---------------------------------------------------------------------

    /**
     * Reads {@code target}. Never fails the frame for a bad target: it becomes
     * {@link Target.Unsupported} so that the subscribe can be answered {@code unsupported_target}.
     * Only JSON-level errors (syntax, limits, duplicates) inside it fail the frame.
     */
    private Target target() throws IOException {
        JsonToken t = p.currentToken();
        if (t == JsonToken.VALUE_NULL) {
            return TARGET_MISSING;
        }
        if (t != JsonToken.START_OBJECT) {
            p.skipChildren();
            return TARGET_NOT_OBJECT;
        }
        String kind = null;
        String namespace = null;
        String host = null;
        boolean hostNotString = false;
        Long port = null;
        String sourceId = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String member = p.currentName();
            JsonToken value = p.nextToken();
            String text = value == JsonToken.VALUE_STRING ? p.getText() : null;
            switch (member) {
                case "kind" -> kind = text;
                case "namespace" -> namespace = text;
                case "host" -> {
                    host = text;
                    hostNotString = text == null && value != JsonToken.VALUE_NULL;
                }
                case "port" -> port = integral();
                case "source_id" -> sourceId = text;
                default -> {
                    // unknown member of the target: ignored
                }
            }
            p.skipChildren();
        }
        if (kind == null) {
            return KIND_MISSING;
        }
        if (kind.equals(Target.KIND_ANNOUNCED_SOURCE)) {
            return new Target.AnnouncedSource(sourceId);
        }
        if (!kind.equals(Target.KIND_ZMQ_TCP)) {
            return new Target.Unsupported(kind, "target kind is neither zmq_tcp nor announced_source");
        }
        if (namespace == null || namespace.isEmpty()) {
            return new Target.Unsupported(kind, "target.namespace missing or not a non-empty string");
        }
        if (host == null) {
            return new Target.Unsupported(kind, hostNotString ? "target.host is not a string" : "target.host missing");
        }
        String problem = Checks.hostProblem(host);
        if (problem != null) {
            return new Target.Unsupported(kind, problem);
        }
        if (port == null) {
            return new Target.Unsupported(kind, "target.port missing or not an integer");
        }
        if (!Checks.isPort(port)) {
            return new Target.Unsupported(kind, "target.port out of range 1..65535");
        }
        return new Target.ZmqTcp(namespace, host, (int) (long) port);
    }

    // ---- members ------------------------------------------------------------------------------

    /** Advances to the next member's value; false at the end of the object. */
    private boolean nextMember() throws IOException {
        if (p.nextToken() != JsonToken.FIELD_NAME) {
            return false; // END_OBJECT: Jackson allows nothing else here
        }
        name = p.currentName();
        p.nextToken();
        return true;
    }

    private void skipMembers() throws IOException, ProtocolException {
        while (nextMember()) {
            p.skipChildren();
        }
        checkNothingFollows();
    }

    private void endOfMembers() throws ProtocolException {
        checkNothingFollows();
        if (memberError != null) {
            throw new ProtocolException(memberError);
        }
    }

    /** After the root object's closing brace only JSON whitespace may follow. */
    private void checkNothingFollows() throws ProtocolException {
        long after = p.currentLocation().getByteOffset();
        for (long i = after; i < length; i++) {
            byte b = bytes[offset + (int) i];
            if (b != ' ' && b != '\t' && b != '\n' && b != '\r') {
                throw new ProtocolException("trailing data after the JSON object at byte " + i);
            }
        }
    }

    private void fail(String message) {
        if (memberError == null) {
            memberError = message;
        }
    }

    private static <T> T required(T value, String kind, String member) throws ProtocolException {
        if (value == null) {
            throw new ProtocolException("missing " + kind + " member '" + member + "'");
        }
        return value;
    }

    private static OptionalLong optional(Long value) {
        return value == null ? OptionalLong.empty() : OptionalLong.of(value);
    }

    /** A string member; null when absent or null (recorded as an error when of another type). */
    private String string(String member) throws IOException {
        JsonToken t = p.currentToken();
        if (t == JsonToken.VALUE_STRING) {
            return p.getText();
        }
        if (t != JsonToken.VALUE_NULL) {
            fail("member '" + member + "' is not a string");
            p.skipChildren();
        }
        return null;
    }

    private Boolean bool(String member) throws IOException {
        JsonToken t = p.currentToken();
        if (t == JsonToken.VALUE_TRUE || t == JsonToken.VALUE_FALSE) {
            return t == JsonToken.VALUE_TRUE;
        }
        if (t != JsonToken.VALUE_NULL) {
            fail("member '" + member + "' is not a boolean");
            p.skipChildren();
        }
        return null;
    }

    /** An integer member, saturated to the 64-bit range; null when absent, null or mistyped. */
    private Long integer(String member) throws IOException {
        if (p.currentToken() == JsonToken.VALUE_NULL) {
            return null;
        }
        Long value = integral();
        if (value == null) {
            fail("member '" + member + "' is not an integer");
            p.skipChildren();
        }
        return value;
    }

    private Long integerIn(String member, long min, long max, String range) throws IOException {
        Long value = integer(member);
        if (value != null && (value < min || value > max)) {
            fail(member + " " + Json.printable(p.getText()) + " out of range " + range);
            return null;
        }
        return value;
    }

    private Long streamId(String member) throws IOException {
        return integerIn(member, 1, Checks.MAX_STREAM_ID, Checks.STREAM_ID_RANGE);
    }

    /**
     * The current token as an integer if it is a JSON number with an integral value ({@code 17},
     * {@code 17.0}, {@code 1.7e1}); values beyond 64 bits saturate. Null for anything else.
     */
    private Long integral() throws IOException {
        JsonToken t = p.currentToken();
        if (t == JsonToken.VALUE_NUMBER_INT) {
            JsonParser.NumberType type = p.getNumberType();
            if (type == JsonParser.NumberType.INT || type == JsonParser.NumberType.LONG) {
                return p.getLongValue();
            }
            return p.getBigIntegerValue().signum() < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
        if (t == JsonToken.VALUE_NUMBER_FLOAT) {
            BigDecimal d;
            try {
                d = p.getDecimalValue();
            } catch (NumberFormatException e) {
                return beyondBigDecimal(p.getText());
            }
            if (d.signum() == 0) {
                return 0L;
            }
            if (d.stripTrailingZeros().scale() > 0) {
                return null;
            }
            if (d.compareTo(LONG_MAX) > 0) {
                return Long.MAX_VALUE;
            }
            if (d.compareTo(LONG_MIN) < 0) {
                return Long.MIN_VALUE;
            }
            return d.longValueExact();
        }
        return null;
    }

    /**
     * A syntactically valid number whose exponent does not fit BigDecimal (beyond 32 bits, e.g.
     * {@code 1e9999999999}): zero if its mantissa is zero; not integral if the exponent is negative
     * (a mantissa of at most 64 digits cannot make it whole); otherwise saturated by sign.
     */
    private static Long beyondBigDecimal(String number) {
        int e = Math.max(number.indexOf('e'), number.indexOf('E'));
        String mantissa = e < 0 ? number : number.substring(0, e);
        boolean zero = true;
        for (int i = 0; i < mantissa.length(); i++) {
            char c = mantissa.charAt(i);
            if (c >= '1' && c <= '9') {
                zero = false;
                break;
            }
        }
        if (zero) {
            return 0L;
        }
        if (e < 0 || (e + 1 < number.length() && number.charAt(e + 1) == '-')) {
            return null;
        }
        return mantissa.startsWith("-") ? Long.MIN_VALUE : Long.MAX_VALUE;
    }

    private List<Integer> versions(String member) throws IOException {
        JsonToken t = p.currentToken();
        if (t == JsonToken.VALUE_NULL) {
            return null;
        }
        if (t != JsonToken.START_ARRAY) {
            fail("member '" + member + "' is not an array of integers");
            p.skipChildren();
            return null;
        }
        List<Integer> out = new ArrayList<>();
        int index = 0;
        while (p.nextToken() != JsonToken.END_ARRAY) {
            Long v = integral();
            if (v == null) {
                fail("member '" + member + "' is not an array of integers");
                p.skipChildren();
            } else if (v < 1 || v > Integer.MAX_VALUE) {
                fail(member + "[" + index + "] " + Json.printable(p.getText()) + " out of range " + VERSION_RANGE);
            } else {
                out.add((int) (long) v);
            }
            index++;
        }
        return out;
    }

    private List<String> strings(String member) throws IOException {
        JsonToken t = p.currentToken();
        if (t == JsonToken.VALUE_NULL) {
            return null;
        }
        if (t != JsonToken.START_ARRAY) {
            fail("member '" + member + "' is not an array of strings");
            p.skipChildren();
            return null;
        }
        List<String> out = new ArrayList<>();
        while (p.nextToken() != JsonToken.END_ARRAY) {
            if (p.currentToken() == JsonToken.VALUE_STRING) {
                out.add(p.getText());
            } else {
                fail("member '" + member + "' is not an array of strings");
                p.skipChildren();
            }
        }
        return out;
    }
}
