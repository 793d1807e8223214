/*
 * The Dynamo-shaped load's model, shared by bench/dynamo-peers.c (libzmq) and bench/zmtp-peers.c (ZMTP over plain
 * sockets): message layout, java.util.Random exactly as modules/bench's DynamoPeers draws it, the clocks and the
 * schedule's heap. Header-only: both peers are single-file programs.
 */
#ifndef DYNAMO_LOAD_H
#define DYNAMO_LOAD_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

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

#endif
