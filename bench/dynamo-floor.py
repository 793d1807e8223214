#!/usr/bin/python3
"""The floor of the Dynamo-shaped load on this machine (docs/benchmarks.md, "The floor"): what it costs to publish
the load, and to do nothing with it but read it, with no broker, TLS or router in between.

    bench/dynamo-floor.py PEERS_DIR [runs]        (bench/run.sh floor builds PEERS_DIR and calls this)

The C peers (bench/zmtp-peers.c) connect their SUB side straight to their PUBs. The PUBs' thread (the schedule) runs
on core 1, as in bench/isolate.py; the SUB side's thread alone on core 0, the broker's core, reading every one of the
256 sockets with epoll and checking every message, as the subscriber side always does. Two readers: "eager"
(zmtp-peers-eager: each socket read as soon as it is ready, one read per message at these rates, as a relay must
read) and "napping" (zmtp-peers: 2 ms between rounds, several messages per read). Each at the nominal rates and at
half of them, seeded as bench/isolate.py's runs are (seed 18 + run). CPU from /proc: the process's, and the PUBs'
thread's; the SUB side's is the difference.

The broker reads the same sockets eagerly and does more with every byte (TLS, HTTP/2, its queues), on the same core:
the eager reader's CPU at the nominal rate is a floor under the broker's there.
"""
import os
import subprocess
import sys

HZ = os.sysconf("SC_CLK_TCK")
SEED = int(os.environ.get("ISOLATE_SEED", "18"))


def cpu(path):
    with open(path) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / HZ


def run(binary, seed, min_rate, max_rate, seconds=10):
    env = dict(os.environ, ZMTP_RX_CPU="0")
    p = subprocess.Popen(["taskset", "-c", "1", binary, str(seed), "256", str(min_rate), str(max_rate), str(seconds)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    try:
        ports = p.stdout.readline().split()[1:]
        p.stdin.write("subs " + " ".join(ports) + "\n")  # straight to the PUBs
        p.stdin.flush()
        if p.stdout.readline().strip() != "start":
            raise RuntimeError("the peers did not start")
        main = f"/proc/{p.pid}/task/{p.pid}/stat"   # the PUBs' thread: the process's first
        total0, pubs0 = cpu(f"/proc/{p.pid}/stat"), cpu(main)
        done = p.stdout.readline().split()
        # the SUB side's thread has ended: its CPU stays in the process's total
        total1, pubs1 = cpu(f"/proc/{p.pid}/stat"), cpu(main)
    finally:
        p.wait(60)
    sent, ok, bad = int(done[1]), int(done[2]), int(done[3])
    secs, lag_ms = float(done[5]), int(done[6])
    pubs, subs = pubs1 - pubs0, (total1 - total0) - (pubs1 - pubs0)
    return {"sent": sent, "lost": sent - ok - bad, "bad": bad, "rate": sent / secs, "lag": lag_ms / 1000.0,
            "pubs cores": pubs / secs, "pubs us": pubs / sent * 1e6, "subs cores": subs / secs,
            "subs us": subs / sent * 1e6}


def main():
    peers_dir = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    print("| reader (core 0) | rates (msg/s per publisher) | run | offered msg/s | lost | publisher lag (s) "
          "| PUBs (core 1): cores, µs per message | reader (core 0): cores, µs per message |")
    print("|---|---|---:|---:|---:|---:|---|---|")
    for rates in ((100, 1000), (50, 500)):
        for r in range(runs):
            for name, binary in (("eager", "zmtp-peers-eager"), ("napping, 2 ms", "zmtp-peers")):
                d = run(os.path.join(peers_dir, binary), SEED + r, *rates)
                print(f"| {name} | {rates[0]}-{rates[1]} | {r} | {d['rate']:,.0f} | {d['lost'] + d['bad']} "
                      f"| {d['lag']:.2f} | {d['pubs cores']:.2f}, {d['pubs us']:.1f} "
                      f"| {d['subs cores']:.2f}, {d['subs us']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
