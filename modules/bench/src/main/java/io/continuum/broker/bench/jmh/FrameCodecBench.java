package io.continuum.broker.bench.jmh;

import java.util.List;
import java.util.concurrent.TimeUnit;

import io.continuum.broker.protocol.Code;
import io.continuum.broker.protocol.Frame;
import io.continuum.broker.protocol.FrameCodec;
import io.continuum.broker.protocol.FrameDecoder;
import io.continuum.broker.protocol.ProtocolException;
import io.continuum.broker.protocol.Target;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/** Session-stream frames the broker encodes (its answers) and decodes (the router's requests). */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(1)
public class FrameCodecBench {
    private final Frame.StreamOpened opened = new Frame.StreamOpened(4_242L);
    private final Frame.StreamClosed closed = new Frame.StreamClosed(4_242L, Code.BUFFER_OVERFLOW);
    private byte[] subscribeWire;
    private byte[] heartbeatWire;
    private FrameDecoder<Frame.RouterFrame> decoder;

    @Setup
    public void setUp() {
        subscribeWire = FrameCodec.encode(new Frame.Subscribe(4_242L,
                new Target.ZmqTcp("dynamo", "10.244.17.201", 5_557)));
        heartbeatWire = FrameCodec.encode(new Frame.Heartbeat());
        decoder = FrameDecoder.forRouterFrames();
    }

    @Benchmark
    public byte[] encodeStreamOpened() {
        return FrameCodec.encode(opened);
    }

    @Benchmark
    public byte[] encodeStreamClosed() {
        return FrameCodec.encode(closed);
    }

    @Benchmark
    public List<Frame.RouterFrame> decodeSubscribe() throws ProtocolException {
        return decoder.decode(subscribeWire);
    }

    @Benchmark
    public List<Frame.RouterFrame> decodeHeartbeat() throws ProtocolException {
        return decoder.decode(heartbeatWire);
    }
}
