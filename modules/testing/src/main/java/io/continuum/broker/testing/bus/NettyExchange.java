package io.continuum.broker.testing.bus;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.logging.Level;
import java.util.logging.Logger;

import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.DefaultHttp2ResetFrame;
import io.netty.handler.codec.http2.DefaultHttp2WindowUpdateFrame;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2ResetFrame;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.util.ReferenceCountUtil;

/**
 * One stream of the {@link NettyBusServer}, as an {@link Exchange}: the event loop queues the request body's bytes,
 * and asks the child channel for more (which is what returns window to the broker) only once the handler has read
 * them all, so the router's receive window is replenished as its handler reads, as on Helidon. Response writes
 * block the handler's thread until Netty has written them, which is how the broker's window holds the router back.
 */
final class NettyExchange extends ChannelInboundHandlerAdapter implements Exchange {
    private static final Logger LOG = Logger.getLogger(NettyExchange.class.getName());

    private final Http2StreamChannel channel;
    private final Exchange.Handler handler;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition arrived = lock.newCondition();
    private final ArrayDeque<byte[]> inbound = new ArrayDeque<>(); // guarded by lock
    private int headOffset; // guarded by lock: bytes of inbound's first array already read
    private boolean requestEnded; // guarded by lock
    private IOException failure; // guarded by lock
    private boolean discarding; // guarded by lock: the handler is done, later request bytes are dropped
    private volatile Http2Headers request;
    private volatile boolean responseStarted;
    private volatile boolean responseEnded;

    NettyExchange(Http2StreamChannel channel, Exchange.Handler handler) {
        this.channel = channel;
        this.handler = handler;
    }

    // ---------------------------------------------------------------------------------------------------------
    // the event loop

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        ctx.read(); // the request's HEADERS
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            boolean readMore;
            if (msg instanceof Http2HeadersFrame h) {
                boolean first = request == null;
                if (first) {
                    request = h.headers();
                }
                if (h.isEndStream()) {
                    endRequest(null);
                }
                if (first) {
                    Thread.ofVirtual().name("router-netty-stream-" + channel.stream().id()).start(this::run);
                }
                readMore = true;
            } else if (msg instanceof Http2DataFrame d) {
                readMore = received(ByteBufUtil.getBytes(d.content()), d.isEndStream());
            } else {
                readMore = true;
            }
            if (readMore) {
                ctx.read();
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof Http2ResetFrame r) {
            endRequest(new IOException("stream " + channel.stream().id() + " reset by the broker: "
                    + Http2Error.valueOf(r.errorCode())));
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        endRequest(new IOException("stream " + channel.stream().id() + " closed"));
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        endRequest(new IOException("stream " + channel.stream().id() + " failed", cause));
    }

    /** @return whether to read on at once (nothing queued for the handler) */
    private boolean received(byte[] bytes, boolean endStream) {
        lock.lock();
        try {
            if (!discarding && bytes.length > 0) {
                inbound.add(bytes);
            }
            if (endStream) {
                requestEnded = true;
            }
            arrived.signalAll();
            return inbound.isEmpty() && !endStream;
        } finally {
            lock.unlock();
        }
    }

    private void endRequest(IOException cause) {
        lock.lock();
        try {
            if (cause != null && !requestEnded && failure == null) {
                failure = cause;
            }
            requestEnded = true;
            arrived.signalAll();
        } finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // the handler's thread

    private void run() {
        try {
            handler.serve(this);
        } catch (Exception e) {
            LOG.log(Level.FINE, "router handler failed", e);
        } finally {
            finish();
        }
    }

    /** As Helidon does when a handler returns: an unanswered stream is reset, an open body ended, the rest read. */
    private void finish() {
        if (!responseStarted) {
            reset();
        } else if (!responseEnded) {
            responseEnded = true;
            channel.writeAndFlush(new DefaultHttp2DataFrame(true));
        }
        lock.lock();
        try {
            discarding = true;
            inbound.clear();
        } finally {
            lock.unlock();
        }
        channel.config().setAutoRead(true);
    }

    @Override
    public String path() {
        return String.valueOf(request.path());
    }

    @Override
    public Map<String, String> headers() {
        Map<String, String> headers = new HashMap<>();
        for (Map.Entry<CharSequence, CharSequence> h : request) {
            String name = h.getKey().toString().toLowerCase(Locale.ROOT);
            if (!name.startsWith(":")) {
                headers.putIfAbsent(name, h.getValue().toString());
            }
        }
        return headers;
    }

    @Override
    public InputStream requestBody() {
        return new InputStream() {
            @Override
            public int read() throws IOException {
                byte[] one = new byte[1];
                return read(one, 0, 1) < 0 ? -1 : one[0] & 0xFF;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                if (len == 0) {
                    return 0;
                }
                boolean drained;
                int n;
                lock.lock();
                try {
                    while (inbound.isEmpty()) {
                        if (failure != null) {
                            throw failure;
                        }
                        if (requestEnded) {
                            return -1;
                        }
                        arrived.await();
                    }
                    byte[] head = inbound.peekFirst();
                    n = Math.min(len, head.length - headOffset);
                    System.arraycopy(head, headOffset, b, off, n);
                    headOffset += n;
                    if (headOffset == head.length) {
                        inbound.removeFirst();
                        headOffset = 0;
                    }
                    drained = inbound.isEmpty() && !requestEnded;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException("interrupted while reading the request body");
                } finally {
                    lock.unlock();
                }
                if (drained) {
                    channel.read(); // the next DATA; its bytes go back to the broker's window as they are read
                }
                return n;
            }
        };
    }

    @Override
    public void respond(int status, Map<String, String> headers, byte[] body) throws IOException {
        responseStarted = true;
        responseEnded = true;
        ChannelFuture headWritten = channel.write(new DefaultHttp2HeadersFrame(head(status, headers),
                body.length == 0));
        ChannelFuture bodyWritten = body.length == 0 ? headWritten
                : channel.write(new DefaultHttp2DataFrame(Unpooled.wrappedBuffer(body), true));
        channel.flush();
        await(headWritten);
        await(bodyWritten);
    }

    @Override
    public void informational(int status, Map<String, String> headers) throws IOException {
        if (status < 100 || status > 199) {
            throw new IllegalArgumentException("not informational: " + status);
        }
        // Netty's encoder lets any number of 1xx heads precede the final one on a stream
        await(channel.writeAndFlush(new DefaultHttp2HeadersFrame(head(status, headers), false)));
    }

    @Override
    public OutputStream startResponse(int status, Map<String, String> headers) throws IOException {
        responseStarted = true;
        await(channel.writeAndFlush(new DefaultHttp2HeadersFrame(head(status, headers), false)));
        return new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                if (len == 0) {
                    return;
                }
                if (responseEnded) {
                    throw new IOException("response body of stream " + channel.stream().id() + " already ended");
                }
                // waits until Netty wrote it: while the broker's window is shut, the writer waits here
                await(channel.writeAndFlush(new DefaultHttp2DataFrame(Unpooled.copiedBuffer(b, off, len), false)));
            }

            @Override
            public void close() throws IOException {
                if (!responseEnded) {
                    responseEnded = true;
                    await(channel.writeAndFlush(new DefaultHttp2DataFrame(true)));
                }
            }
        };
    }

    @Override
    public void reset() {
        responseStarted = true;
        responseEnded = true;
        channel.writeAndFlush(new DefaultHttp2ResetFrame(Http2Error.CANCEL));
    }

    @Override
    public void openConnectionWindow(int increment) {
        channel.parent().writeAndFlush(new DefaultHttp2WindowUpdateFrame(increment));
    }

    private static Http2Headers head(int status, Map<String, String> headers) {
        Http2Headers head = new DefaultHttp2Headers().status(Integer.toString(status));
        headers.forEach((name, value) -> head.add(name.toLowerCase(Locale.ROOT), value));
        return head;
    }

    private static void await(ChannelFuture write) throws IOException {
        try {
            write.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while writing to the broker");
        }
        if (!write.isSuccess()) {
            throw new IOException("write to the broker failed", write.cause());
        }
    }
}
