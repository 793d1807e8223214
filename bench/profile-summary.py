#!/usr/bin/python3
"""Summarises an async-profiler collapsed-stack file of the broker (bench/isolate.py with ISOLATE_PROFILE) into
where its CPU goes. Each sample is charged to the first frame, walking from the leaf towards the root, that
matches a category below (so a socket write inside the relay counts as the write, and a park as the hand-off).

    bench/profile-summary.py FILE.collapsed [top]
"""
import collections
import re
import sys

RULES = [
    ("JIT compilers", r"CompileBroker::|C2Compiler|Compilation::"),
    ("GC", r"G1|GCTaskThread|WorkerThread::run|ConcurrentGCThread|VMThread"),
    ("TLS crypto (AES-GCM, GHASH)", r"com/sun/crypto/provider|sun/security/ssl/SSLCipher"),
    ("socket write syscall", r"SocketDispatcher\.write|NioSocketImpl\.implWrite|IOUtil\.write|FileDispatcherImpl\.write"),
    ("socket read syscall and poll", r"SocketDispatcher\.read|NioSocketImpl\.implRead|IOUtil\.read|Net\.poll|EPoll|Poller"),
    ("TLS record layer (JSSE)", r"sun/security/ssl"),
    ("thread hand-off: virtual thread park/unpark, carrier scheduling",
     r"VirtualThread\.(park|unpark|yield|parkNanos|submitRunContinuation|afterYield)|ForkJoinPool\.(awaitWork|signalWork|runWorker|scan|push|poll)|LockSupport|Unsafe\.(park|unpark)|Continuation\.(yield|run)"),
    ("HTTP/2 framing and flow control (Helidon client)", r"io/helidon"),
    ("relay (session, transport, ChunkQueue)", r"io/continuum"),
    ("allocation and copying in the JDK", r"java/nio/|java/util/Arrays|System\.arraycopy"),
]
COMPILED = [(n, re.compile(p)) for n, p in RULES]


def main():
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 12
    total = 0
    cats = collections.Counter()
    selfs = collections.Counter()
    methods = collections.Counter()
    for line in open(sys.argv[1]):
        stack, n = line.rstrip().rsplit(" ", 1)
        n = int(n)
        total += n
        frames = stack.split(";")
        selfs[frames[-1]] += n
        for f in set(frames):
            if f.startswith("io/continuum/broker/relay") or f.startswith("io/helidon"):
                methods[f] += n
        for f in reversed(frames):
            hit = next((name for name, rx in COMPILED if rx.search(f)), None)
            if hit:
                cats[hit] += n
                break
        else:
            cats["other (JVM, kernel, interpreter)"] += n
    print(f"{total} samples (1 ms CPU each)\n")
    print("| where | share of the broker's CPU |\n|---|---:|")
    for k, v in cats.most_common():
        print(f"| {k} | {100 * v / total:.1f} % |")
    print(f"\nTop {top} frames by self time:\n")
    for k, v in selfs.most_common(top):
        print(f"* {100 * v / total:.1f} % `{k}`")
    print(f"\nTop {top} relay and Helidon methods by inclusive time:\n")
    for k, v in methods.most_common(top):
        print(f"* {100 * v / total:.1f} % `{k}`")


if __name__ == "__main__":
    main()
