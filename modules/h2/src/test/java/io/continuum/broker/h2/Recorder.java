package io.continuum.broker.h2;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/** A handler that writes down every frame it is given, one line each, for tests to compare. */
final class Recorder implements FrameHandler {
    final List<String> frames = new ArrayList<>();
    final List<List<HeaderField>> headerBlocks = new ArrayList<>();

    @Override
    public void data(int streamId, boolean endStream, ByteBuffer data, int flowControlled) {
        byte[] bytes = new byte[data.remaining()];
        data.get(bytes);
        frames.add("DATA " + streamId + (endStream ? " END_STREAM" : "") + " " + new String(bytes) + " (" + flowControlled + ")");
    }

    @Override
    public void headers(int streamId, boolean endStream, List<HeaderField> fields) {
        headerBlocks.add(fields);
        frames.add("HEADERS " + streamId + (endStream ? " END_STREAM" : "") + " " + fields.size() + " fields");
    }

    @Override
    public void priority(int streamId, int dependency, int weight, boolean exclusive) {
        frames.add("PRIORITY " + streamId + " on " + dependency + " weight " + weight + (exclusive ? " exclusive" : ""));
    }

    @Override
    public void rstStream(int streamId, int errorCode) {
        frames.add("RST_STREAM " + streamId + " " + errorCode);
    }

    @Override
    public void settings(boolean ack, Map<Integer, Long> settings) {
        frames.add("SETTINGS" + (ack ? " ACK" : " " + settings));
    }

    @Override
    public void ping(boolean ack, long payload) {
        frames.add("PING" + (ack ? " ACK " : " ") + payload);
    }

    @Override
    public void goAway(int lastStreamId, int errorCode, byte[] debugData) {
        frames.add("GOAWAY " + lastStreamId + " " + errorCode + " " + new String(debugData));
    }

    @Override
    public void windowUpdate(int streamId, int increment) {
        frames.add("WINDOW_UPDATE " + streamId + " " + increment);
    }

    @Override
    public void unknown(int type, int flags, int streamId, byte[] payload) {
        frames.add("UNKNOWN " + type + " " + streamId + " " + Arrays.toString(payload));
    }
}
