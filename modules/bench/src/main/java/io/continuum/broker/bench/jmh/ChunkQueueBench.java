package io.continuum.broker.bench.jmh;

import java.util.concurrent.TimeUnit;

import io.continuum.broker.relay.stream.ChunkQueue;
import io.continuum.broker.relay.stream.SessionBudget;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * {@code ChunkQueue} (package {@code relay.stream}, not exported: runs on the class path): one chunk's
 * offer, take and written on one thread (the uncontended cost per chunk), and a producer/consumer pair as
 * the two pump threads of a stream use it.
 */
@State(Scope.Group)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(1)
public class ChunkQueueBench {
    private final byte[] chunk = new byte[4_096];
    private ChunkQueue queue;

    @Setup
    public void setUp() {
        queue = new ChunkQueue(1_048_576, new SessionBudget(SessionBudget.DEFAULT_LIMIT_BYTES));
    }

    @TearDown
    public void tearDown() {
        queue.close();
    }

    @Benchmark
    @Group("single")
    public byte[] offerTakeWritten() throws InterruptedException {
        if (!queue.offer(chunk)) {
            throw new IllegalStateException("overflow");
        }
        byte[] c = queue.take();
        queue.written(c);
        return c;
    }

    /**
     * The reading pump: offers while half the budget is free (an overflow here would reset a real stream).
     * Never waits: when the consumer has stopped at the end of an iteration, a waiting producer would hang.
     */
    @Benchmark
    @Group("pair")
    @GroupThreads(1)
    public boolean producer() {
        if (queue.usedBytes() > 512 * 1024) {
            Thread.onSpinWait();
            return false;
        }
        return queue.offer(chunk);
    }

    @Benchmark
    @Group("pair")
    @GroupThreads(1)
    public void consumer(Blackhole bh) throws InterruptedException {
        byte[] c = queue.poll(10, TimeUnit.MILLISECONDS);
        if (c != null) {
            queue.written(c);
            bh.consume(c);
        }
    }
}
