/*
 * The publishers and subscribers of the Dynamo-shaped load (bench/isolate.py), on libzmq: the same load, line
 * protocol and checks as modules/bench's DynamoPeers (JeroMQ), at a fraction of its CPU, so that the peers on
 * core 1 keep their schedule and the measurement is of the broker, not of the peers.
 *
 * Load: N PUBs, each at its own rate (min..max msg/s) of 100-2,000 B messages, plus once a second a burst (a fifth
 * of the publishers each flush 20-200 messages at once); one SUB connected to every stream's port verifies every
 * message's publisher, sequence number, length and body. Deterministic: every rate, size and burst comes from java.util.Random's
 * generator with the seeds DynamoPeers uses, so both peers offer the same load for the same seed.
 *
 * Line protocol: prints "ports p1 ... pN" (the PUBs' bound ports); reads "subs q1 ... qN" (the ports the
 * SUB connects to, one per stream); prints "start" when the timed schedule begins and
 * "done <sent> <verified> <bad> <bytes> <seconds> <maxLagMs> <ended>" at the end.
 * Args: seed publishers min_rate max_rate seconds.
 *
 * Build: cc -O2 -o dynamo-peers bench/dynamo-peers.c -lzmq -lpthread (bench/run.sh does it; needs libzmq3-dev).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "dynamo-load.h"

static void die(const char *what) {
    fprintf(stderr, "dynamo-peers: %s: %s\n", what, zmq_strerror(zmq_errno()));
    exit(2);
}

/* The receiver: one thread and one SUB socket connected to every stream's port. A SUB fair-queues its
   connections and keeps each one's order, so every publisher's sequence is still checked on its own; one
   socket instead of N in a poll set keeps the receiver's cost per message flat as N grows (zmq_poll over 256
   sockets asked each one for its events on every wake-up, most of the peers' CPU at the nominal rate). */
typedef struct {
    void *sub;
    int64_t seed;
    int64_t deadline;
    tally t;
} receiver;

static void *receive(void *arg) {
    receiver *rx = arg;
    checks ck;
    checks_init(&ck, rx->seed, rx->t.n);
    unsigned char buf[MAX_SIZE + 1];
    while (atomic_load(&rx->t.ended) < rx->t.n && now_ns() < rx->deadline) {
        int len = zmq_recv(rx->sub, buf, sizeof buf, 0); /* ZMQ_RCVTIMEO bounds the wait */
        if (len >= 0) deliver(&rx->t, &ck, buf, len);
    }
    return NULL;
}

/* A control message: tag ("W" or "END") followed by the publisher's index. */
static void control(void *pub, const char *tag, int publisher, int flags) {
    unsigned char m[8];
    size_t t = strlen(tag);
    memcpy(m, tag, t);
    for (int k = 0; k < 4; k++) m[t + (size_t) k] = (unsigned char) (publisher >> (24 - 8 * k));
    zmq_send(pub, m, t + 4, flags);
}

static void send_zmq(void *pubs, int publisher, const unsigned char *m, int size) {
    zmq_send(((void **) pubs)[publisher], m, (size_t) size, 0);
}

int main(int argc, char **argv) {
    load_args args;
    int usage = parse_load_args(argc, argv, "dynamo-peers", &args);
    if (usage != 0) return usage;
    int64_t seed = args.seed;
    int n = args.n;
    void *ctx = zmq_ctx_new();
    void **pubs = calloc((size_t) n, sizeof *pubs);
    printf("ports");
    for (int i = 0; i < n; i++) {
        /* bounded, as a real publisher's queue is: a broker that stops reading makes the PUB drop, and the
           subscriber side counts that as lost */
        int hwm = 2000, linger = 0;
        if (!(pubs[i] = zmq_socket(ctx, ZMQ_PUB))) die("socket");
        zmq_setsockopt(pubs[i], ZMQ_SNDHWM, &hwm, sizeof hwm);
        zmq_setsockopt(pubs[i], ZMQ_LINGER, &linger, sizeof linger);
        if (zmq_bind(pubs[i], "tcp://127.0.0.1:*") != 0) die("bind");
        char endpoint[128];
        size_t len = sizeof endpoint;
        zmq_getsockopt(pubs[i], ZMQ_LAST_ENDPOINT, endpoint, &len);
        printf(" %s", strrchr(endpoint, ':') + 1);
    }
    printf("\n");
    fflush(stdout);

    char *line = NULL;
    size_t cap = 0;
    if (getline(&line, &cap, stdin) < 0) die("stdin");
    char *tok = strtok(line, " \t\n");
    int hwm = 0, linger = 0, timeout = 200;
    void *sub = zmq_socket(ctx, ZMQ_SUB);
    if (!sub) die("socket");
    zmq_setsockopt(sub, ZMQ_RCVHWM, &hwm, sizeof hwm);
    zmq_setsockopt(sub, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(sub, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "", 0);
    for (int i = 0; i < n; i++) {
        tok = strtok(NULL, " \t\n");
        if (!tok) { fprintf(stderr, "dynamo-peers: %d subscriber ports expected\n", n); return 2; }
        char endpoint[64];
        snprintf(endpoint, sizeof endpoint, "tcp://127.0.0.1:%s", tok);
        if (zmq_connect(sub, endpoint) != 0) die("connect");
    }

    receiver rx = {.sub = sub, .t.n = n, .seed = seed,
                   .deadline = now_ns() + (int64_t) ((60 + args.seconds + 60) * 1e9)};
    pthread_t rx_thread;
    pthread_create(&rx_thread, NULL, receive, &rx);
    int64_t join_deadline = now_ns() + 60000000000LL;
    while (atomic_load(&rx.t.joined) < n && now_ns() < join_deadline) {
        for (int i = 0; i < n; i++) control(pubs[i], "W", i, ZMQ_DONTWAIT);
        sleep_ns(20000000);
    }
    exit_if_not_joined(&rx.t);
    sleep_ns(200000000);

    int64_t *sent = calloc((size_t) n, sizeof *sent), max_lag = 0;
    double took = run_schedule(seed, n, args.min_rate, args.max_rate, args.seconds, sent, &max_lag, send_zmq, NULL, pubs);
    sleep_ns(500000000);
    for (int i = 0; i < n; i++) control(pubs[i], "END", i, 0);
    await_ends(&rx.t, rx.deadline, NULL, NULL);
    print_done(&rx.t, sent, took, max_lag);
    _exit(0); /* the receiver may still be polling; the context is not worth an orderly close here */
}
