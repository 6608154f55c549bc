#ifndef DARKROOM_BUS_H
#define DARKROOM_BUS_H

#include <stddef.h>
#include <stdint.h>

// The desktop's thumbnail service on D-Bus, through sd-bus (libsystemd): the Thumbnail Management D-Bus
// Specification's org.freedesktop.thumbnails.Thumbnailer1 and org.freedesktop.thumbnails.Cache1 interfaces, each at
// its object path. The vtables (macros), argument parsing and replies (variadic calls) stay here; Swift sees plain
// callbacks and status codes.
//
// Not thread-safe: a bus is used from one thread (the one that calls dr_bus_run), as sd-bus requires. The handlers
// run on that thread, inside dr_bus_run.

typedef struct dr_bus dr_bus;

// A D-Bus error a handler answers with: its name (for example org.freedesktop.DBus.Error.InvalidArgs) and a message.
typedef struct {
    char name[128];
    char message[512];
} dr_bus_error;

// The Cache1 operations.
typedef enum {
    DR_BUS_CACHE_MOVE = 0,     // Move(as from_uris, as to_uris)
    DR_BUS_CACHE_COPY = 1,     // Copy(as from_uris, as to_uris)
    DR_BUS_CACHE_DELETE = 2,   // Delete(as uris)
    DR_BUS_CACHE_CLEANUP = 3   // Cleanup(as base_uris, u since)
} dr_bus_cache_operation;

// What the service does with each call. Each returns 0, or -1 having filled `error`. Arrays are valid during the call.
typedef struct {
    void *context;
    // Queue(as uris, as mime_types, s flavor, s scheduler, u handle_to_dequeue) -> u handle; `sender` is the caller's
    // unique bus name
    int (*queue)(void *context, const char *sender, const char *const *uris, size_t uri_count,
                 const char *const *mime_types,
                 size_t mime_count, const char *flavor, const char *scheduler, uint32_t handle_to_dequeue,
                 uint32_t *handle, dr_bus_error *error);
    // Dequeue(u handle)
    int (*dequeue)(void *context, uint32_t handle, dr_bus_error *error);
    // A Cache1 call. Its reply is sent later: the service calls dr_bus_reply with `call` once the work is done (a
    // file operation over a whole cache folder must not hold the bus). `to` is empty except for Move and Copy.
    int (*cache)(void *context, dr_bus_cache_operation operation, const char *const *uris, size_t uri_count,
                 const char *const *to, size_t to_count, uint32_t since, void *call, dr_bus_error *error);
} dr_bus_handlers;

// The constant answers: GetSupported's parallel lists of URI schemes and MIME types, GetFlavors, GetSchedulers.
// Copied by dr_bus_open.
typedef struct {
    const char *const *schemes;
    const char *const *mime_types;
    size_t supported_count;
    const char *const *flavors;
    size_t flavor_count;
    const char *const *schedulers;
    size_t scheduler_count;
} dr_bus_lists;

// Connects to the bus at `address` (a D-Bus address such as unix:path=/run/user/1000/bus), or the user's session
// bus when NULL, and adds the two objects. Returns 0, or a negative errno with a message.
int dr_bus_open(dr_bus **out, const char *address, const dr_bus_handlers *handlers, const dr_bus_lists *lists,
                char *message, size_t message_length);

// Asks for a well-known name without queueing: 0, -EEXIST when another connection owns it, or a negative errno.
int dr_bus_own_name(dr_bus *bus, const char *name);

// Gives a name back (so the bus starts a new instance for the next call): 0 or a negative errno.
int dr_bus_release_name(dr_bus *bus, const char *name);

// Handles every message waiting, sends what is queued, then waits at most `timeout_usec` (UINT64_MAX: no limit) for
// the bus or `wake_fd` (an eventfd another thread writes to; read and cleared here) to be readable. Returns 1 when
// woken by `wake_fd`, 0 otherwise, or a negative errno (-ECONNRESET: the bus went away).
int dr_bus_run(dr_bus *bus, int wake_fd, uint64_t timeout_usec);

// Signals on /org/freedesktop/thumbnails/Thumbnailer1.
// Started(u handle) or Finished(u handle): `member` is "Started" or "Finished".
int dr_bus_emit_handle(dr_bus *bus, const char *member, uint32_t handle);
// Ready(u handle, as uris)
int dr_bus_emit_ready(dr_bus *bus, uint32_t handle, const char *const *uris, size_t count);
// Error(u handle, as failed_uris, i error_code, s message)
int dr_bus_emit_error(dr_bus *bus, uint32_t handle, const char *const *uris, size_t count, int32_t code,
                      const char *message);

// Answers a Cache1 call handed to the `cache` handler: an empty reply when `error` is NULL, else that error.
int dr_bus_reply(dr_bus *bus, void *call, const dr_bus_error *error);

// Sends everything queued (for example before closing).
int dr_bus_flush(dr_bus *bus);

// This connection's unique name (":1.42"), valid while the bus is open.
const char *dr_bus_unique_name(dr_bus *bus);

// A new eventfd for dr_bus_run's `wake_fd` (close-on-exec, non-blocking), or a negative errno.
int dr_bus_wake_fd(void);

// Wakes the thread waiting in dr_bus_run on `wake_fd`; safe from any thread.
void dr_bus_wake(int wake_fd);

// Closes the connection and frees the bus.
void dr_bus_close(dr_bus *bus);

#endif
