package io.continuum.broker.relay;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Predicate;

import io.continuum.broker.protocol.BusProtocol;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.FrameDecoder;
import io.continuum.broker.protocol.ProtocolException;
import io.continuum.broker.relay.transport.BusConnectException;
import io.continuum.broker.relay.transport.BusConnection;
import io.continuum.broker.relay.transport.BusConnector;
import io.continuum.broker.relay.transport.BusEndpoint;
import io.continuum.broker.relay.transport.BusStream;
import io.continuum.broker.relay.transport.ResponseHead;
import io.continuum.broker.relay.transport.SlotTimeoutException;
import io.continuum.broker.relay.transport.StreamRequest;
import io.continuum.broker.relay.transport.TrackingConnector;
import io.continuum.broker.relay.transport.TransportException;

/**
 * The real transport (a {@link TrackingConnector}) with a tap on the session stream: a test can hold the broker
 * thread that has just written a chosen bus frame (the frame is on the wire, the code after the write has not run)
 * until a condition holds, to pin what the broker's state is by the time the router can react to that frame.
 * One hold at a time, each used once; a hold that is not satisfied gives up after the test's wait.
 */
final class SessionTapConnector implements BusConnector {
    private final TrackingConnector tracking = new TrackingConnector();
    private final List<Frame> written = new CopyOnWriteArrayList<>();
    private volatile Predicate<Frame> holdAfter;
    private volatile BooleanSupplier until;
    private volatile Duration wait = BrokerHarness.WAIT;

    TrackingConnector tracking() {
        return tracking;
    }

    /**
     * @param frame which written frame to hold the writer after (once)
     * @param until what releases it
     */
    void holdAfter(Predicate<Frame> frame, BooleanSupplier until) {
        this.until = until;
        this.holdAfter = frame;
    }

    /** @return every bus frame the broker wrote on session streams, in order */
    List<Frame> written() {
        return List.copyOf(written);
    }

    @Override
    public BusConnection connect(BusEndpoint endpoint) throws BusConnectException {
        BusConnection delegate = tracking.connect(endpoint);
        return new BusConnection() {
            @Override
            public BusStream open(StreamRequest request, Duration slotTimeout, BooleanSupplier commit)
                    throws TransportException {
                BusStream s = delegate.open(request, slotTimeout, commit);
                return s != null && request.path().equals(BusProtocol.SESSION_PATH) ? new Tapped(s) : s;
            }

            @Override
            public boolean isOpen() {
                return delegate.isOpen();
            }

            @Override
            public void onClose(Consumer<TransportException> listener) {
                delegate.onClose(listener);
            }

            @Override
            public void onGoAway(Runnable listener) {
                delegate.onGoAway(listener);
            }

            @Override
            public void onStreamIdsRunningOut(Runnable listener) {
                delegate.onStreamIdsRunningOut(listener);
            }

            @Override
            public void close() {
                delegate.close();
            }
        };
    }

    private final class Tapped implements BusStream {
        private final BusStream delegate;
        private final FrameDecoder<Frame> decoder = FrameDecoder.forClientFrames();

        Tapped(BusStream delegate) {
            this.delegate = delegate;
        }

        @Override
        public void write(ByteBuffer data) throws TransportException {
            ByteBuffer copy = data.duplicate();
            delegate.write(data);
            List<Frame> frames;
            try {
                frames = decoder.decode(copy);
            } catch (ProtocolException e) {
                throw new IllegalStateException("the broker wrote an undecodable frame", e);
            }
            for (Frame f : frames) {
                written.add(f);
                Predicate<Frame> hold = holdAfter;
                if (hold != null && hold.test(f)) {
                    holdAfter = null;
                    BooleanSupplier release = until;
                    long deadline = System.nanoTime() + wait.toNanos();
                    while (!release.getAsBoolean() && System.nanoTime() < deadline) {
                        LockSupport.parkNanos(5_000_000L);
                    }
                }
            }
        }

        @Override
        public boolean tryAdd(ByteBuffer data) {
            return false; // every byte goes through write, which the tap decodes
        }

        @Override
        public void flush() throws TransportException {
            delegate.flush();
        }

        @Override
        public long id() {
            return delegate.id();
        }

        @Override
        public long slotGrantedNanos() {
            return delegate.slotGrantedNanos();
        }

        @Override
        public void endRequest() throws TransportException {
            delegate.endRequest();
        }

        @Override
        public ResponseHead awaitResponseHead(Duration timeout) throws TimeoutException, TransportException {
            return delegate.awaitResponseHead(timeout);
        }

        @Override
        public TransportException failure() {
            return delegate.failure();
        }

        @Override
        public ByteBuffer read() throws TransportException {
            return delegate.read();
        }

        @Override
        public void release(int n) {
            delegate.release(n);
        }

        @Override
        public boolean awaitClosed(Duration timeout) throws InterruptedException {
            return delegate.awaitClosed(timeout);
        }

        @Override
        public void cancel() {
            delegate.cancel();
        }
    }
}
