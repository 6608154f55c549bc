#ifndef DARKROOM_CHANNEL_H
#define DARKROOM_CHANNEL_H

#include <stddef.h>
#include <sys/types.h>

// The channel between the parent and a decode worker: a Unix socket pair of sequenced packets (each message whole or
// not at all, in order), whose messages may carry descriptors (SCM_RIGHTS). The ancillary-data macros stay here.

// Makes the pair; close-on-exec on both ends. Returns 0 or a negative errno.
int dr_channel_pair(int fds[2]);

// Sends `length` bytes with up to 4 descriptors. Returns 0 or a negative errno (-EPIPE: the peer is gone).
int dr_channel_send(int socket, const void *bytes, size_t length, const int *fds, int fd_count);

// Receives one message into `buffer` (at most `capacity` bytes) and up to `max_fds` descriptors (close-on-exec),
// waiting at most `timeout_ms` (< 0: no limit). Returns the message's length, 0 when the peer is gone, or a negative
// errno (-ETIMEDOUT when the time ran out, -EMSGSIZE for a message or descriptors cut short: those received are
// closed).
ssize_t dr_channel_receive(int socket, void *buffer, size_t capacity, int *fds, int max_fds, int *fd_count,
                           int timeout_ms);

// A new memory file (memfd_create, close-on-exec): its descriptor, or a negative errno.
int dr_channel_memory_file(const char *name);

// A new memory file of `size` bytes (sparse, close-on-exec) sealed at that size: no process holding it can shrink or
// grow it, so a mapping of it never faults past its end whatever a worker does with its copy of the descriptor.
// Its descriptor, or a negative errno.
int dr_channel_sealed_memory_file(const char *name, size_t size);

// Gives back the memory of the first `length` bytes of a memory file, keeping its size (a hole punched): 0, or a
// negative errno.
int dr_channel_release_memory(int fd, size_t length);

// Starts the program at `path` (argv[0] = path, then `argument`, if any) with the descriptor `channel` as its
// descriptor 3, standard input from /dev/null, its output and errors the parent's; no other descriptor is inherited.
// Returns 0 and the child's process id, or a negative errno.
int dr_channel_spawn(const char *path, const char *argument, int channel, pid_t *pid);

#endif
