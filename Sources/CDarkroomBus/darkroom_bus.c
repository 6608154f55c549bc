#include "darkroom_bus.h"

#include <errno.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#define THUMBNAILER_PATH "/org/freedesktop/thumbnails/Thumbnailer1"
#define THUMBNAILER_INTERFACE "org.freedesktop.thumbnails.Thumbnailer1"
#define CACHE_PATH "/org/freedesktop/thumbnails/Cache1"
#define CACHE_INTERFACE "org.freedesktop.thumbnails.Cache1"

struct dr_bus {
    sd_bus *bus;
    dr_bus_handlers handlers;
    // NULL-terminated copies of the constant answers
    char **schemes;
    char **mime_types;
    char **flavors;
    char **schedulers;
};

// A NULL-terminated copy of `count` strings, or NULL when memory runs out.
static char **copy_strings(const char *const *strings, size_t count) {
    char **copy = calloc(count + 1, sizeof(char *));
    if (copy == NULL) return NULL;
    for (size_t i = 0; i < count; i++) {
        copy[i] = strdup(strings[i]);
        if (copy[i] == NULL) {
            for (size_t j = 0; j < i; j++) free(copy[j]);
            free(copy);
            return NULL;
        }
    }
    return copy;
}

static void free_strings(char **strings) {
    if (strings == NULL) return;
    for (char **s = strings; *s != NULL; s++) free(*s);
    free(strings);
}

// The strings of an `as` argument, read in place (valid while the message is): a linear pass (sd-bus's own
// sd_bus_message_read_strv extends its list one string at a time, counting it each time: quadratic). `*strings` is
// freed by the caller. Returns the count, or a negative errno.
typedef struct {
    const char **strings;
    size_t count;
} string_list;

static int read_strings(sd_bus_message *m, string_list *list) {
    list->strings = NULL;
    list->count = 0;
    size_t capacity = 0;
    int r = sd_bus_message_enter_container(m, 'a', "s");
    if (r < 0) return r;
    for (;;) {
        const char *s = NULL;
        r = sd_bus_message_read_basic(m, 's', &s);
        if (r < 0) return r;
        if (r == 0) break;
        if (list->count == capacity) {
            capacity = capacity ? capacity * 2 : 16;
            const char **grown = realloc(list->strings, capacity * sizeof(char *));
            if (grown == NULL) return -ENOMEM;
            list->strings = grown;
        }
        list->strings[list->count++] = s;
    }
    r = sd_bus_message_exit_container(m);
    return r < 0 ? r : 0;
}

// Turns a handler's error into the method's D-Bus error.
static int fail(sd_bus_error *ret_error, const dr_bus_error *error) {
    const char *name = error->name[0] ? error->name : SD_BUS_ERROR_FAILED;
    return sd_bus_error_set(ret_error, name, error->message);
}

static int method_queue(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
    dr_bus *bus = userdata;
    string_list uris = {NULL, 0}, mime_types = {NULL, 0};
    const char *flavor = NULL, *scheduler = NULL;
    uint32_t dequeue = 0, handle = 0;
    int r = read_strings(m, &uris);
    if (r >= 0) r = read_strings(m, &mime_types);
    if (r >= 0) r = sd_bus_message_read_basic(m, 's', &flavor);
    if (r >= 0) r = sd_bus_message_read_basic(m, 's', &scheduler);
    if (r >= 0) r = sd_bus_message_read_basic(m, 'u', &dequeue);
    dr_bus_error error = {{0}, {0}};
    int status = 0;
    if (r >= 0) {
        const char *sender = sd_bus_message_get_sender(m);
        status = bus->handlers.queue(bus->handlers.context, sender ? sender : "", uris.strings, uris.count,
                                     mime_types.strings,
                                     mime_types.count, flavor, scheduler, dequeue, &handle, &error);
    }
    free(uris.strings);
    free(mime_types.strings);
    if (r < 0) return r;
    if (status != 0) return fail(ret_error, &error);
    return sd_bus_reply_method_return(m, "u", handle);
}

static int method_dequeue(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
    dr_bus *bus = userdata;
    uint32_t handle = 0;
    int r = sd_bus_message_read_basic(m, 'u', &handle);
    if (r < 0) return r;
    dr_bus_error error = {{0}, {0}};
    if (bus->handlers.dequeue(bus->handlers.context, handle, &error) != 0) return fail(ret_error, &error);
    return sd_bus_reply_method_return(m, "");
}

// Replies with one or two string arrays.
static int reply_strvs(sd_bus_message *m, char **first, char **second) {
    sd_bus_message *reply = NULL;
    int r = sd_bus_message_new_method_return(m, &reply);
    if (r >= 0) r = sd_bus_message_append_strv(reply, first);
    if (r >= 0 && second != NULL) r = sd_bus_message_append_strv(reply, second);
    if (r >= 0) r = sd_bus_send(NULL, reply, NULL);
    sd_bus_message_unref(reply);
    return r;
}

static int method_supported(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
    (void)ret_error;
    dr_bus *bus = userdata;
    return reply_strvs(m, bus->schemes, bus->mime_types);
}

static int method_schedulers(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
    (void)ret_error;
    return reply_strvs(m, ((dr_bus *)userdata)->schedulers, NULL);
}

static int method_flavors(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
    (void)ret_error;
    return reply_strvs(m, ((dr_bus *)userdata)->flavors, NULL);
}

// Cache1's methods: the arguments are handed over with the call (referenced), answered by dr_bus_reply.
static int cache_call(sd_bus_message *m, dr_bus *bus, dr_bus_cache_operation operation, sd_bus_error *ret_error) {
    string_list uris = {NULL, 0}, to = {NULL, 0};
    uint32_t since = 0;
    int r = read_strings(m, &uris);
    if (r >= 0 && (operation == DR_BUS_CACHE_MOVE || operation == DR_BUS_CACHE_COPY)) r = read_strings(m, &to);
    if (r >= 0 && operation == DR_BUS_CACHE_CLEANUP) r = sd_bus_message_read_basic(m, 'u', &since);
    dr_bus_error error = {{0}, {0}};
    int status = 0;
    if (r >= 0) {
        sd_bus_message_ref(m);
        status = bus->handlers.cache(bus->handlers.context, operation, uris.strings, uris.count, to.strings,
                                     to.count, since, m, &error);
        if (status != 0) sd_bus_message_unref(m);
    }
    free(uris.strings);
    free(to.strings);
    if (r < 0) return r;
    if (status != 0) return fail(ret_error, &error);
    return 1;  // answered later
}

static int method_move(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
    return cache_call(m, userdata, DR_BUS_CACHE_MOVE, ret_error);
}
static int method_copy(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
    return cache_call(m, userdata, DR_BUS_CACHE_COPY, ret_error);
}
static int method_delete(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
    return cache_call(m, userdata, DR_BUS_CACHE_DELETE, ret_error);
}
static int method_cleanup(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
    return cache_call(m, userdata, DR_BUS_CACHE_CLEANUP, ret_error);
}

static const sd_bus_vtable thumbnailer_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD_WITH_ARGS("Queue",
                            SD_BUS_ARGS("as", uris, "as", mime_types, "s", flavor, "s", scheduler, "u",
                                        handle_to_unqueue),
                            SD_BUS_RESULT("u", handle), method_queue, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Dequeue", SD_BUS_ARGS("u", handle), SD_BUS_NO_RESULT, method_dequeue,
                            SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("GetSupported", SD_BUS_NO_ARGS, SD_BUS_RESULT("as", uri_schemes, "as", mime_types),
                            method_supported, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("GetSchedulers", SD_BUS_NO_ARGS, SD_BUS_RESULT("as", schedulers), method_schedulers,
                            SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("GetFlavors", SD_BUS_NO_ARGS, SD_BUS_RESULT("as", flavors), method_flavors,
                            SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_SIGNAL_WITH_ARGS("Started", SD_BUS_ARGS("u", handle), 0),
    SD_BUS_SIGNAL_WITH_ARGS("Finished", SD_BUS_ARGS("u", handle), 0),
    SD_BUS_SIGNAL_WITH_ARGS("Ready", SD_BUS_ARGS("u", handle, "as", uris), 0),
    SD_BUS_SIGNAL_WITH_ARGS("Error", SD_BUS_ARGS("u", handle, "as", failed_uris, "i", error_code, "s", message), 0),
    SD_BUS_VTABLE_END};

static const sd_bus_vtable cache_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD_WITH_ARGS("Move", SD_BUS_ARGS("as", from_uris, "as", to_uris), SD_BUS_NO_RESULT, method_move,
                            SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Copy", SD_BUS_ARGS("as", from_uris, "as", to_uris), SD_BUS_NO_RESULT, method_copy,
                            SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Delete", SD_BUS_ARGS("as", uris), SD_BUS_NO_RESULT, method_delete,
                            SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Cleanup", SD_BUS_ARGS("as", base_uris, "u", since), SD_BUS_NO_RESULT, method_cleanup,
                            SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_VTABLE_END};

int dr_bus_open(dr_bus **out, const char *address, const dr_bus_handlers *handlers, const dr_bus_lists *lists,
                char *message, size_t message_length) {
    *out = NULL;
    dr_bus *bus = calloc(1, sizeof(dr_bus));
    if (bus == NULL) return -ENOMEM;
    bus->handlers = *handlers;
    bus->schemes = copy_strings(lists->schemes, lists->supported_count);
    bus->mime_types = copy_strings(lists->mime_types, lists->supported_count);
    bus->flavors = copy_strings(lists->flavors, lists->flavor_count);
    bus->schedulers = copy_strings(lists->schedulers, lists->scheduler_count);
    int r = 0;
    const char *step = "allocate";
    if (!bus->schemes || !bus->mime_types || !bus->flavors || !bus->schedulers) {
        r = -ENOMEM;
    } else if (address == NULL) {
        step = "connect to the session bus";
        r = sd_bus_open_user(&bus->bus);
    } else {
        step = "connect to the bus";
        r = sd_bus_new(&bus->bus);
        if (r >= 0) r = sd_bus_set_address(bus->bus, address);
        if (r >= 0) r = sd_bus_set_bus_client(bus->bus, 1);
        if (r >= 0) r = sd_bus_start(bus->bus);
    }
    if (r >= 0) {
        step = "add the Thumbnailer1 object";
        r = sd_bus_add_object_vtable(bus->bus, NULL, THUMBNAILER_PATH, THUMBNAILER_INTERFACE, thumbnailer_vtable,
                                     bus);
    }
    if (r >= 0) {
        step = "add the Cache1 object";
        r = sd_bus_add_object_vtable(bus->bus, NULL, CACHE_PATH, CACHE_INTERFACE, cache_vtable, bus);
    }
    if (r < 0) {
        snprintf(message, message_length, "cannot %s: %s", step, strerror(-r));
        dr_bus_close(bus);
        return r;
    }
    *out = bus;
    return 0;
}

int dr_bus_own_name(dr_bus *bus, const char *name) {
    return sd_bus_request_name(bus->bus, name, 0);
}

int dr_bus_release_name(dr_bus *bus, const char *name) {
    int r = sd_bus_release_name(bus->bus, name);
    return r < 0 ? r : 0;
}

static uint64_t now_usec(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

int dr_bus_run(dr_bus *bus, int wake_fd, uint64_t timeout_usec) {
    for (;;) {
        int r = sd_bus_process(bus->bus, NULL);
        if (r < 0) return r;
        if (r == 0) break;
    }
    uint64_t until = UINT64_MAX;
    int r = sd_bus_get_timeout(bus->bus, &until);
    if (r < 0) return r;
    uint64_t wait = timeout_usec;
    if (until != UINT64_MAX) {
        uint64_t now = now_usec();
        uint64_t left = until > now ? until - now : 0;
        if (left < wait) wait = left;
    }
    int events = sd_bus_get_events(bus->bus);
    if (events < 0) return events;
    struct pollfd fds[2] = {{sd_bus_get_fd(bus->bus), (short)events, 0}, {wake_fd, POLLIN, 0}};
    int milliseconds = wait == UINT64_MAX ? -1 : (int)((wait + 999) / 1000 > 0x7fffffff ? 0x7fffffff : (wait + 999) / 1000);
    r = poll(fds, wake_fd >= 0 ? 2 : 1, milliseconds);
    if (r < 0) return errno == EINTR ? 0 : -errno;
    if (wake_fd >= 0 && (fds[1].revents & POLLIN)) {
        uint64_t value;
        if (read(wake_fd, &value, sizeof value) < 0 && errno != EAGAIN) return -errno;
        return 1;
    }
    return 0;
}

// Sends `message`, making room first when the outgoing queue is full.
static int send_message(dr_bus *bus, sd_bus_message *message) {
    int r = sd_bus_send(bus->bus, message, NULL);
    if (r == -ENOBUFS) {
        r = sd_bus_flush(bus->bus);
        if (r >= 0) r = sd_bus_send(bus->bus, message, NULL);
    }
    return r;
}

static int append_strings(sd_bus_message *message, const char *const *strings, size_t count) {
    int r = sd_bus_message_open_container(message, 'a', "s");
    for (size_t i = 0; r >= 0 && i < count; i++) r = sd_bus_message_append_basic(message, 's', strings[i]);
    if (r >= 0) r = sd_bus_message_close_container(message);
    return r;
}

int dr_bus_emit_handle(dr_bus *bus, const char *member, uint32_t handle) {
    sd_bus_message *message = NULL;
    int r = sd_bus_message_new_signal(bus->bus, &message, THUMBNAILER_PATH, THUMBNAILER_INTERFACE, member);
    if (r >= 0) r = sd_bus_message_append_basic(message, 'u', &handle);
    if (r >= 0) r = send_message(bus, message);
    sd_bus_message_unref(message);
    return r < 0 ? r : 0;
}

int dr_bus_emit_ready(dr_bus *bus, uint32_t handle, const char *const *uris, size_t count) {
    sd_bus_message *message = NULL;
    int r = sd_bus_message_new_signal(bus->bus, &message, THUMBNAILER_PATH, THUMBNAILER_INTERFACE, "Ready");
    if (r >= 0) r = sd_bus_message_append_basic(message, 'u', &handle);
    if (r >= 0) r = append_strings(message, uris, count);
    if (r >= 0) r = send_message(bus, message);
    sd_bus_message_unref(message);
    return r < 0 ? r : 0;
}

int dr_bus_emit_error(dr_bus *bus, uint32_t handle, const char *const *uris, size_t count, int32_t code,
                      const char *text) {
    sd_bus_message *message = NULL;
    int r = sd_bus_message_new_signal(bus->bus, &message, THUMBNAILER_PATH, THUMBNAILER_INTERFACE, "Error");
    if (r >= 0) r = sd_bus_message_append_basic(message, 'u', &handle);
    if (r >= 0) r = append_strings(message, uris, count);
    if (r >= 0) r = sd_bus_message_append_basic(message, 'i', &code);
    if (r >= 0) r = sd_bus_message_append_basic(message, 's', text);
    if (r >= 0) r = send_message(bus, message);
    sd_bus_message_unref(message);
    return r < 0 ? r : 0;
}

int dr_bus_reply(dr_bus *bus, void *call, const dr_bus_error *error) {
    (void)bus;
    sd_bus_message *m = call;
    int r;
    if (error == NULL) {
        r = sd_bus_reply_method_return(m, "");
    } else {
        r = sd_bus_reply_method_error(m, &SD_BUS_ERROR_MAKE_CONST(error->name[0] ? error->name : SD_BUS_ERROR_FAILED,
                                                                  error->message));
    }
    sd_bus_message_unref(m);
    return r < 0 ? r : 0;
}

int dr_bus_flush(dr_bus *bus) {
    int r = sd_bus_flush(bus->bus);
    return r < 0 ? r : 0;
}

const char *dr_bus_unique_name(dr_bus *bus) {
    const char *name = NULL;
    return sd_bus_get_unique_name(bus->bus, &name) >= 0 ? name : "";
}

int dr_bus_wake_fd(void) {
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    return fd < 0 ? -errno : fd;
}

void dr_bus_wake(int wake_fd) {
    uint64_t one = 1;
    ssize_t written = write(wake_fd, &one, sizeof one);
    (void)written;  // EAGAIN: the counter is already non-zero, so the waiter wakes anyway
}

void dr_bus_close(dr_bus *bus) {
    if (bus == NULL) return;
    if (bus->bus != NULL) sd_bus_flush_close_unref(bus->bus);
    free_strings(bus->schemes);
    free_strings(bus->mime_types);
    free_strings(bus->flavors);
    free_strings(bus->schedulers);
    free(bus);
}
