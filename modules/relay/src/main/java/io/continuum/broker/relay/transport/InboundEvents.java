package io.continuum.broker.relay.transport;

import java.util.ArrayList;
import java.util.List;

/**
 * What the sniffer reports about inbound frames, applied to a {@link HelidonBusConnection}'s windows, slots and
 * streams. Runs on the connection's reader thread, before Helidon processes the same frames.
 */
final class InboundEvents implements InboundFrameSniffer.Listener {
    private final HelidonBusConnection connection;

    InboundEvents(HelidonBusConnection connection) {
        this.connection = connection;
    }

    @Override
    public void settings(List<long[]> values) {
        connection.lock.lock();
        try {
            for (long[] setting : values) {
                if (setting[0] == Http2Frames.SETTINGS_MAX_CONCURRENT_STREAMS) {
                    connection.slots().limit(setting[1]);
                } else if (setting[0] == Http2Frames.SETTINGS_INITIAL_WINDOW_SIZE) {
                    long delta = connection.windowsLocked().peerInitialWindow(setting[1]);
                    for (HelidonBusStream stream : connection.streamsLocked().all()) {
                        stream.adjustSendWindowLocked(delta);
                    }
                }
            }
        } finally {
            connection.lock.unlock();
        }
        connection.settingsArrived();
    }

    @Override
    public void windowUpdate(int streamId, int increment) {
        connection.lock.lock();
        try {
            if (streamId == 0) {
                connection.growSendWindowLocked(increment);
            } else {
                connection.streamsLocked().onStream(streamId, s -> s.adjustSendWindowLocked(increment));
            }
        } finally {
            connection.lock.unlock();
        }
    }

    @Override
    public void pingAck(long opaque) {
        connection.keepalive().acknowledged(opaque);
    }

    @Override
    public void goAway(int lastStreamId, long errorCode) {
        connection.fail(ConnectionLostException.Reason.GOAWAY,
                "peer sent GOAWAY " + Http2ErrorCodes.name(errorCode) + " (last stream " + lastStreamId + ")", null);
    }

    @Override
    public void rstStream(int streamId, long errorCode) {
        List<HelidonBusStream> reset = new ArrayList<>(1);
        connection.lock.lock();
        try {
            connection.streamsLocked().onStream(streamId, s -> {
                if (s.resetByPeerLocked(errorCode)) {
                    reset.add(s);
                }
            });
        } finally {
            connection.lock.unlock();
        }
        reset.forEach(HelidonBusStream::wakeHelidonReader);
    }

    @Override
    public void data(int streamId, int length, boolean endStream) {
        int connectionIncrement = 0;
        boolean violation;
        connection.lock.lock();
        try {
            violation = !connection.windowsLocked().received(length);
            StreamTable streams = connection.streamsLocked();
            HelidonBusStream stream = streams.get(streamId);
            if (stream != null) {
                violation |= !stream.receivedLocked(length, endStream);
            } else if (streams.isOpening(streamId)) {
                streams.dataArrived(streamId, endStream, s -> s.receivedLocked(length, endStream));
            } else {
                // a stream gone while its frame went by (a cancel): nobody will release these bytes
                connectionIncrement = connection.creditConnectionLocked(length);
            }
        } finally {
            connection.lock.unlock();
        }
        if (violation) {
            connection.fail(ConnectionLostException.Reason.PROTOCOL, "peer exceeded the receive window", null);
            return;
        }
        connection.sendWindowUpdate(0, connectionIncrement);
    }

    @Override
    public void headers(int streamId, boolean endStream) {
        connection.lock.lock();
        try {
            connection.streamsLocked().headersArrived(streamId, endStream, s -> s.headersLocked(endStream));
        } finally {
            connection.lock.unlock();
        }
    }

    /**
     * DATA a stream does not allow (before its response HEADERS, after its END_STREAM) is refused here and the stream
     * reset, so that only that stream ends (RFC 9113 sections 8.1.1 and 5.1), not the connection with every other
     * stream, as Helidon's client would. A stream still being opened is reset once registered
     * ({@link HelidonBusConnection}). DATA for a stream that is done is refused and ignored.
     */
    @Override
    public boolean admitData(int streamId) {
        DataVerdict verdict;
        HelidonBusStream violated = null;
        connection.lock.lock();
        try {
            StreamTable streams = connection.streamsLocked();
            verdict = streams.dataVerdict(streamId);
            if (verdict.resetsStream()) {
                violated = streams.get(streamId);
            }
        } finally {
            connection.lock.unlock();
        }
        if (violated != null) {
            violated.resetMalformedResponse(verdict);
        }
        return verdict == DataVerdict.PASS;
    }

    @Override
    public void dataDropped(int streamId, int length) {
        int connectionIncrement;
        connection.lock.lock();
        try {
            if (!connection.windowsLocked().received(length)) {
                connectionIncrement = -1;
            } else {
                // nobody will release these bytes: the connection's window gets them back now
                connectionIncrement = connection.creditConnectionLocked(length);
            }
        } finally {
            connection.lock.unlock();
        }
        if (connectionIncrement < 0) {
            connection.fail(ConnectionLostException.Reason.PROTOCOL, "peer exceeded the receive window", null);
            return;
        }
        connection.sendWindowUpdate(0, connectionIncrement);
    }
}
