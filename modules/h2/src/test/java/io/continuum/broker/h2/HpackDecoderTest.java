package io.continuum.broker.h2;

import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The decoder's own HPACK (RFC 7541), rule by rule: the worked examples of Appendix C, the two legal blocks that made
 * Helidon 4.5.0's table loop forever (issue 54 item 1; each under a deadline), the size update rules of sections 4.2
 * and 6.3, every malformed representation as a COMPRESSION_ERROR, and the header list limit (RFC 9113 section 6.5.2).
 */
class HpackDecoderTest {
    private static final long NO_LIMIT = Long.MAX_VALUE;
    private static final Duration DEADLINE = Duration.ofSeconds(5);

    private final HpackDecoder decoder = new HpackDecoder();

    @Test
    void appendixC3RequestsWithoutHuffmanFillTheDynamicTable() throws Exception {
        assertEquals(List.of(f(":method", "GET"), f(":scheme", "http"), f(":path", "/"),
                f(":authority", "www.example.com")), decode("828684410f7777772e6578616d706c652e636f6d"));
        assertEquals(List.of(f(":method", "GET"), f(":scheme", "http"), f(":path", "/"),
                f(":authority", "www.example.com"), f("cache-control", "no-cache")),
                decode("828684be58086e6f2d6361636865"));
        assertEquals(List.of(f(":method", "GET"), f(":scheme", "https"), f(":path", "/index.html"),
                f(":authority", "www.example.com"), f("custom-key", "custom-value")),
                decode("828785bf400a637573746f6d2d6b65790c637573746f6d2d76616c7565"));
        // C.3.3's table: custom-key (54), cache-control (53), :authority (57) = 164 octets
        assertEquals(List.of(f("custom-key", "custom-value")), decode("be"));
    }

    @Test
    void appendixC4RequestsWithHuffmanDecodeTheSame() throws Exception {
        assertEquals(List.of(f(":method", "GET"), f(":scheme", "http"), f(":path", "/"),
                f(":authority", "www.example.com")), decode("828684418cf1e3c2e5f23a6ba0ab90f4ff"));
        assertEquals(List.of(f(":method", "GET"), f(":scheme", "http"), f(":path", "/"),
                f(":authority", "www.example.com"), f("cache-control", "no-cache")),
                decode("828684be5886a8eb10649cbf"));
    }

    @Test
    void appendixC5ResponsesEvictTheOldestEntryFromA256OctetTable() throws Exception {
        decoder.tableSizeLimit(256);
        // C.5.1, after the size update a lowered limit requires (3fe101: 256)
        List<HeaderField> first = decode("3fe101" + "4803333032580770726976617465611d4d6f6e2c203231204f63742032303133"
                + "2032303a31333a323120474d546e1768747470733a2f2f7777772e6578616d706c652e636f6d");
        assertEquals(List.of(f(":status", "302"), f("cache-control", "private"),
                f("date", "Mon, 21 Oct 2013 20:13:21 GMT"), f("location", "https://www.example.com")), first);
        // C.5.2: :status 307 (42 octets) evicts :status 302; the other three stay (222 octets)
        assertEquals(List.of(f(":status", "307"), f("cache-control", "private"),
                f("date", "Mon, 21 Oct 2013 20:13:21 GMT"), f("location", "https://www.example.com")),
                decode("4803333037c1c0bf"));
        assertCompressionError("c2"); // four entries, 62 to 65: 66 would have been :status 302
    }

    /** Issue 54 item 1, the first block: Helidon's table evicted from an empty table forever. */
    @Test
    void aSizeUpdateToZeroThenAnIndexedFieldEmptiesTheTableWithoutLooping() {
        List<HeaderField> fields = assertTimeoutPreemptively(DEADLINE, () -> decode("204001780179"));
        assertEquals(List.of(f("x", "y")), fields);
        assertCompressionError("be"); // 62: the field was not added (RFC 7541 section 4.4), not an error itself
    }

    /** Issue 54 item 1, the second block: one field with incremental indexing larger than the 4,096-octet table. */
    @Test
    void aFieldLargerThanTheTableEmptiesItAndIsNotAdded() throws Exception {
        decode("4001610162"); // a: b, indexed
        assertEquals(List.of(f("a", "b")), decode("be"));
        String big = "y".repeat(4_096 - 32); // name 1 + value 4,064 + 32 = 4,097 octets: one over
        List<HeaderField> fields = assertTimeoutPreemptively(DEADLINE,
                () -> decoder.decode(1, literalWithIndexing("x", big), NO_LIMIT).fields());
        assertEquals(List.of(f("x", big)), fields);
        assertCompressionError("be"); // the table is empty: a: b went with it
    }

    @Test
    void anEntryExactlyAsLargeAsTheTableFillsIt() throws Exception {
        String value = "y".repeat(4_096 - 32 - 1);
        decoder.decode(1, literalWithIndexing("x", value), NO_LIMIT);
        assertEquals(List.of(f("x", value)), decode("be"));
        decode("4001610162"); // a: b evicts it
        assertEquals(List.of(f("a", "b")), decode("be"));
        assertCompressionError("bf");
    }

    @Test
    void aNeverIndexedLiteralComesBackSensitive() throws Exception {
        List<HeaderField> fields = decode("100d" + hex("authorization") + "06" + hex("secret"));
        assertEquals(List.of(HeaderField.sensitive("authorization", "secret")), fields);
        assertTrue(fields.getFirst().sensitive());
    }

    @Test
    void fieldsComeInWireOrderPseudoHeadersWhereTheyWere() throws Exception {
        // RFC 9113 section 8.3 makes a pseudo-header after a regular field malformed: the caller must see the order
        assertEquals(List.of(f("content-type", "a"), f(":status", "200")), decode("0f10" + "0161" + "88"));
    }

    /** RFC 7541 section 4.2: a size update only at the beginning of a block. */
    @Test
    void aSizeUpdateAfterAFieldIsACompressionError() {
        assertCompressionError("8820");
    }

    @Test
    void twoSizeUpdatesAtTheStartAreTaken() throws Exception {
        decode("4001610162");
        assertEquals(List.of(f(":status", "200")), decode("203f61" + "88")); // 0, then 128: the table emptied
        assertCompressionError("be");
    }

    /** RFC 7541 section 6.3: the new size must not exceed the limit the setting gives. */
    @Test
    void aSizeUpdateAboveOurSettingIsACompressionError() {
        assertCompressionError("3fe21f"); // 4,097
    }

    @Test
    void aLoweredSettingRequiresASizeUpdateAtTheStartOfTheNextBlock() throws Exception {
        decoder.tableSizeLimit(100);
        assertCompressionError("88");
        HpackDecoder fresh = new HpackDecoder();
        fresh.tableSizeLimit(100);
        assertEquals(List.of(f(":status", "200")), fresh.decode(1, bytes("3f4588"), NO_LIMIT).fields()); // 100
        assertEquals(List.of(f(":status", "200")), fresh.decode(1, bytes("88"), NO_LIMIT).fields());
    }

    @Test
    void indexZeroAndIndexesInNeitherTableAreCompressionErrors() {
        assertCompressionError("80");
        assertCompressionError("be");
        assertCompressionError("7e0161"); // a literal whose name is entry 62, absent
    }

    @Test
    void integersPastTheBlockOrPast32BitsAreCompressionErrors() {
        assertCompressionError("ff");                 // the prefix is full: continuation octets must follow
        assertCompressionError("ff80");               // the continuation bit is set on the last octet
        assertCompressionError("ffffffffff0f");       // 127 + 2^35 - 1: over 2^32 - 1
        assertCompressionError("ff" + "80".repeat(64) + "01"); // zero octets do not make it loop or wrap
    }

    @Test
    void aStringLongerThanTheRestOfTheBlockIsACompressionError() {
        assertCompressionError("000a61");
        assertCompressionError("00016105");
        assertCompressionError("000161"); // no value at all
    }

    @Test
    void aHuffmanStringThatIsNotValidIsACompressionError() {
        // 30 one-bits then padding: the EOS symbol inside a string (RFC 7541 section 5.2)
        assertCompressionError("000161" + "84ffffffff");
    }

    /** RFC 9113 section 6.5.2: the decoded size counts name + value + 32 per field. */
    @Test
    void aListOverTheLimitIsDecodedToItsEndAndReportedNotKept() throws Exception {
        byte[] block = concat(literalWithIndexing("a", "x".repeat(100)), literalWithIndexing("b", "y".repeat(100)));
        HpackDecoder.Block decoded = decoder.decode(1, block, 150);
        assertTrue(decoded.overLimit());
        assertEquals(2 * (1 + 100 + 32), decoded.listSize());
        assertEquals(List.of(f("a", "x".repeat(100))), decoded.fields());
        // both were added to the table all the same: the next block's indexes agree with the peer's encoder
        assertEquals(List.of(f("b", "y".repeat(100)), f("a", "x".repeat(100))), decode("bebf"));
    }

    @Test
    void aListAtTheLimitIsNotOver() throws Exception {
        HpackDecoder.Block decoded = decoder.decode(1, literalWithIndexing("a", "b"), 34);
        assertFalse(decoded.overLimit());
        assertEquals(34, decoded.listSize());
    }

    /** One-octet references to a 4 KiB entry would decode to thousands of times the block: the limit bounds it. */
    @Test
    void referencesToALargeEntryKeepNoMoreThanTheLimit() throws Exception {
        ByteArrayOutputStream block = new ByteArrayOutputStream();
        block.writeBytes(literalWithIndexing("x", "y".repeat(4_000)));
        for (int i = 0; i < 60_000; i++) {
            block.write(0xbe);
        }
        HpackDecoder.Block decoded = decoder.decode(1, block.toByteArray(), Http2Reader.DEFAULT_MAX_HEADER_LIST_SIZE);
        assertTrue(decoded.overLimit());
        assertEquals(16, decoded.fields().size()); // 16 x 4,033 octets fit in 64 KiB
        assertEquals(60_001L * 4_033, decoded.listSize());
    }

    private List<HeaderField> decode(String hexBlock) throws Http2Error {
        return decoder.decode(1, bytes(hexBlock), NO_LIMIT).fields();
    }

    private void assertCompressionError(String hexBlock) {
        Http2Error e = assertThrows(Http2Error.class, () -> decoder.decode(1, bytes(hexBlock), NO_LIMIT));
        assertInstanceOf(Http2Error.ConnectionError.class, e);
        assertEquals(ErrorCode.COMPRESSION_ERROR, e.code(), e.getMessage());
    }

    private static HeaderField f(String name, String value) {
        return new HeaderField(name, value);
    }

    /** A literal with incremental indexing and a new name (RFC 7541 section 6.2.1), strings not Huffman-coded. */
    private static byte[] literalWithIndexing(String name, String value) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(0x40);
        string(out, name);
        string(out, value);
        return out.toByteArray();
    }

    private static void string(ByteArrayOutputStream out, String s) {
        int length = s.length();
        if (length < 127) {
            out.write(length);
        } else {
            out.write(127);
            length -= 127;
            while (length >= 128) {
                out.write((length & 0x7F) | 0x80);
                length >>>= 7;
            }
            out.write(length);
        }
        out.writeBytes(s.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] all = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }

    private static String hex(String ascii) {
        return HexFormat.of().formatHex(ascii.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    }

    private static byte[] bytes(String hex) {
        return HexFormat.of().parseHex(hex);
    }
}
