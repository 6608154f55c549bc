#ifndef DARKROOM_SANDBOX_H
#define DARKROOM_SANDBOX_H

#include <stddef.h>
#include <stdint.h>

#include "darkroom_channel.h"

// Confinement of a decode worker process: a seccomp filter that allows what decoding needs (reading and writing the
// descriptors the worker was handed, memory, threads, time) and refuses the rest — opening files, sockets, new
// processes' programs, tracing — no new privileges, resource limits, and, where unprivileged user namespaces are
// allowed, a new user, mount and network namespace whose root is an empty read-only file system.
//
// The filter is compiled once, in the parent, by libseccomp (which allocates); applying it and the rest is raw system
// calls only, safe between fork and exec or in a process's first thread.

// Limits a confined process runs under; 0 leaves one as it is.
typedef struct {
    int64_t address_space_bytes;  // RLIMIT_AS: mappings past it fail (ENOMEM)
    int64_t cpu_seconds;          // RLIMIT_CPU: SIGXCPU, then SIGKILL a second later
    int namespaces;               // 1: try the new namespaces (an empty root, no network); 0: do not
    const char *readable_paths;   // folders bound read-only into the new root, newline-separated; NULL: none
} dr_sandbox_limits;

// A compiled filter (BPF), immutable once built.
typedef struct dr_sandbox_filter dr_sandbox_filter;

// Builds the worker's filter. Returns 0, or a negative errno with a message.
int dr_sandbox_filter_build(dr_sandbox_filter **out, char *msg, size_t msg_len);
void dr_sandbox_filter_free(dr_sandbox_filter *filter);
// The number of BPF instructions in the filter.
int dr_sandbox_filter_length(const dr_sandbox_filter *filter);

// Confines the calling process, in this order: the namespaces (when asked; *namespaces says whether they applied),
// no new privileges, the limits (and a file size limit of 0 bytes, core dumps off, SIGXFSZ ignored so an oversized
// write fails with EFBIG instead of killing), then the filter. Raw system calls only. Returns 0 or a negative errno.
int dr_sandbox_confine(const dr_sandbox_filter *filter, const dr_sandbox_limits *limits, int *namespaces);

// What a confined process tries, in a child forked for it (dr_sandbox_try).
typedef enum {
    DR_SANDBOX_TRY_NOTHING = 0,  // exits normally: a confined process runs
    DR_SANDBOX_TRY_OPEN = 1,     // opens `path` for reading and reads from it
    DR_SANDBOX_TRY_CREATE = 2,   // creates `path` and writes to it
    DR_SANDBOX_TRY_WRITE = 3,    // writes a byte to `fd`, a file opened before the confinement
    DR_SANDBOX_TRY_SOCKET = 4,   // opens an internet socket, then a Unix one
    DR_SANDBOX_TRY_EXEC = 5,     // runs `path` (execve)
    DR_SANDBOX_TRY_PTRACE = 6,   // asks to be traced
    DR_SANDBOX_TRY_ALLOCATE = 7  // maps twice the address-space limit
} dr_sandbox_attempt;

// How an attempt ended.
typedef struct {
    int confined;       // dr_sandbox_confine returned 0 in the child
    int namespaces;     // the namespaces applied
    int attempted;      // the child reached the attempt and reported its result
    int64_t result;     // the call's result (-1 on failure)
    int error;          // its errno
    int signal;         // the signal that ended the child; 0 when it exited
    int exit_status;    // its exit status when it exited
} dr_sandbox_outcome;

// Forks a child that confines itself and makes `attempt`, and waits for it. Returns 0 (the outcome says what
// happened) or a negative errno when the child could not be made.
int dr_sandbox_try(const dr_sandbox_filter *filter, const dr_sandbox_limits *limits, dr_sandbox_attempt attempt,
                   const char *path, int fd, dr_sandbox_outcome *outcome);

#endif
