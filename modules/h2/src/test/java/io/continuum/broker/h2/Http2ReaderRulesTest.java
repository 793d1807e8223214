package io.continuum.broker.h2;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The frame-level rules of RFC 9113 the reader enforces, one per test, each reported as the typed error the RFC
 * names: a connection error for what breaks the connection, a stream error for what only breaks one stream.
 */
class Http2ReaderRulesTest {
    private final ByteArrayOutputStream wire = new ByteArrayOutputStream();
    private final Http2Writer writer = new Http2Writer(wire);
    private final Recorder seen = new Recorder();

    @Test
    void aFrameLongerThanTheMaximumFrameSizeIsAFrameSizeConnectionError() throws Exception {
        writer.frame(0x0, 0, 1, new byte[16_385]);
        assertConnectionError(ErrorCode.FRAME_SIZE_ERROR);
    }

    @Test
    void aLargerMaximumFrameSizeOnceSettledLetsLongerFramesIn() throws Exception {
        writer.frame(0x0, 0, 1, new byte[20_000]);
        writer.flush();
        Http2Reader reader = reader();
        reader.maxFrameSize(32_768);
        assertTrue(reader.nextFrame());
        assertEquals(1, seen.frames.size());
    }

    @Test
    void paddingIsRemovedFromDataAndCountedForFlowControl() throws Exception {
        writer.frame(0x0, 0x8 | 0x1, 1, new byte[] {3, 'h', 'i', 0, 0, 0});
        assertEquals(List.of("DATA 1 END_STREAM hi (6)"), readAll());
    }

    @Test
    void paddingLongerThanTheFrameIsAProtocolConnectionError() throws Exception {
        writer.frame(0x0, 0x8, 1, new byte[] {9, 'h', 'i'});
        assertConnectionError(ErrorCode.PROTOCOL_ERROR);
    }

    @Test
    void dataOnStreamZeroIsAProtocolConnectionError() throws Exception {
        writer.frame(0x0, 0, 0, bytes("x"));
        assertConnectionError(ErrorCode.PROTOCOL_ERROR);
    }

    @Test
    void headersOnStreamZeroIsAProtocolConnectionError() throws Exception {
        writer.frame(0x1, 0x4, 0, new byte[] {(byte) 0x88});
        assertConnectionError(ErrorCode.PROTOCOL_ERROR);
    }

    @Test
    void settingsPingAndGoAwayOnAStreamAreProtocolConnectionErrors() throws Exception {
        for (int type : new int[] {0x4, 0x6, 0x7}) {
            wire.reset();
            writer.frame(type, 0, 1, new byte[type == 0x4 ? 0 : 8]);
            assertConnectionError(ErrorCode.PROTOCOL_ERROR);
        }
    }

    @Test
    void aHeadersFrameSplitAcrossContinuationsIsHandedOverWhole() throws Exception {
        // :status 200 (static index 8) and :status 404 (index 13) split over HEADERS + CONTINUATION
        writer.frame(0x1, 0x1, 1, new byte[] {(byte) 0x88});
        writer.frame(0x9, 0x4, 1, new byte[] {(byte) 0x0F, 0x0D, 0x03, 'a', 'b', 'c'});
        assertEquals(List.of("HEADERS 1 END_STREAM 2 fields"), readAll());
    }

    @Test
    void anythingButContinuationInsideAHeaderBlockIsAProtocolConnectionError() throws Exception {
        writer.frame(0x1, 0, 1, new byte[] {(byte) 0x88});
        writer.frame(0x0, 0, 1, bytes("x"));
        assertConnectionError(ErrorCode.PROTOCOL_ERROR);
    }

    @Test
    void aContinuationOnAnotherStreamIsAProtocolConnectionError() throws Exception {
        writer.frame(0x1, 0, 1, new byte[] {(byte) 0x88});
        writer.frame(0x9, 0x4, 3, new byte[0]);
        assertConnectionError(ErrorCode.PROTOCOL_ERROR);
    }

    @Test
    void aContinuationWithoutHeadersIsAProtocolConnectionError() throws Exception {
        writer.frame(0x9, 0x4, 1, new byte[] {(byte) 0x88});
        assertConnectionError(ErrorCode.PROTOCOL_ERROR);
    }

    @Test
    void theStreamEndingInsideAHeaderBlockIsAnEndOfFile() throws Exception {
        writer.frame(0x1, 0, 1, new byte[] {(byte) 0x88});
        writer.flush();
        Http2Reader reader = reader();
        assertTrue(reader.nextFrame());
        assertThrows(EOFException.class, reader::nextFrame);
    }

    @Test
    void aHeaderBlockThatCannotBeDecodedIsACompressionConnectionError() throws Exception {
        writer.frame(0x1, 0x4, 1, new byte[] {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 0x7F});
        assertConnectionError(ErrorCode.COMPRESSION_ERROR);
    }

    @Test
    void aLoweredHeaderTableSizeMustBeAnnouncedAtTheStartOfTheNextBlock() throws Exception {
        writer.frame(0x1, 0x4, 1, new byte[] {(byte) 0x88}); // :status 200, no size update
        writer.flush();
        Http2Reader reader = reader();
        reader.headerTableSize(0);
        Http2Error e = assertThrows(Http2Error.class, reader::nextFrame);
        assertInstanceOf(Http2Error.ConnectionError.class, e, e.getMessage());
        assertEquals(ErrorCode.COMPRESSION_ERROR, e.code(), e.getMessage());
    }

    @Test
    void aBlockThatAnnouncesTheLoweredTableSizeIsDecodedAndLaterBlocksNeedNoUpdate() throws Exception {
        writer.frame(0x1, 0x4, 1, new byte[] {0x20, (byte) 0x88}); // size update to 0, :status 200
        writer.frame(0x1, 0x4, 3, new byte[] {(byte) 0x88});
        writer.flush();
        Http2Reader reader = reader();
        reader.headerTableSize(0);
        assertTrue(reader.nextFrame());
        assertTrue(reader.nextFrame());
        assertEquals(2, seen.headerBlocks.size());
    }

    @Test
    void aSizeUpdateAboveOurHeaderTableSizeIsACompressionConnectionError() throws Exception {
        writer.frame(0x1, 0x4, 1, new byte[] {0x3F, 0x01, (byte) 0x88}); // size update to 32, :status 200
        writer.flush();
        Http2Reader reader = reader();
        reader.headerTableSize(0);
        Http2Error e = assertThrows(Http2Error.class, reader::nextFrame);
        assertEquals(ErrorCode.COMPRESSION_ERROR, e.code(), e.getMessage());
    }

    @Test
    void headersWithPriorityAndPaddingAreReadPastBoth() throws Exception {
        // PADDED | PRIORITY | END_HEADERS: pad length 2, dependency 0 weight 16, :status 200, 2 bytes of padding
        writer.frame(0x1, 0x8 | 0x20 | 0x4, 1, new byte[] {2, 0, 0, 0, 0, 15, (byte) 0x88, 0, 0});
        assertEquals(List.of("HEADERS 1 1 fields"), readAll());
        assertEquals(List.of(new HeaderField(":status", "200")), seen.headerBlocks.get(0));
    }

    @Test
    void aStreamThatDependsOnItselfIsAProtocolStreamError() throws Exception {
        writer.frame(0x2, 0, 3, new byte[] {0, 0, 0, 3, 15});
        assertStreamError(3, ErrorCode.PROTOCOL_ERROR);
    }

    @Test
    void priorityOfTheWrongLengthIsAFrameSizeStreamError() throws Exception {
        writer.frame(0x2, 0, 3, new byte[4]);
        assertStreamError(3, ErrorCode.FRAME_SIZE_ERROR);
    }

    @Test
    void fixedLengthFramesOfAnotherLengthAreFrameSizeConnectionErrors() throws Exception {
        int[][] cases = {{0x3, 1, 3}, {0x6, 0, 7}, {0x8, 1, 5}, {0x4, 0, 5}, {0x7, 0, 7}};
        for (int[] c : cases) {
            wire.reset();
            writer.frame(c[0], 0, c[1], new byte[c[2]]);
            assertConnectionError(ErrorCode.FRAME_SIZE_ERROR);
        }
    }

    @Test
    void aSettingsAckWithAPayloadIsAFrameSizeConnectionError() throws Exception {
        writer.frame(0x4, 0x1, 0, new byte[6]);
        assertConnectionError(ErrorCode.FRAME_SIZE_ERROR);
    }

    @Test
    void settingsValuesOutOfRangeAreConnectionErrors() throws Exception {
        assertSettingRefused(0x2, 2, ErrorCode.PROTOCOL_ERROR);
        assertSettingRefused(0x4, 1L << 31, ErrorCode.FLOW_CONTROL_ERROR);
        assertSettingRefused(0x5, 16_383, ErrorCode.PROTOCOL_ERROR);
        assertSettingRefused(0x5, 1 << 24, ErrorCode.PROTOCOL_ERROR);
    }

    @Test
    void aZeroWindowIncrementIsAStreamErrorOnAStreamAndAConnectionErrorOnTheConnection() throws Exception {
        writer.frame(0x8, 0, 5, new byte[4]);
        assertStreamError(5, ErrorCode.PROTOCOL_ERROR);
        wire.reset();
        writer.frame(0x8, 0, 0, new byte[4]);
        assertConnectionError(ErrorCode.PROTOCOL_ERROR);
    }

    /**
     * RFC 9113 section 5.3.1 and 4.3: HEADERS whose stream depends on itself are a stream error, reported once the
     * block is decoded: the entry it adds is in the table for the next block, as the peer's encoder numbers it.
     */
    @Test
    void headersThatDependOnThemselvesAreAStreamErrorAfterTheBlockIsDecoded() throws Exception {
        writer.frame(0x1, 0x20 | 0x4, 3, new byte[] {0, 0, 0, 3, 15, 0x40, 1, 'a', 1, 'b'});
        writer.frame(0x1, 0x4, 5, new byte[] {(byte) 0xbe});
        writer.flush();
        Http2Reader reader = reader();
        Http2Error e = assertThrows(Http2Error.class, reader::nextFrame);
        assertEquals(3, assertInstanceOf(Http2Error.StreamError.class, e).streamId());
        assertEquals(ErrorCode.PROTOCOL_ERROR, e.code());
        assertTrue(reader.nextFrame());
        assertEquals(List.of(List.of(new HeaderField("a", "b"))), seen.headerBlocks);
    }

    /** RFC 9113 section 3.4: an endpoint that holds its peer to the preface takes SETTINGS first, nothing else. */
    @Test
    void aPeerHeldToItsPrefaceMustSendSettingsFirst() throws Exception {
        writer.ping(false, 7);
        writer.flush();
        Http2Reader reader = reader();
        reader.expectSettingsFirst();
        Http2Error e = assertThrows(Http2Error.ConnectionError.class, reader::nextFrame);
        assertEquals(ErrorCode.PROTOCOL_ERROR, e.code());

        wire.reset();
        writer.settingsAck();
        writer.flush();
        Http2Reader ackFirst = reader();
        ackFirst.expectSettingsFirst();
        assertEquals(ErrorCode.PROTOCOL_ERROR, assertThrows(Http2Error.ConnectionError.class, ackFirst::nextFrame)
                .code(), "a SETTINGS ACK is not the preface");

        wire.reset();
        writer.settings(java.util.Map.of());
        writer.ping(false, 8);
        writer.flush();
        Http2Reader settingsFirst = reader();
        settingsFirst.expectSettingsFirst();
        assertTrue(settingsFirst.nextFrame());
        assertTrue(settingsFirst.nextFrame());
        assertEquals(List.of("SETTINGS {}", "PING 8"), seen.frames);
    }

    /** RFC 9113 section 6.5.2: past SETTINGS_MAX_HEADER_LIST_SIZE a block is a stream error, decoded all the same. */
    @Test
    void aHeaderListOverTheLimitIsAStreamErrorAndTheTableStaysInStep() throws Exception {
        writer.frame(0x1, 0x4, 1, new byte[] {0x40, 1, 'a', 3, 'b', 'b', 'b', (byte) 0x88});
        writer.frame(0x1, 0x4, 3, new byte[] {(byte) 0x88, (byte) 0xbe});
        writer.flush();
        Http2Reader reader = reader();
        reader.maxHeaderListSize(40); // a: bbb is 36 octets, :status 200 another 42
        Http2Error e = assertThrows(Http2Error.StreamError.class, reader::nextFrame);
        assertEquals(ErrorCode.PROTOCOL_ERROR, e.code());
        reader.maxHeaderListSize(100);
        assertTrue(reader.nextFrame());
        assertEquals(List.of(List.of(new HeaderField(":status", "200"), new HeaderField("a", "bbb"))),
                seen.headerBlocks);
    }

    /** RFC 9113 section 10.5: a run of empty CONTINUATION frames changes nothing; past two, ENHANCE_YOUR_CALM. */
    @Test
    void moreThanTwoEmptyContinuationsInOneBlockAreEnhanceYourCalm() throws Exception {
        writer.frame(0x1, 0, 1, new byte[] {(byte) 0x88});
        writer.frame(0x9, 0, 1, new byte[0]);
        writer.frame(0x9, 0, 1, new byte[0]);
        writer.frame(0x9, 0x4, 1, new byte[0]); // an empty one that ends the block does something
        assertEquals(List.of("HEADERS 1 1 fields"), readAll());

        wire.reset();
        writer.frame(0x1, 0, 1, new byte[] {(byte) 0x88});
        for (int i = 0; i < 3; i++) {
            writer.frame(0x9, 0, 1, new byte[0]);
        }
        assertConnectionError(ErrorCode.ENHANCE_YOUR_CALM);
    }

    @Test
    void afterAStreamErrorTheNextFrameIsRead() throws Exception {
        writer.frame(0x8, 0, 5, new byte[4]);
        writer.ping(false, 7);
        writer.flush();
        Http2Reader reader = reader();
        assertThrows(Http2Error.StreamError.class, reader::nextFrame);
        assertTrue(reader.nextFrame());
        assertEquals(List.of("PING 7"), seen.frames);
    }

    @Test
    void pushPromiseIsAProtocolConnectionError() throws Exception {
        writer.frame(0x5, 0x4, 1, new byte[] {0, 0, 0, 2, (byte) 0x88});
        assertConnectionError(ErrorCode.PROTOCOL_ERROR);
    }

    @Test
    void framesOfUnknownTypesGoToTheHandlerAndReadingGoesOn() throws Exception {
        writer.frame(0xFA, 0, 9, new byte[] {1});
        writer.ping(true, 1);
        assertEquals(List.of("UNKNOWN 250 9 [1]", "PING ACK 1"), readAll());
    }

    @Test
    void theClientPrefaceIsChecked() throws Exception {
        Http2Reader.readClientPreface(new ByteArrayInputStream(Http2Reader.CLIENT_PREFACE));
        Http2Error e = assertThrows(Http2Error.class, () -> Http2Reader.readClientPreface(
                new ByteArrayInputStream("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII))));
        assertEquals(ErrorCode.PROTOCOL_ERROR, e.code());
    }

    @Test
    void theEndOfTheStreamBetweenFramesIsNoError() throws Exception {
        assertFalse(reader().nextFrame());
    }

    private void assertSettingRefused(int id, long value, ErrorCode code) throws Exception {
        wire.reset();
        byte[] p = {(byte) (id >>> 8), (byte) id, (byte) (value >>> 24), (byte) (value >>> 16), (byte) (value >>> 8),
                (byte) value};
        writer.frame(0x4, 0, 0, p);
        assertConnectionError(code);
    }

    private void assertConnectionError(ErrorCode code) throws Exception {
        writer.flush();
        Http2Error e = assertThrows(Http2Error.class, () -> {
            Http2Reader reader = reader();
            while (reader.nextFrame()) {
                // until the error
            }
        });
        assertInstanceOf(Http2Error.ConnectionError.class, e, e.getMessage());
        assertEquals(code, e.code(), e.getMessage());
    }

    private void assertStreamError(int streamId, ErrorCode code) throws Exception {
        writer.flush();
        Http2Error e = assertThrows(Http2Error.class, () -> reader().nextFrame());
        Http2Error.StreamError s = assertInstanceOf(Http2Error.StreamError.class, e, e.getMessage());
        assertEquals(streamId, s.streamId());
        assertEquals(code, e.code(), e.getMessage());
    }

    private List<String> readAll() throws Exception {
        writer.flush();
        Http2Reader reader = reader();
        while (reader.nextFrame()) {
            // every frame goes to the recorder
        }
        return seen.frames;
    }

    private Http2Reader reader() {
        return new Http2Reader(new ByteArrayInputStream(wire.toByteArray()), seen);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
