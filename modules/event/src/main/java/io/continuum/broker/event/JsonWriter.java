package io.continuum.broker.event;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.CharacterEscapes;
import com.fasterxml.jackson.core.json.JsonWriteFeature;

/**
 * The broker's one JSON writer (Jackson underneath): JSON log lines and the app's status page both go through
 * it, so values are escaped in one way everywhere. Every non-ASCII character, every control character and
 * DEL are escaped: the text is one line of printable ASCII, whatever a value holds. Not thread-safe; one
 * writer per document.
 */
public final class JsonWriter {
    private static final JsonFactory FACTORY = JsonFactory.builder()
            .enable(JsonWriteFeature.ESCAPE_NON_ASCII).build();
    /** Jackson's escapes plus DEL. */
    private static final CharacterEscapes ESCAPES = new CharacterEscapes() {
        private static final long serialVersionUID = 1L;
        private final int[] ascii = CharacterEscapes.standardAsciiEscapesForJSON();

        {
            ascii[0x7f] = CharacterEscapes.ESCAPE_STANDARD;
        }

        @Override
        public int[] getEscapeCodesForAscii() {
            return ascii;
        }

        @Override
        public SerializableString getEscapeSequence(int ch) {
            return null;
        }
    };

    private final StringWriter out = new StringWriter(192);
    private final JsonGenerator gen;

    /** An empty document; start it with {@link #beginObject()}. */
    public JsonWriter() {
        try {
            gen = FACTORY.createGenerator(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        gen.setCharacterEscapes(ESCAPES);
    }

    /** Opens an object: the document's, or an array element. */
    public JsonWriter beginObject() {
        return write(JsonGenerator::writeStartObject);
    }

    /** Opens an object as the value of field {@code name}. */
    public JsonWriter beginObject(String name) {
        return write(g -> g.writeObjectFieldStart(name));
    }

    /** Closes the innermost object. */
    public JsonWriter endObject() {
        return write(JsonGenerator::writeEndObject);
    }

    /** Opens an array as the value of field {@code name}. */
    public JsonWriter beginArray(String name) {
        return write(g -> g.writeArrayFieldStart(name));
    }

    /** Closes the innermost array. */
    public JsonWriter endArray() {
        return write(JsonGenerator::writeEndArray);
    }

    /**
     * One field: {@code null}, a {@link Long}, {@link Integer} or {@link Boolean} as such, anything else as the
     * string of its {@code toString()} (an {@code Instant} as ISO-8601, for instance).
     */
    public JsonWriter field(String name, Object value) {
        return write(g -> {
            g.writeFieldName(name);
            switch (value) {
                case null -> g.writeNull();
                case Long l -> g.writeNumber(l);
                case Integer i -> g.writeNumber(i);
                case Boolean b -> g.writeBoolean(b);
                default -> g.writeString(String.valueOf(value));
            }
        });
    }

    /** The JSON text; call once, after the outermost object is closed. */
    public String finish() {
        try {
            gen.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString();
    }

    private JsonWriter write(Step step) {
        try {
            step.run(gen);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    @FunctionalInterface
    private interface Step {
        void run(JsonGenerator gen) throws IOException;
    }
}
