/*
 * The publishers and subscribers of the Dynamo-shaped load (bench/isolate.py), on libzmq: the same load, line
 * protocol and checks as modules/bench's DynamoPeers (JeroMQ), at a fraction of its CPU, so that the peers on
 * core 1 keep their schedule and the measurement is of the broker, not of the peers.
 *
 * Load: N PUBs, each at its own rate (min..max msg/s) of 100-2,000 B messages, plus once a second a burst (a fifth
 * of the publishers each flush 20-200 messages at once); one SUB per PUB verifies every message's publisher,
 * sequence number, length and body. Deterministic: every rate, size and burst comes from java.util.Random's
 * generator with the seeds DynamoPeers uses, so both peers offer the same load for the same seed.
 *
 * Line protocol: prints "ports p1 ... pN" (the PUBs' bound ports); reads "subs q1 ... qN" (where each SUB
 * connects); prints "start" when the timed schedule begins and
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

#define HEADER 12 /* publisher index (4) + sequence number (8), big-endian */
#define MAX_SIZE 2000

/* java.util.Random, exactly: same seeds, same draws as DynamoPeers. */
typedef struct { uint64_t s; } jrandom;
static void jr_seed(jrandom *r, int64_t seed) { r->s = ((uint64_t) seed ^ 0x5DEECE66DULL) & ((1ULL << 48) - 1); }
static int32_t jr_next(jrandom *r, int bits) {
    r->s = (r->s * 0x5DEECE66DULL + 0xBULL) & ((1ULL << 48) - 1);
    return (int32_t) (r->s >> (48 - bits));
}
static int32_t jr_int(jrandom *r, int32_t bound) {
    int32_t x = jr_next(r, 31), m = bound - 1;
    if ((bound & m) == 0) return (int32_t) (((int64_t) bound * x) >> 31);
    for (int32_t u = x; (int32_t) ((uint32_t) u - (uint32_t) (x = u % bound) + (uint32_t) m) < 0; u = jr_next(r, 31)) {}
    return x;
}
static double jr_double(jrandom *r) {
    return (double) (((int64_t) jr_next(r, 26) << 27) + jr_next(r, 27)) * 0x1.0p-53;
}
static void generator(jrandom *r, int64_t seed, int publisher) { jr_seed(r, seed * 100003 + publisher); }
static int next_size(jrandom *r) { return 100 + jr_int(r, 1901); }

static void message(unsigned char *m, int publisher, int64_t seq, int size) {
    for (int k = 0; k < 4; k++) m[k] = (unsigned char) (publisher >> (24 - 8 * k));
    for (int k = 0; k < 8; k++) m[4 + k] = (unsigned char) ((uint64_t) seq >> (56 - 8 * k));
    memset(m + HEADER, (unsigned char) (publisher * 31 + seq), (size_t) (size - HEADER));
}

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t) t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void sleep_ns(int64_t ns) {
    struct timespec t = {ns / 1000000000LL, ns % 1000000000LL};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {}
}

static void die(const char *what) {
    fprintf(stderr, "dynamo-peers: %s: %s\n", what, zmq_strerror(zmq_errno()));
    exit(2);
}

/* The receiver: one thread, every SUB in one poll set. */
typedef struct {
    void **subs;
    int n;
    int64_t seed;
    int64_t deadline;
    atomic_int joined;
    atomic_int ended;
    atomic_llong ok, bad, bytes;
} receiver;

static void *receive(void *arg) {
    receiver *rx = arg;
    int n = rx->n;
    jrandom *gens = calloc((size_t) n, sizeof *gens);
    int64_t *expected = calloc((size_t) n, sizeof *expected);
    char *seen = calloc((size_t) n, 1);
    zmq_pollitem_t *items = calloc((size_t) n, sizeof *items);
    unsigned char buf[MAX_SIZE + 1];
    for (int i = 0; i < n; i++) {
        generator(&gens[i], rx->seed, i);
        jr_double(&gens[i]); /* the rate, drawn first on the publisher side */
        items[i].socket = rx->subs[i];
        items[i].events = ZMQ_POLLIN;
    }
    while (atomic_load(&rx->ended) < n && now_ns() < rx->deadline) {
        if (zmq_poll(items, n, 200) <= 0) continue;
        for (int i = 0; i < n; i++) {
            if (!(items[i].revents & ZMQ_POLLIN)) continue;
            int len;
            while ((len = zmq_recv(rx->subs[i], buf, sizeof buf, ZMQ_DONTWAIT)) >= 0) {
                if (len < HEADER) {
                    if (len == 1 && buf[0] == 'W') {
                        if (!seen[i]) { seen[i] = 1; atomic_fetch_add(&rx->joined, 1); }
                    } else if (len == 3 && memcmp(buf, "END", 3) == 0) {
                        atomic_fetch_add(&rx->ended, 1);
                    }
                    continue;
                }
                int p = (buf[0] << 24) | (buf[1] << 16) | (buf[2] << 8) | buf[3];
                int64_t seq = 0;
                for (int k = 0; k < 8; k++) seq = (seq << 8) | buf[4 + k];
                for (int64_t skip = seq - expected[i]; skip > 0; skip--) next_size(&gens[i]); /* keep in step after a gap */
                int size = next_size(&gens[i]);
                int good = p == i && seq == expected[i] && len == size;
                unsigned char fill = (unsigned char) (i * 31 + seq);
                for (int k = HEADER; good && k < len; k++) good = buf[k] == fill;
                atomic_fetch_add(good ? &rx->ok : &rx->bad, 1);
                atomic_fetch_add(&rx->bytes, len);
                expected[i] = seq + 1;
            }
        }
    }
    free(gens); free(expected); free(seen); free(items);
    return NULL;
}

/* The schedule: a binary heap of (due time, publisher; -1 = a burst). */
typedef struct { int64_t due; int who; } event;
typedef struct { event *e; int size; } heap;
static void heap_push(heap *h, event x) {
    int i = h->size++;
    while (i > 0 && h->e[(i - 1) / 2].due > x.due) { h->e[i] = h->e[(i - 1) / 2]; i = (i - 1) / 2; }
    h->e[i] = x;
}
static event heap_pop(heap *h) {
    event top = h->e[0], last = h->e[--h->size];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= h->size) break;
        if (c + 1 < h->size && h->e[c + 1].due < h->e[c].due) c++;
        if (h->e[c].due >= last.due) break;
        h->e[i] = h->e[c];
        i = c;
    }
    h->e[i] = last;
    return top;
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: dynamo-peers seed publishers min_rate max_rate seconds\n");
        return 2;
    }
    int64_t seed = atoll(argv[1]);
    int n = atoi(argv[2]);
    double min_rate = atof(argv[3]), max_rate = atof(argv[4]), seconds = atof(argv[5]);
    void *ctx = zmq_ctx_new();
    void **pubs = calloc((size_t) n, sizeof *pubs), **subs = calloc((size_t) n, sizeof *subs);
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
    for (int i = 0; i < n; i++) {
        tok = strtok(NULL, " \t\n");
        if (!tok) { fprintf(stderr, "dynamo-peers: %d subscriber ports expected\n", n); return 2; }
        int hwm = 0, linger = 0;
        char endpoint[64];
        if (!(subs[i] = zmq_socket(ctx, ZMQ_SUB))) die("socket");
        zmq_setsockopt(subs[i], ZMQ_RCVHWM, &hwm, sizeof hwm);
        zmq_setsockopt(subs[i], ZMQ_LINGER, &linger, sizeof linger);
        zmq_setsockopt(subs[i], ZMQ_SUBSCRIBE, "", 0);
        snprintf(endpoint, sizeof endpoint, "tcp://127.0.0.1:%s", tok);
        if (zmq_connect(subs[i], endpoint) != 0) die("connect");
    }

    receiver rx = {.subs = subs, .n = n, .seed = seed,
                   .deadline = now_ns() + (int64_t) ((60 + seconds + 60) * 1e9)};
    pthread_t rx_thread;
    pthread_create(&rx_thread, NULL, receive, &rx);
    int64_t join_deadline = now_ns() + 60000000000LL;
    while (atomic_load(&rx.joined) < n && now_ns() < join_deadline) {
        for (int i = 0; i < n; i++) zmq_send(pubs[i], "W", 1, ZMQ_DONTWAIT);
        sleep_ns(20000000);
    }
    if (atomic_load(&rx.joined) < n) {
        printf("done 0 0 0 0 0 0 -1\n");
        fflush(stdout);
        _exit(1);
    }
    sleep_ns(200000000);

    int64_t *sent = calloc((size_t) n, sizeof *sent);
    jrandom *gens = calloc((size_t) n, sizeof *gens), bursts;
    double *period = calloc((size_t) n, sizeof *period);
    jr_seed(&bursts, seed);
    heap events = {calloc((size_t) n + (size_t) seconds + 2, sizeof(event)), 0};
    unsigned char buf[MAX_SIZE];
    printf("start\n");
    fflush(stdout);
    int64_t start = now_ns(), end = start + (int64_t) (seconds * 1e9), max_lag = 0;
    for (int i = 0; i < n; i++) {
        generator(&gens[i], seed, i);
        double rate = min_rate + jr_double(&gens[i]) * (max_rate - min_rate);
        period[i] = 1e9 / rate;
        heap_push(&events, (event) {start + (int64_t) (jr_double(&bursts) * period[i]), i});
    }
    for (int64_t t = start + 1000000000LL; t < end; t += 1000000000LL) {
        heap_push(&events, (event) {t, -1}); /* a burst, once a second of the schedule */
    }
    while (events.size > 0 && events.e[0].due < end) {
        event e = heap_pop(&events);
        int64_t wait = e.due - now_ns();
        if (wait > 50000) {
            sleep_ns(wait);
        } else if (wait < 0 && -wait > max_lag) {
            max_lag = -wait;
        }
        if (e.who < 0) {
            /* a fifth of the publishers each flush 20-200 events at once (a batch of KV blocks stored) */
            for (int k = 0; k < n / 5; k++) {
                int j = jr_int(&bursts, n);
                for (int m = 20 + jr_int(&bursts, 181); m > 0; m--) {
                    int size = next_size(&gens[j]);
                    message(buf, j, sent[j]++, size);
                    zmq_send(pubs[j], buf, (size_t) size, 0);
                }
            }
            continue;
        }
        int size = next_size(&gens[e.who]);
        message(buf, e.who, sent[e.who]++, size);
        zmq_send(pubs[e.who], buf, (size_t) size, 0);
        e.due += (int64_t) period[e.who];
        heap_push(&events, e);
    }
    double took = (now_ns() - start) / 1e9;
    sleep_ns(500000000);
    for (int i = 0; i < n; i++) zmq_send(pubs[i], "END", 3, 0);
    /* every END arrives unless a stream was cut; then what arrived within 30 s is the answer */
    int64_t wait_until = now_ns() + 30000000000LL;
    while (atomic_load(&rx.ended) < n && now_ns() < wait_until && now_ns() < rx.deadline) sleep_ns(10000000);
    int64_t total = 0;
    for (int i = 0; i < n; i++) total += sent[i];
    printf("done %lld %lld %lld %lld %.3f %lld %d\n", (long long) total, (long long) atomic_load(&rx.ok),
           (long long) atomic_load(&rx.bad), (long long) atomic_load(&rx.bytes), took,
           (long long) (max_lag / 1000000), atomic_load(&rx.ended));
    fflush(stdout);
    _exit(0); /* the receiver may still be polling; the context is not worth an orderly close here */
}
