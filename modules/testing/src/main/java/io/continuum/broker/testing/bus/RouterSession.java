package io.continuum.broker.testing.bus;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;

import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.FrameCodec;
import io.continuum.broker.protocol.Target;

/**
 * The router's view of one session: the broker's {@code hello}, every frame it sent since, and a
 * way to send router frames. Thread-safe.
 */
public final class RouterSession {
    private final InProcessRouter router;
    private final Frame.Hello hello;
    private final String sessionId;
    private final OutputStream out;
    private final ReentrantLock writeLock = new ReentrantLock();
    private final java.util.ArrayList<Frame> received = new java.util.ArrayList<>();
    private final java.util.concurrent.locks.ReentrantLock lock = new java.util.concurrent.locks.ReentrantLock();
    private final java.util.concurrent.locks.Condition arrived = lock.newCondition();
    private final CountDownLatch ended = new CountDownLatch(1);
    private final CountDownLatch finish = new CountDownLatch(1);
    private volatile boolean abort;
    private volatile String endCause;

    RouterSession(InProcessRouter router, Frame.Hello hello, String sessionId, OutputStream out) {
        this.router = router;
        this.hello = hello;
        this.sessionId = sessionId;
        this.out = out;
    }

    /**
     * The broker's hello.
     *
     * @return hello
     */
    public Frame.Hello hello() {
        return hello;
    }

    /**
     * Session id sent in welcome (null when no welcome was sent).
     *
     * @return session id
     */
    public String sessionId() {
        return sessionId;
    }

    /**
     * Sends a router frame.
     */
    public void send(Frame.RouterFrame frame) {
        sendRaw(FrameCodec.encode(frame));
    }

    /**
     * Sends raw bytes on the session stream (for malformed-frame tests).
     */
    public void sendRaw(byte[] bytes) {
        writeLock.lock();
        try {
            out.write(bytes);
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            writeLock.unlock();
        }
    }

    /**
     * Sends {@code subscribe} for a {@code zmq_tcp} target and expects its data stream.
     */
    public void subscribe(long streamId, String namespace, String host, int port) {
        subscribe(streamId, new Target.ZmqTcp(namespace, host, port));
    }

    /**
     * Sends {@code subscribe} and expects its data stream.
     */
    public void subscribe(long streamId, Target target) {
        router.expectStream(streamId);
        send(new Frame.Subscribe(streamId, target));
    }

    /**
     * Sends {@code unsubscribe}.
     */
    public void unsubscribe(long streamId) {
        router.forgetStream(streamId);
        send(new Frame.Unsubscribe(streamId));
    }

    /**
     * Waits for the next frame of {@code type} that matches, skipping heartbeats and other frames.
     *
     * @param type    frame class
     * @param matches condition
     * @param timeout longest wait
     * @return the frame
     * @throws AssertionError when none arrives in time
     */
    public <T extends Frame> T await(Class<T> type, Predicate<? super T> matches, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        lock.lock();
        try {
            while (true) {
                // Frames that do not match stay for later awaits: answers to concurrent subscribes
                // may arrive in any order.
                for (java.util.Iterator<Frame> it = received.iterator(); it.hasNext(); ) {
                    Frame f = it.next();
                    if (type.isInstance(f) && matches.test(type.cast(f))) {
                        it.remove();
                        return type.cast(f);
                    }
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new AssertionError("no " + type.getSimpleName() + " within " + timeout);
                }
                arrived.awaitNanos(left);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits for the answer to a subscribe: {@code stream_opened} or {@code stream_refused}.
     *
     * @param timeout  longest wait
     * @return the answer
     */
    public Frame.ClientFrame awaitAnswer(long streamId, Duration timeout) {
        return await(Frame.ClientFrame.class, f -> (f instanceof Frame.StreamOpened o && o.streamId() == streamId)
                || (f instanceof Frame.StreamRefused r && r.streamId() == streamId), timeout);
    }

    /**
     * Everything received so far that was not consumed by an await, in order.
     *
     * @return frames
     */
    public List<Frame> drainReceived() {
        lock.lock();
        try {
            List<Frame> list = List.copyOf(received);
            received.clear();
            return list;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Closes the session's response body. Note: Helidon's server does not put END_STREAM on the wire
     * for a response whose request body is still open, so the broker may not see it; tests of
     * {@code router_closed} by END_STREAM use the raw HTTP/2 peer instead.
     */
    public void end() {
        writeLock.lock();
        try {
            out.close();
        } catch (IOException | RuntimeException ignored) {
            // already gone
        } finally {
            writeLock.unlock();
            finish.countDown();
        }
    }

    /**
     * Aborts the session stream with an error (the server resets it).
     */
    public void reset() {
        abort = true;
        finish.countDown();
    }

    /**
     * Waits until the broker ends its request body or the stream ends.
     *
     * @param timeout longest wait
     * @return true when ended in time
     */
    public boolean awaitEnded(Duration timeout) {
        try {
            return ended.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Why the broker's side ended: {@code end_stream}, or an exception's text.
     *
     * @return cause, null while open
     */
    public String endCause() {
        return endCause;
    }

    /**
     * Sends {@code heartbeat} every {@code interval} until the session finishes (the router ends or resets it, or
     * the broker's side ends), on a virtual thread of its own. A write that fails ends the heartbeats: the
     * connection is gone.
     */
    void startHeartbeats(Duration interval) {
        Thread.ofVirtual().name("router-heartbeats").start(() -> {
            try {
                while (!finish.await(interval.toNanos(), TimeUnit.NANOSECONDS)) {
                    send(Frame.Heartbeat.INSTANCE);
                }
            } catch (InterruptedException | RuntimeException e) {
                // the session is over
            }
        });
    }

    void received(Frame frame) {
        lock.lock();
        try {
            received.add(frame);
            arrived.signalAll();
        } finally {
            lock.unlock();
        }
    }

    void brokerEnded(String cause) {
        endCause = cause;
        ended.countDown();
        finish.countDown();
    }

    boolean awaitFinish() throws InterruptedException {
        finish.await();
        return abort;
    }
}
