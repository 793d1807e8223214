package io.continuum.broker.app.observe;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.List;

import io.helidon.metrics.api.MeterRegistry;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmHeapPressureMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;

/** The JVM's and the process's standard meters beside the broker's own (see {@link BrokerMetrics}). */
final class JvmProcessMeters {
    private JvmProcessMeters() {
    }

    /**
     * Micrometer's standard binders on the registry's Micrometer side; the one that holds a JMX
     * notification listener (heap pressure) goes into {@code binders}, which {@link BrokerMetrics#close()} closes.
     *
     * <p>Every meter is registered here, once: none may be registered later from another thread. Helidon's
     * registry takes its own lock, then Micrometer's, to register or remove a meter; a meter that Micrometer
     * registers by itself reaches Helidon's lock through its meter-added hook, in the other order. That is
     * why Micrometer's {@code JvmGcMetrics} is not bound: it registers a pause timer per kind of collection
     * on the JMX notification thread when that kind first happens, and a collection during the server's
     * start or stop deadlocked the two threads. Collections are counted from the collectors' own totals
     * instead ({@code jvm_gc_collections_total} and {@code jvm_gc_collection_seconds_total}, registered up
     * front per collector).
     */
    static void bind(MeterRegistry registry, List<AutoCloseable> binders) {
        io.micrometer.core.instrument.MeterRegistry micrometer =
                registry.unwrap(io.micrometer.core.instrument.MeterRegistry.class);
        JvmHeapPressureMetrics pressure = new JvmHeapPressureMetrics();
        binders.add(pressure);
        for (MeterBinder b : List.of(new JvmMemoryMetrics(), pressure, new JvmThreadMetrics(),
                                     new ClassLoaderMetrics(), new FileDescriptorMetrics(), new UptimeMetrics())) {
            b.bindTo(micrometer);
        }
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            // A bounded label: the JVM's collectors (Serial's two, G1's two or three). Two counters, not a FunctionTimer:
            // Helidon's registry has no wrapper for a FunctionTimer and keeps a null for it, which breaks
            // its close (NPE when the next server replaces the global registry).
            FunctionCounter.builder("jvm.gc.collections", gc, GarbageCollectorMXBean::getCollectionCount)
                    .tag("gc", gc.getName())
                    .description("Collections by this collector (its own total)")
                    .register(micrometer);
            FunctionCounter.builder("jvm.gc.collection", gc, g -> g.getCollectionTime() / 1e3)
                    .tag("gc", gc.getName())
                    .baseUnit("seconds")
                    .description("Time this collector spent collecting (its own total; for a concurrent collector "
                                 + "this includes concurrent phases, not only pauses)")
                    .register(micrometer);
        }
        // Not Micrometer's ProcessorMetrics: its process_cpu_time_ns_total and system_cpu_count fail promtool's
        // lint (abbreviated unit, _count suffix on a gauge). The Prometheus client's own name instead.
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            FunctionCounter.builder("process.cpu", os, o -> o.getProcessCpuTime() / 1e9)
                    .baseUnit("seconds")
                    .description("CPU time used by the broker's process")
                    .register(micrometer);
            io.micrometer.core.instrument.Gauge.builder("process.cpu.usage", os,
                                                        com.sun.management.OperatingSystemMXBean::getProcessCpuLoad)
                    .description("Recent CPU usage of the broker's process, 0 to 1 of all processors available to it")
                    .register(micrometer);
        }
    }

}
