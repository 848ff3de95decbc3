// The reference relay of `chorus-bench floor`: the cheapest relay of small messages over loopback TCP (one epoll
// loop, a read and a write per message, nothing else), so the bridge's CPU can be compared with what the kernel alone
// costs on the same machine.
#define _GNU_SOURCE
#include "chorus_floor.h"

#ifdef __linux__

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void no_delay(int fd) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static double ms(struct timeval t) { return (double)t.tv_sec * 1e3 + (double)t.tv_usec / 1e3; }

static struct sockaddr_in loopback(int port) {
    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons((unsigned short)port);
    return address;
}

int chorus_floor_listen(int *port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_in address = loopback(0);
    socklen_t length = sizeof address;
    if (bind(fd, (struct sockaddr *)&address, sizeof address) != 0 || listen(fd, 4096) != 0 ||
        getsockname(fd, (struct sockaddr *)&address, &length) != 0) {
        close(fd);
        return -1;
    }
    *port = ntohs(address.sin_port);
    return fd;
}

static int dial(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_in address = loopback(port);
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        close(fd);
        return -1;
    }
    no_delay(fd);
    return fd;
}

static void release(int *in, int *out, int calls, int epoll) {
    for (int i = 0; i < calls; i++) {
        close(in[i]);
        close(out[i]);
    }
    close(epoll);
    free(in);
    free(out);
}

int chorus_floor_relay(int in_listener, int out_listener, int calls, int size, double warmup_s, double seconds,
                       chorus_floor_result *result) {
    int *in = calloc((size_t)calls, sizeof(int)), *out = calloc((size_t)calls, sizeof(int));
    int epoll = epoll_create1(EPOLL_CLOEXEC), status = 0;
    for (int i = 0; i < calls; i++) {
        in[i] = accept4(in_listener, NULL, NULL, SOCK_CLOEXEC);
        out[i] = accept4(out_listener, NULL, NULL, SOCK_CLOEXEC);
        if (in[i] < 0 || out[i] < 0) { status = -1; calls = i; break; }
        no_delay(in[i]);
        no_delay(out[i]);
        struct epoll_event event = {.events = EPOLLIN, .data.u32 = (unsigned)i};
        epoll_ctl(epoll, EPOLL_CTL_ADD, in[i], &event);
    }
    static char buffer[65536];
    struct epoll_event events[256];
    struct rusage before, after;
    double start = now_s(), measured = 0;
    long bytes = 0;
    while (status == 0) {
        double elapsed = now_s() - start;
        if (measured == 0 && elapsed >= warmup_s) {
            getrusage(RUSAGE_SELF, &before);
            measured = now_s();
            bytes = 0;
        }
        if (elapsed >= warmup_s + seconds) break;
        int ready = epoll_wait(epoll, events, 256, 50);
        for (int j = 0; j < ready; j++) {
            int i = (int)events[j].data.u32;
            ssize_t count = read(in[i], buffer, sizeof buffer);
            if (count > 0 && write(out[i], buffer, (size_t)count) == count) bytes += count;
        }
    }
    getrusage(RUSAGE_SELF, &after);
    result->user_ms = ms(after.ru_utime) - ms(before.ru_utime);
    result->kernel_ms = ms(after.ru_stime) - ms(before.ru_stime);
    result->wall_s = measured > 0 ? now_s() - measured : 0;
    // Messages that arrived together were read and written together: they are counted by their bytes.
    result->messages = bytes / size;
    release(in, out, calls, epoll);
    return status;
}

int chorus_floor_peer(int in_port, int out_port, int calls, int size, double interval_ms, double seconds) {
    int *in = calloc((size_t)calls, sizeof(int)), *out = calloc((size_t)calls, sizeof(int));
    char *message = malloc((size_t)size);
    memset(message, 'a', (size_t)size);
    int epoll = epoll_create1(EPOLL_CLOEXEC), status = 0;
    for (int i = 0; i < calls; i++) {
        in[i] = dial(in_port);
        out[i] = dial(out_port);
        if (in[i] < 0 || out[i] < 0) { status = -1; calls = i; break; }
        struct epoll_event event = {.events = EPOLLIN, .data.u32 = (unsigned)i};
        epoll_ctl(epoll, EPOLL_CTL_ADD, out[i], &event);
    }
    static char buffer[65536];
    struct epoll_event events[256];
    double interval = interval_ms / 1e3, step = interval / (calls > 0 ? calls : 1), start = now_s();
    long sent = 0;
    while (status == 0 && now_s() - start < seconds) {
        // Send every message that is due: call i sends at start + i·step + k·interval.
        double due = start + (double)sent * step;
        while (now_s() >= due) {
            if (write(in[sent % calls], message, (size_t)size) != size) { status = -1; break; }
            sent++;
            due = start + (double)sent * step;
        }
        int ready = epoll_wait(epoll, events, 256, 0);
        for (int j = 0; j < ready; j++) (void)read(out[events[j].data.u32], buffer, sizeof buffer);
        double wait = due - now_s();
        if (wait > 0) {
            struct timespec pause = {.tv_sec = 0, .tv_nsec = (long)(wait * 1e9)};
            nanosleep(&pause, NULL);
        }
    }
    release(in, out, calls, epoll);
    free(message);
    return status;
}

#else
// epoll is Linux's: elsewhere the reference relay is not available.
int chorus_floor_listen(int *port) { (void)port; return -1; }
int chorus_floor_relay(int in_listener, int out_listener, int calls, int size, double warmup_s, double seconds,
                       chorus_floor_result *result) {
    (void)in_listener; (void)out_listener; (void)calls; (void)size; (void)warmup_s; (void)seconds; (void)result;
    return -1;
}
int chorus_floor_peer(int in_port, int out_port, int calls, int size, double interval_ms, double seconds) {
    (void)in_port; (void)out_port; (void)calls; (void)size; (void)interval_ms; (void)seconds;
    return -1;
}
#endif
