#ifndef CHORUS_FLOOR_H
#define CHORUS_FLOOR_H

/// What the reference relay measured in its window.
typedef struct {
    double user_ms;
    double kernel_ms;
    double wall_s;
    long messages;
} chorus_floor_result;

/// Opens a listening TCP socket on 127.0.0.1 with a free port, written to `port`; returns the socket or -1.
int chorus_floor_listen(int *port);

/// The reference relay: accepts `calls` connections on each listener (pairing them in order), then for `warmup_s`
/// and `seconds` more writes whatever is read on an inbound connection to its outbound partner, with one epoll loop
/// and no other work. Measures this process's CPU over the last `seconds`; messages (`size` bytes each) are counted
/// by their bytes. Returns 0, or -1 on a socket error.
int chorus_floor_relay(int in_listener, int out_listener, int calls, int size, double warmup_s, double seconds,
                       chorus_floor_result *result);

/// The load: dials `calls` connections to each port, sends a `size`-byte message every `interval_ms` on each inbound
/// connection (calls evenly spread over the interval) and reads and drops what arrives on the outbound ones, for
/// `seconds`. Returns 0, or -1 on a socket error.
int chorus_floor_peer(int in_port, int out_port, int calls, int size, double interval_ms, double seconds);

#endif
