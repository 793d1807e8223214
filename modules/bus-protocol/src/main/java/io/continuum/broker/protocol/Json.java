package io.continuum.broker.protocol;

import com.fasterxml.jackson.core.ErrorReportConfiguration;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonFactoryBuilder;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.core.io.IOContext;
import com.fasterxml.jackson.core.io.JsonEOFException;
import com.fasterxml.jackson.core.json.UTF8StreamJsonParser;
import com.fasterxml.jackson.core.sym.ByteQuadsCanonicalizer;
import com.fasterxml.jackson.core.util.JsonRecyclerPools;

/**
 * The one Jackson streaming factory of the codec and the mapping of Jackson's failures to
 * {@link ProtocolException}s. Strict JSON only: no comments, no single quotes, no NaN, no
 * trailing commas; duplicate member names are errors; small, fixed parser limits.
 */
final class Json {
    /** Deepest nesting accepted; frames use 2, the rest is room for unknown members. */
    static final int MAX_NESTING_DEPTH = 16;
    /** Longest number token, in characters. */
    static final int MAX_NUMBER_LENGTH = 64;
    /** Longest member name, in characters. */
    static final int MAX_NAME_LENGTH = 1_024;
    /** Longest string value, in characters: no frame can carry more. */
    static final int MAX_STRING_LENGTH = SessionLimits.MAX_FRAME_BYTES_CEILING;

    /**
     * Jackson's buffers (a 4,000-character and an 8,000-byte array, about 12 KiB) are recycled through a pool
     * shared by every thread and bounded, not through Jackson's default per-thread pool: each data stream's
     * thread encodes its {@code stream_opened} and then lives as long as the stream, so a per-thread pool kept
     * one set of buffers per open stream (measured: 8 KiB of each idle stream's 32 KiB at 1,000 streams).
     */
    static final int RECYCLED_BUFFER_SETS = 16;

    static final JsonFactory FACTORY = new Utf8OnlyFactory(new JsonFactoryBuilder()
            .recyclerPool(JsonRecyclerPools.newBoundedPool(RECYCLED_BUFFER_SETS))
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .disable(StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION)
            .disable(JsonFactory.Feature.INTERN_FIELD_NAMES)
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxNestingDepth(MAX_NESTING_DEPTH)
                    .maxNumberLength(MAX_NUMBER_LENGTH)
                    .maxNameLength(MAX_NAME_LENGTH)
                    .maxStringLength(MAX_STRING_LENGTH)
                    .maxDocumentLength(SessionLimits.MAX_FRAME_BYTES_CEILING)
                    .build())
            .errorReportConfiguration(ErrorReportConfiguration.builder()
                    .maxErrorTokenLength(32)
                    .maxRawContentLength(0)
                    .build()));

    private static final int MAX_DETAIL = 160;

    private Json() {
    }

    /**
     * Maps a Jackson failure to a precise, log-safe protocol error.
     *
     * @return protocol error
     */
    static ProtocolException toProtocolException(JsonProcessingException e) {
        String original = e.getOriginalMessage() == null ? "" : e.getOriginalMessage();
        if (e instanceof StreamConstraintsException) {
            String what;
            if (original.startsWith("Document nesting depth")) {
                what = "JSON nesting deeper than " + MAX_NESTING_DEPTH;
            } else if (original.startsWith("Number value length")) {
                what = "JSON number longer than " + MAX_NUMBER_LENGTH + " characters";
            } else if (original.startsWith("Name length")) {
                what = "JSON member name longer than " + MAX_NAME_LENGTH + " characters";
            } else if (original.startsWith("String value length")) {
                what = "JSON string longer than " + MAX_STRING_LENGTH + " characters";
            } else {
                what = "JSON exceeds parser limits: " + printable(original);
            }
            return new ProtocolException(what, e);
        }
        String at = at(e.getLocation());
        if (e instanceof JsonEOFException) {
            return new ProtocolException("invalid JSON" + at + ": unexpected end of frame", e);
        }
        if (original.startsWith("Duplicate field '") && original.endsWith("'")) {
            String name = original.substring("Duplicate field '".length(), original.length() - 1);
            return new ProtocolException("duplicate member '" + printable(name) + "'", e);
        }
        return new ProtocolException("invalid JSON" + at + ": " + printable(original), e);
    }

    /**
     * Parses byte arrays as UTF-8, always: Jackson's default byte-array path guesses the encoding
     * (UTF-16/32 from zero bytes, BOMs) and shares one symbol table of member names across all
     * parsers. Here every payload gets the byte-oriented UTF-8 parser and a fresh symbol table, so
     * attacker-chosen member names never outlive their frame and no encoding is ever guessed.
     * Uses Jackson's documented extension point ({@code _createParser} is overridable).
     */
    private static final class Utf8OnlyFactory extends JsonFactory {
        Utf8OnlyFactory(JsonFactoryBuilder builder) {
            super(builder);
        }

        @Override
        protected JsonParser _createParser(byte[] data, int offset, int len, IOContext ctxt) {
            return new UTF8StreamJsonParser(ctxt, _parserFeatures, null, _objectCodec,
                    ByteQuadsCanonicalizer.createRoot().makeChild(_factoryFeatures), data, offset, offset + len, false);
        }
    }

    private static String at(JsonLocation location) {
        if (location == null || location.getByteOffset() < 0) {
            return "";
        }
        // Jackson's position is where it noticed the problem, usually just after the offending token
        return " near byte " + location.getByteOffset();
    }

    /**
     * A log-safe excerpt: printable ASCII only (anything else becomes {@code ?}), at most 160
     * characters.
     *
     * @param s text, possibly attacker-controlled
     * @return sanitized text
     */
    static String printable(String s) {
        int n = Math.min(s.length(), MAX_DETAIL);
        StringBuilder b = new StringBuilder(n + 3);
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            b.append(c >= 0x20 && c < 0x7F ? c : '?');
        }
        if (s.length() > MAX_DETAIL) {
            b.append("...");
        }
        return b.toString();
    }
}
