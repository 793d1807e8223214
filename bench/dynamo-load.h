/*
 * The Dynamo-shaped load's model, shared by bench/dynamo-peers.c (libzmq) and bench/zmtp-peers.c (ZMTP over plain
 * sockets): message layout, java.util.Random exactly as modules/bench's DynamoPeers draws it, the clocks and the
 * schedule's heap. Header-only: both peers are single-file programs.
 */
#ifndef DYNAMO_LOAD_H
#define DYNAMO_LOAD_H

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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


/* The callbacks of run_schedule: send one message of a publisher; and what to do before the schedule sleeps. */
typedef void (*send_fn)(void *peers, int publisher, const unsigned char *message, int size);
typedef void (*idle_fn)(void *peers);

/*
 * The timed schedule, as DynamoPeers runs it: each publisher at its own rate (min..max msg/s, drawn first from its
 * generator), plus once a second a burst (a fifth of the publishers each flush 20-200 messages at once, a batch of
 * KV blocks stored). Prints "start" when it begins. Counts each publisher's messages in sent, the worst lateness
 * in *max_lag_ns; returns the seconds it took. idle may be NULL.
 */
static double run_schedule(int64_t seed, int n, double min_rate, double max_rate, double seconds, int64_t *sent,
                           int64_t *max_lag_ns, send_fn send, idle_fn idle, void *peers) {
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
        if (wait > 50000 && idle) {
            idle(peers);
            wait = e.due - now_ns();
        }
        if (wait > 50000) {
            sleep_ns(wait);
        } else if (wait < 0 && -wait > max_lag) {
            max_lag = -wait;
        }
        if (e.who < 0) {
            for (int k = 0; k < n / 5; k++) {
                int j = jr_int(&bursts, n);
                for (int m = 20 + jr_int(&bursts, 181); m > 0; m--) {
                    int size = next_size(&gens[j]);
                    message(buf, j, sent[j]++, size);
                    send(peers, j, buf, size);
                }
            }
            continue;
        }
        int size = next_size(&gens[e.who]);
        message(buf, e.who, sent[e.who]++, size);
        send(peers, e.who, buf, size);
        e.due += (int64_t) period[e.who];
        heap_push(&events, e);
    }
    double took = (now_ns() - start) / 1e9;
    free(gens); free(period); free(events.e);
    *max_lag_ns = max_lag;
    return took;
}

/* ---- the subscriber side's checks, the same in every peer ---- */

static int publisher_of(const unsigned char *b) { return (b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]; }

/* What the subscriber side counts, read by the main thread. */
typedef struct {
    int n;
    atomic_int joined, ended;
    atomic_llong ok, bad, bytes;
} tally;

/* The subscriber side's state of every publisher: its generator, in step with the publisher's sizes, and the
   sequence number it sends next; whether its join and END messages arrived. */
typedef struct {
    jrandom *gens;
    int64_t *expected;
    char *seen, *ended;
} checks;

static void checks_init(checks *ck, int64_t seed, int n) {
    ck->gens = calloc((size_t) n, sizeof *ck->gens);
    ck->expected = calloc((size_t) n, sizeof *ck->expected);
    ck->seen = calloc((size_t) n, 1);
    ck->ended = calloc((size_t) n, 1);
    for (int i = 0; i < n; i++) {
        generator(&ck->gens[i], seed, i);
        jr_double(&ck->gens[i]); /* the rate, drawn first on the publisher side */
    }
}

/* One received message: a control message ("W" + index: joined; "END" + index: finished) or a data message, whose
   publisher, sequence number, length and every body byte are checked. */
static void deliver(tally *t, checks *ck, const unsigned char *m, int len) {
    int n = t->n;
    if (len < HEADER) {
        int at = len == 5 && m[0] == 'W' ? 1 : len == 7 && memcmp(m, "END", 3) == 0 ? 3 : -1;
        int p = at < 0 ? -1 : publisher_of(m + at);
        if (p < 0 || p >= n) {
            atomic_fetch_add(&t->bad, 1);
        } else if (at == 1 && !ck->seen[p]) {
            ck->seen[p] = 1;
            atomic_fetch_add(&t->joined, 1);
        } else if (at == 3 && !ck->ended[p]) {
            ck->ended[p] = 1;
            atomic_fetch_add(&t->ended, 1);
        }
        return;
    }
    int p = publisher_of(m);
    if (p < 0 || p >= n) { atomic_fetch_add(&t->bad, 1); return; }
    int64_t seq = 0;
    for (int k = 0; k < 8; k++) seq = (seq << 8) | m[4 + k];
    for (int64_t skip = seq - ck->expected[p]; skip > 0; skip--) next_size(&ck->gens[p]); /* in step after a gap */
    int size = next_size(&ck->gens[p]);
    int good = seq == ck->expected[p] && len == size;
    unsigned char fill = (unsigned char) (p * 31 + seq);
    for (int k = HEADER; good && k < len; k++) good = m[k] == fill;
    atomic_fetch_add(good ? &t->ok : &t->bad, 1);
    atomic_fetch_add(&t->bytes, len);
    ck->expected[p] = seq + 1;
}

/* The peers' last line: "done <sent> <verified> <bad> <bytes> <seconds> <maxLagMs> <ended>". */
static void print_done(tally *t, const int64_t *sent, double took, int64_t max_lag_ns) {
    int64_t total = 0;
    for (int i = 0; i < t->n; i++) total += sent[i];
    printf("done %lld %lld %lld %lld %.3f %lld %d\n", (long long) total, (long long) atomic_load(&t->ok),
           (long long) atomic_load(&t->bad), (long long) atomic_load(&t->bytes), took,
           (long long) (max_lag_ns / 1000000), atomic_load(&t->ended));
    fflush(stdout);
}

/* The peers' arguments: seed publishers min_rate max_rate seconds. */
typedef struct {
    int64_t seed;
    int n;
    double min_rate, max_rate, seconds;
} load_args;

/* Reads the arguments; 0, or 2 (the exit status) after printing the usage. */
static int parse_load_args(int argc, char **argv, const char *program, load_args *a) {
    if (argc != 6) {
        fprintf(stderr, "usage: %s seed publishers min_rate max_rate seconds\n", program);
        return 2;
    }
    *a = (load_args) {atoll(argv[1]), atoi(argv[2]), atof(argv[3]), atof(argv[4]), atof(argv[5])};
    return 0;
}

/* When not every publisher joined within the join's minute: the "done" line that says so, and exit 1. */
static void exit_if_not_joined(tally *t) {
    if (atomic_load(&t->joined) < t->n) {
        printf("done 0 0 0 0 0 0 -1\n");
        fflush(stdout);
        _exit(1);
    }
}

/* Waits for every publisher's END, calling idle (may be NULL) every 10 ms: every END arrives unless a stream was
   cut, and then what arrived within 30 s (or by the receiver's deadline) is the answer. */
static void await_ends(tally *t, int64_t receiver_deadline, idle_fn idle, void *peers) {
    int64_t wait_until = now_ns() + 30000000000LL;
    while (atomic_load(&t->ended) < t->n && now_ns() < wait_until && now_ns() < receiver_deadline) {
        if (idle) idle(peers);
        sleep_ns(10000000);
    }
}

#endif
