#!/usr/bin/python3
"""What ran on each core while the slowest latency messages were in flight (added p99's profile).

    ISOLATE_SCHED_TRACE=DIR ISOLATE_WORKLOADS=latency bench/run.sh isolate 3
    bench/sched-trace.py DIR [top_episodes]

bench/isolate.py leaves, per measured latency run and path, stamps-PATH-N.txt (seq, send time, latency in ns, on
CLOCK_MONOTONIC) and sched-PATH-N.data (perf sched_switch on both cores, same clock). For each run this prints:
how long core 0 (the broker, or the stunnel client) and core 1 (peers, lean router, stunnel server) spent on which
threads while the slowest 1 % of messages were in flight, against the same for the median messages; and the
longest stall episodes (overlapping slow messages merged), each with its threads, so a p99 has a named cause.
Thread names are the kernel's (15 characters): the JVM names its own threads (ForkJoinPool-1-worker-N carry the
virtual threads, "C2 CompilerThre" is the JIT, "GC Thread#0" and "G1 ..." are G1).
"""
import bisect
import collections
import os
import re
import subprocess
import sys

SWITCH = re.compile(r"\[(\d+)\]\s+([\d.]+):.*?prev_comm=(.*?) prev_pid=(\d+) .*?==> next_comm=(.*?) next_pid=(\d+)")


def category(comm):
    """A thread name as a cause: the JVM's own threads by role, everything else by name."""
    if comm.startswith("swapper"):
        return "idle"
    if comm.startswith("ForkJoinPool"):
        role = "virtual-thread carrier"
    elif "CompilerThre" in comm:
        role = "JIT " + comm.split()[0]
    elif comm.startswith(("GC Thread", "G1 ", "VM Thread", "VM Periodic")):
        role = "GC/VM " + comm.split("#")[0].strip()
    elif comm in ("python3", "stunnel4", "perf"):
        role = comm
    elif re.match(r"(ksoftirqd|kworker|rcu_|migration|cpuhp)", comm):
        role = "kernel " + re.split(r"[/:]", comm)[0]
    else:
        role = "other: " + comm
    return role


def intervals(data):
    """Per core: sorted (start_ns, end_ns, comm) of every time slice in the trace."""
    out = subprocess.run(["perf", "script", "-i", data, "-F", "cpu,time,trace", "--ns"],
                         capture_output=True, text=True, check=True).stdout
    last = {}
    slices = collections.defaultdict(list)
    for line in out.splitlines():
        m = SWITCH.search(line)
        if not m:
            continue
        core, t = int(m.group(1)), int(round(float(m.group(2)) * 1e9))
        if core in last:
            start, comm = last[core]
            slices[core].append((start, t, comm))
        last[core] = (t, m.group(5))
    return slices


class Timeline:
    """One core's time slices, sorted, with their start times for bisection."""

    def __init__(self, slices):
        self.slices = slices
        self.starts = [s[0] for s in slices]


def time_on(timeline, lo, hi):
    """Nanoseconds per thread name on one core in [lo, hi)."""
    acc = collections.Counter()
    slices = timeline.slices
    i = max(0, bisect.bisect_right(timeline.starts, lo) - 1)
    while i < len(slices) and slices[i][0] < hi:
        s, e, comm = slices[i]
        overlap = min(e, hi) - max(s, lo)
        if overlap > 0:
            acc[comm] += overlap
        i += 1
    return acc


def by_category(acc):
    out = collections.Counter()
    for comm, ns in acc.items():
        out[category(comm)] += ns
    return out


def share_table(cores, slow, typical):
    rows = []
    for core in sorted(cores):
        a = collections.Counter()
        b = collections.Counter()
        for lo, hi in slow:
            a.update(by_category(time_on(cores[core], lo, hi)))
        for lo, hi in typical:
            b.update(by_category(time_on(cores[core], lo, hi)))
        ta, tb = sum(a.values()) or 1, sum(b.values()) or 1
        for cat in sorted(set(a) | set(b), key=lambda c: -a[c]):
            if a[cat] / ta >= 0.01 or b[cat] / tb >= 0.01:
                rows.append(f"| {core} | {cat} | {100 * a[cat] / ta:.1f} % | {100 * b[cat] / tb:.1f} % |")
    return rows


def episodes(slow):
    merged = []
    for lo, hi in sorted(slow):
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
            merged[-1][2] += 1
        else:
            merged.append([lo, hi, 1])
    return merged


def report(stamps_file, data_file, top):
    rows = [tuple(map(int, l.split())) for l in open(stamps_file)]
    lats = sorted(r[2] for r in rows)
    p99 = lats[int(0.99 * len(lats))]
    p50 = lats[len(lats) // 2]
    slow = [(t, t + d) for _, t, d in rows if d >= p99]
    # the messages closest to the median, as many as the slow ones: what a normal message's flight looks like
    typical = sorted(rows, key=lambda r: abs(r[2] - p50))[:len(slow)]
    typical = [(t, t + d) for _, t, d in typical]
    cores = {core: Timeline(slices) for core, slices in intervals(data_file).items()}
    print(f"\n### {os.path.basename(stamps_file)}: {len(rows)} messages, p50 {p50 / 1000:.0f} µs, "
          f"p99 {p99 / 1000:.0f} µs, max {lats[-1] / 1000:.0f} µs\n")
    print("Time on each core while the slowest 1 % were in flight, against the median messages:\n")
    print("| core | thread | slowest 1 % | median |")
    print("|---|---|---:|---:|")
    for r in share_table(cores, slow, typical):
        print(r)
    eps = sorted(episodes(slow), key=lambda e: e[0] - e[1])[:top]
    print(f"\nLongest stall episodes (slow messages in flight at once, merged):\n")
    for lo, hi, n in sorted(eps):
        parts = []
        for core in sorted(cores):
            acc = by_category(time_on(cores[core], lo, hi))
            busy = ", ".join(f"{c} {ns / 1000:.0f}" for c, ns in acc.most_common(4))
            parts.append(f"core {core}: {busy}")
        print(f"* {(lo - rows[0][1]) / 1e6:8.1f} ms into the run, {(hi - lo) / 1000:.0f} µs, {n} messages; "
              f"µs on " + "; ".join(parts))


def main():
    d = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    for f in sorted(os.listdir(d)):
        if f.startswith("stamps-"):
            data = os.path.join(d, f.replace("stamps-", "sched-").replace(".txt", ".data"))
            if os.path.exists(data):
                report(os.path.join(d, f), data, top)


if __name__ == "__main__":
    main()
