package io.continuum.broker.testing.bus;

import java.net.InetSocketAddress;
import java.security.cert.X509Certificate;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.SSLException;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http2.DefaultHttp2GoAwayFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.util.concurrent.DefaultThreadFactory;

/**
 * The {@link InProcessRouter}'s server on Netty's {@code codec-http2} ({@code Http2FrameCodec} with one child
 * channel per stream): an HTTP/2 implementation independent of Helidon's and of the project's own frame codec, so
 * a reading of RFC 9113 that all three shared would still have to survive Netty's. One event-loop thread; each
 * stream's handler runs on a virtual thread of its own ({@link NettyExchange}), as Helidon's do.
 */
final class NettyBusServer implements BusServer {
    private final EventLoopGroup group;
    private final Channel listener;
    private final Set<Channel> connections = ConcurrentHashMap.newKeySet();

    NettyBusServer(Options o, Exchange.Handler handler) {
        SslContext tls;
        try {
            tls = SslContextBuilder.forServer(o.key(), o.chain().toArray(X509Certificate[]::new))
                    .sslProvider(SslProvider.JDK)
                    .applicationProtocolConfig(new ApplicationProtocolConfig(ApplicationProtocolConfig.Protocol.ALPN,
                            ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                            ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
                            ApplicationProtocolNames.HTTP_2))
                    .build();
        } catch (SSLException e) {
            throw new IllegalStateException("the router's TLS context", e);
        }
        group = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("router-netty", true),
                NioIoHandler.newFactory());
        listener = new ServerBootstrap()
                .group(group)
                .channel(NioServerSocketChannel.class)
                .childOption(ChannelOption.TCP_NODELAY, o.tcpNoDelay())
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        connections.add(ch);
                        ch.closeFuture().addListener(f -> connections.remove(ch));
                        ch.pipeline().addLast(tls.newHandler(ch.alloc()),
                                Http2FrameCodecBuilder.forServer()
                                        .initialSettings(Http2Settings.defaultSettings()
                                                .maxConcurrentStreams(o.maxConcurrentStreams())
                                                .initialWindowSize(65_535))
                                        // the broker's tests reset streams by the thousand (unsubscribe churn)
                                        .decoderEnforceMaxRstFramesPerWindow(0, 0)
                                        // a close is a close (GOAWAY, then the socket), as Helidon's stop is:
                                        // Netty would otherwise wait up to 30 s for the open streams
                                        .gracefulShutdownTimeoutMillis(0)
                                        .build(),
                                new Http2MultiplexHandler(new ChannelInitializer<Http2StreamChannel>() {
                                    @Override
                                    protected void initChannel(Http2StreamChannel stream) {
                                        stream.config().setAutoRead(false); // read as the handler consumes
                                        stream.pipeline().addLast(new NettyExchange(stream, handler));
                                    }
                                }));
                    }
                })
                .bind(new InetSocketAddress("127.0.0.1", o.port()))
                .syncUninterruptibly()
                .channel();
    }

    @Override
    public int port() {
        return ((InetSocketAddress) listener.localAddress()).getPort();
    }

    @Override
    public void goAway() {
        for (Channel c : connections) {
            // the codec fills in the last-stream-id: the last stream the broker opened
            c.writeAndFlush(new DefaultHttp2GoAwayFrame(Http2Error.NO_ERROR)).syncUninterruptibly();
        }
    }

    @Override
    public void close() {
        listener.close().syncUninterruptibly();
        for (Channel c : connections) {
            c.close().syncUninterruptibly(); // its socket is closed when this returns
        }
        group.shutdownGracefully(0, 5, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
