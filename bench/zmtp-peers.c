/*
 * The Dynamo-shaped load's peers without a ZMQ library: N PUBs and their SUB speaking ZMTP 3.0 (RFC 23, NULL
 * mechanism) over plain non-blocking sockets. The same load, line protocol and checks as bench/dynamo-peers.c
 * (libzmq) and modules/bench's DynamoPeers (JeroMQ); on the wire the same bytes a libzmq PUB and SUB exchange
 * (greeting, READY with Socket-Type, a subscription, then one frame per message).
 *
 * Why a third implementation: at the nominal rate (256 publishers, 100-1,000 msg/s each, about 88,000 msg/s) the
 * libzmq peers alone use the whole of core 1 (about 11 us per message: every send wakes libzmq's I/O thread, which
 * toggles EPOLLOUT, and every receive wakes the receiving thread: 1.4 context switches and 8 system calls per
 * message). Here a PUB writes its frame with one send() from the scheduling thread, and one receiving thread reads
 * every stream with epoll, many frames per read(); nothing else wakes up. The broker sees the same TCP streams.
 *
 * A PUB never blocks, as libzmq's does not: a frame that the socket does not take at once waits in the PUB's
 * queue of at most 2,000 messages (libzmq's default SNDHWM, the value the other peers set), flushed before the
 * PUB's next message and whenever the schedule sleeps; beyond that the PUB drops, and the subscriber side counts
 * the message as lost.
 *
 * Line protocol: prints "ports p1 ... pN" (the PUBs' listening ports); reads "subs q1 ... qN" (the ports the SUB
 * connects to, one per stream); prints "start" when the timed schedule begins and
 * "done <sent> <verified> <bad> <bytes> <seconds> <maxLagMs> <ended>" at the end. Or reads "subs -": no SUB side
 * here, the one who subscribes checks (the lean router, ISOLATE_DYNAMO_SINK=router); then "start" once every PUB
 * has its subscription, and at the end, after every END went out, "published <sent> <seconds> <maxLagMs>"; the
 * sockets stay open until stdin closes or says "quit".
 * Args: seed publishers min_rate max_rate seconds.
 *
 * ZMTP_RX_CPU=<cpu> pins the SUB side's thread to that CPU (bench/dynamo-floor.py). Built twice: zmtp-peers, whose
 * SUB naps NAP_NS (2 ms) between rounds, and zmtp-peers-eager (NAP_NS=0), whose SUB reads each socket as soon as it
 * is ready, as a relay must.
 *
 * Build: bench/build-dynamo-peers.sh (cc -O2, no library needed).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dynamo-load.h"

#define GREETING 64
#define HWM 2000
#define RX_BUFFER (256 * 1024)
#ifndef NAP_NS
#define NAP_NS 2000000
#endif

static void die(const char *what) {
    perror(what);
    exit(2);
}

static void nonblocking(int fd) {
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) die("fcntl");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); /* as libzmq sets it */
}

/* ZMTP 3.0 greeting (signature, version 3.0, NULL mechanism, as-server 0, filler) and READY command. */
static size_t handshake(unsigned char *out, const char *socket_type) {
    memset(out, 0, GREETING);
    out[0] = 0xFF;
    out[9] = 0x7F;
    out[10] = 3;
    out[11] = 0;
    memcpy(out + 12, "NULL", 4);
    unsigned char *c = out + GREETING;
    size_t type_len = strlen(socket_type);
    size_t body = 1 + 5 + 1 + 11 + 4 + type_len;
    *c++ = 0x04; /* command, short */
    *c++ = (unsigned char) body;
    *c++ = 5;
    memcpy(c, "READY", 5), c += 5;
    *c++ = 11;
    memcpy(c, "Socket-Type", 11), c += 11;
    *c++ = 0, *c++ = 0, *c++ = 0, *c++ = (unsigned char) type_len;
    memcpy(c, socket_type, type_len), c += type_len;
    return (size_t) (c - out);
}

/* One message frame (no MORE flag): short below 256 bytes, long above. Returns the frame's length. */
static size_t frame(unsigned char *out, const unsigned char *body, size_t len) {
    size_t h;
    if (len < 256) {
        out[0] = 0x00;
        out[1] = (unsigned char) len;
        h = 2;
    } else {
        out[0] = 0x02;
        for (int k = 0; k < 8; k++) out[1 + k] = (unsigned char) ((uint64_t) len >> (56 - 8 * k));
        h = 9;
    }
    memcpy(out + h, body, len);
    return h + len;
}

static int write_all(int fd, const unsigned char *b, size_t len) {
    while (len > 0) {
        ssize_t w = send(fd, b, len, MSG_NOSIGNAL);
        if (w < 0 && (errno == EAGAIN || errno == EINTR)) continue; /* only at set-up: a few bytes */
        if (w <= 0) return -1;
        b += w, len -= (size_t) w;
    }
    return 0;
}

/* ---- the SUB side: one thread, one epoll set, one connection per stream ---- */

typedef struct {
    int fd;
    unsigned char *buf;
    size_t have;
    int greeted;    /* the peer's greeting consumed */
    int subscribed; /* the subscription sent: after the peer's READY, as libzmq expects */
} connection;

typedef struct {
    int *ports;
    int64_t seed;
    int64_t deadline;
    tally t;
} receiver;

/* Consumes the complete frames in c's buffer; returns -1 on a protocol error. */
static int consume(receiver *rx, checks *ck, connection *c) {
    size_t at = 0;
    if (!c->greeted) {
        if (c->have < GREETING) return 0;
        if (c->buf[0] != 0xFF || c->buf[9] != 0x7F || c->buf[10] < 3) return -1;
        c->greeted = 1;
        at = GREETING;
    }
    while (c->have - at >= 2) {
        unsigned char flags = c->buf[at];
        size_t h, len;
        if (flags & 0x02) {
            if (c->have - at < 9) break;
            len = 0;
            for (int k = 0; k < 8; k++) len = (len << 8) | c->buf[at + 1 + k];
            h = 9;
        } else {
            len = c->buf[at + 1];
            h = 2;
        }
        if (len > MAX_SIZE + 64) return -1;
        if (c->have - at < h + len) break;
        if (!(flags & 0x04)) {
            deliver(&rx->t, ck, c->buf + at + h, (int) len);
        } else if (!c->subscribed) {
            /* the peer's READY: the handshake is done, now the subscription (ZMTP 3.0: a message of 0x01 and
               the prefix; empty, so everything) */
            static const unsigned char subscribe[] = {0x00, 1, 0x01};
            if (write_all(c->fd, subscribe, sizeof subscribe) != 0) return -1;
            c->subscribed = 1;
        }
        at += h + len;
    }
    memmove(c->buf, c->buf + at, c->have - at);
    c->have -= at;
    return 0;
}

static void *receive(void *arg) {
    receiver *rx = arg;
    const char *cpu = getenv("ZMTP_RX_CPU"); /* bench/dynamo-floor.py: the SUB side alone on the broker's core */
    if (cpu) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(atoi(cpu), &set);
        if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) die("pthread_setaffinity_np");
    }
    int n = rx->t.n;
    checks ck;
    checks_init(&ck, rx->seed, n);
    int ep = epoll_create1(0);
    connection *conns = calloc((size_t) n, sizeof *conns);
    unsigned char hello[GREETING + 64];
    size_t hello_len = handshake(hello, "SUB");
    for (int i = 0; i < n; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t) rx->ports[i]),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        if (fd < 0 || connect(fd, (struct sockaddr *) &a, sizeof a) != 0) die("connect");
        if (write_all(fd, hello, hello_len) != 0) die("handshake");
        nonblocking(fd);
        conns[i] = (connection) {fd, malloc(RX_BUFFER), 0, 0, 0};
        struct epoll_event e = {.events = EPOLLIN, .data.u32 = (uint32_t) i};
        epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
    }
    struct epoll_event *ready = calloc((size_t) n, sizeof *ready);
    while (atomic_load(&rx->t.ended) < n && now_ns() < rx->deadline) {
        /* A short nap between rounds lets each stream gather several frames per read(): the receiver's system
           calls per message fall with the rate instead of growing with it. Latency is not measured here. */
        sleep_ns(NAP_NS);
        int k = epoll_wait(ep, ready, n, 200);
        for (int j = 0; j < k; j++) {
            connection *c = &conns[ready[j].data.u32];
            for (;;) {
                ssize_t r = recv(c->fd, c->buf + c->have, RX_BUFFER - c->have, 0);
                if (r > 0) {
                    c->have += (size_t) r;
                    if (consume(rx, &ck, c) != 0) { atomic_fetch_add(&rx->t.bad, 1); r = 0; }
                }
                if (r <= 0) {
                    if (r < 0 && (errno == EAGAIN || errno == EINTR)) break;
                    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL); /* the stream was cut: what arrived is the answer */
                    break;
                }
            }
        }
    }
    return NULL;
}

/* ---- the PUB side: the scheduling thread writes every frame itself ---- */

typedef struct {
    int listener, fd;       /* fd: the one subscriber connection (the broker's), -1 until accepted */
    int ready;              /* the subscriber's greeting and READY received: messages may flow */
    int subscribed;         /* and something after them: its subscription */
    unsigned char hs[GREETING + 256];
    size_t hs_have;
    unsigned char *queue;   /* frames the socket did not take yet */
    size_t queued, head;    /* bytes in the queue, bytes of it already written */
    int queued_messages;
    int64_t dropped;
} publisher;

static void flush(publisher *p) {
    while (p->fd >= 0 && p->head < p->queued) {
        ssize_t w = send(p->fd, p->queue + p->head, p->queued - p->head, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w <= 0) return;
        p->head += (size_t) w;
    }
    if (p->head == p->queued) p->queued = p->head = 0, p->queued_messages = 0;
}

static void publish(publisher *p, const unsigned char *body, size_t len) {
    unsigned char f[MAX_SIZE + 16];
    size_t fl = frame(f, body, len);
    if (!p->ready) { p->dropped++; return; } /* no subscriber yet: a PUB drops */
    flush(p);
    if (p->queued == 0) {
        ssize_t w = send(p->fd, f, fl, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w == (ssize_t) fl) return;
        size_t done = w > 0 ? (size_t) w : 0;
        memcpy(p->queue, f + done, fl - done); /* the rest of this frame starts the queue */
        p->queued = fl - done;
        p->queued_messages = 1;
        return;
    }
    if (p->queued_messages >= HWM) { p->dropped++; return; }
    memcpy(p->queue + p->queued, f, fl);
    p->queued += fl;
    p->queued_messages++;
}

/* Accepts the subscriber of every PUB that has one waiting and sends the PUB's greeting and READY; then reads the
   subscriber's greeting and READY, after which (and not before: libzmq treats an earlier message as a protocol
   error) the PUB may send. What the subscriber sends after that, its subscription, is read and discarded: every PUB
   here sends everything, which is what the one subscription (the empty prefix) asks for. */
static void handshake_subscribers(publisher *pubs, int n, const unsigned char *hello, size_t hello_len) {
    for (int i = 0; i < n; i++) {
        publisher *p = &pubs[i];
        if (p->fd < 0) {
            int fd = accept(p->listener, NULL, NULL);
            if (fd < 0) continue;
            if (write_all(fd, hello, hello_len) != 0) { close(fd); continue; }
            nonblocking(fd);
            p->fd = fd;
        }
        if (p->ready) {
            unsigned char sink[4096];
            while (recv(p->fd, sink, sizeof sink, MSG_DONTWAIT) > 0) p->subscribed = 1;
            continue;
        }
        ssize_t r = recv(p->fd, p->hs + p->hs_have, sizeof p->hs - p->hs_have, MSG_DONTWAIT);
        if (r > 0) p->hs_have += (size_t) r;
        /* greeting, then one command frame (flags 0x04, short size): READY */
        size_t hs_len = p->hs_have >= GREETING + 2 ? GREETING + 2 + (size_t) p->hs[GREETING + 1] : sizeof p->hs;
        if (p->hs_have >= hs_len) p->ready = 1, p->subscribed = p->hs_have > hs_len;
    }
}

static void control(publisher *p, const char *tag, int index) {
    unsigned char m[8];
    size_t t = strlen(tag);
    memcpy(m, tag, t);
    for (int k = 0; k < 4; k++) m[t + (size_t) k] = (unsigned char) (index >> (24 - 8 * k));
    publish(p, m, t + 4);
}

/* Flushes every PUB's queue until all are empty or within_ns has passed, 1 ms between rounds. */
static void flush_queues(publisher *pubs, int n, int64_t within_ns) {
    int64_t until = now_ns() + within_ns;
    for (int left = 1; left && now_ns() < until;) {
        left = 0;
        for (int i = 0; i < n; i++) if (pubs[i].queued > 0) { flush(&pubs[i]); left |= pubs[i].queued > 0; }
        if (left) sleep_ns(1000000);
    }
}

/* The schedule's view of the PUBs (run_schedule's callbacks). */
typedef struct {
    publisher *pubs;
    int n;
} publishers;

static void send_frame(void *set, int index, const unsigned char *m, int size) {
    publish(&((publishers *) set)->pubs[index], m, (size_t) size);
}

/* Before the schedule sleeps: what the PUBs' sockets did not take yet goes out. */
static void flush_all(void *set) {
    publishers *all = set;
    for (int i = 0; i < all->n; i++) if (all->pubs[i].queued > 0) flush(&all->pubs[i]);
}

int main(int argc, char **argv) {
    load_args args;
    int usage = parse_load_args(argc, argv, "zmtp-peers", &args);
    if (usage != 0) return usage;
    int64_t seed = args.seed;
    int n = args.n;
    publisher *pubs = calloc((size_t) n, sizeof *pubs);
    printf("ports");
    for (int i = 0; i < n; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t alen = sizeof a;
        if (fd < 0 || bind(fd, (struct sockaddr *) &a, sizeof a) != 0 || listen(fd, 4) != 0) die("listen");
        getsockname(fd, (struct sockaddr *) &a, &alen);
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        pubs[i] = (publisher) {.listener = fd, .fd = -1, .queue = malloc((size_t) HWM * (MAX_SIZE + 16))};
        printf(" %d", ntohs(a.sin_port));
    }
    printf("\n");
    fflush(stdout);

    char *line = NULL;
    size_t cap = 0;
    if (getline(&line, &cap, stdin) < 0) { fprintf(stderr, "zmtp-peers: stdin closed\n"); return 2; }
    receiver rx = {.t.n = n, .ports = calloc((size_t) n, sizeof(int)), .seed = seed,
                   .deadline = now_ns() + (int64_t) ((60 + args.seconds + 60) * 1e9)};
    char *tok = strtok(line, " \t\n");
    tok = strtok(NULL, " \t\n");
    int external = tok && strcmp(tok, "-") == 0; /* "subs -": someone else subscribes and checks (the router) */
    for (int i = 0; i < n && !external; i++) {
        if (!tok) { fprintf(stderr, "zmtp-peers: %d subscriber ports expected\n", n); return 2; }
        rx.ports[i] = atoi(tok);
        tok = strtok(NULL, " \t\n");
    }
    unsigned char hello[GREETING + 64];
    size_t hello_len = handshake(hello, "PUB");
    pthread_t rx_thread;
    if (!external) pthread_create(&rx_thread, NULL, receive, &rx);
    int64_t join_deadline = now_ns() + 60000000000LL;
    while (atomic_load(&rx.t.joined) < n && now_ns() < join_deadline) {
        handshake_subscribers(pubs, n, hello, hello_len);
        int subscribed = 0;
        for (int i = 0; i < n; i++) {
            if (external) subscribed += pubs[i].subscribed;
            else if (pubs[i].ready) control(&pubs[i], "W", i);
        }
        if (external) atomic_store(&rx.t.joined, subscribed);
        sleep_ns(20000000);
    }
    exit_if_not_joined(&rx.t);
    sleep_ns(200000000);
    handshake_subscribers(pubs, n, hello, hello_len); /* drains the subscriptions */
    for (int i = 0; i < n; i++) flush(&pubs[i]);

    int64_t *sent = calloc((size_t) n, sizeof *sent), max_lag = 0;
    publishers set = {pubs, n};
    double took = run_schedule(seed, n, args.min_rate, args.max_rate, args.seconds, sent, &max_lag, send_frame, flush_all, &set);
    /* what is still queued goes out before END, as libzmq's PUB keeps its queue's order */
    flush_queues(pubs, n, 10000000000LL);
    sleep_ns(500000000);
    for (int i = 0; i < n; i++) control(&pubs[i], "END", i);
    for (int i = 0; i < n; i++) flush(&pubs[i]);
    if (external) {
        /* what the checker needs from here: the count sent; the sockets stay open until stdin says so */
        flush_queues(pubs, n, 10000000000LL);
        int64_t total = 0;
        for (int i = 0; i < n; i++) total += sent[i];
        printf("published %lld %.3f %lld\n", (long long) total, took, (long long) (max_lag / 1000000));
        fflush(stdout);
        while (getline(&line, &cap, stdin) > 0 && strncmp(line, "quit", 4) != 0) {}
        _exit(0);
    }
    await_ends(&rx.t, rx.deadline, flush_all, &set);
    print_done(&rx.t, sent, took, max_lag);
    _exit(0);
}
