#!/usr/bin/python3
"""bench/zmtp-peers.c against libzmq (Debian's python3-zmq): its PUBs feed libzmq SUBs, libzmq PUBs feed its SUB,
with a forwarder between, over a 2 s schedule; prints the peers' "done" line (sent = verified, 4 ended, when the
ZMTP both sides speak is libzmq's).

    /usr/bin/python3 bench/zmtp-interop.py target/bench/zmtp-peers
"""
import subprocess
import sys
import threading

import zmq

n = 4
p = subprocess.Popen([sys.argv[1], "5", str(n), "100", "1000", "2"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
ports = p.stdout.readline().split()[1:]
ctx = zmq.Context()
subs = []
for port in ports:
    s = ctx.socket(zmq.SUB); s.setsockopt(zmq.SUBSCRIBE, b""); s.connect(f"tcp://127.0.0.1:{port}"); subs.append(s)
pubs = []
for _ in ports:
    q = ctx.socket(zmq.PUB); q.setsockopt(zmq.SNDHWM, 0); pubs.append((q, q.bind_to_random_port("tcp://127.0.0.1")))
def forward(s, q):
    while True:
        q.send(s.recv())
for s, (q, _) in zip(subs, pubs):
    threading.Thread(target=forward, args=(s, q), daemon=True).start()
p.stdin.write("subs " + " ".join(str(port) for _, port in pubs) + "\n"); p.stdin.flush()
for line in p.stdout:
    if line.startswith("done"): print(line.strip()); break
