#define _GNU_SOURCE
#include "darkroom_channel.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

extern char **environ;

int dr_channel_pair(int fds[2]) {
    return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) == 0 ? 0 : -errno;
}

int dr_channel_send(int socket, const void *bytes, size_t length, const int *fds, int fd_count) {
    if (fd_count < 0 || fd_count > 4) return -EINVAL;
    struct iovec iov = {(void *)bytes, length};
    union {
        char buffer[CMSG_SPACE(4 * sizeof(int))];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr message = {0};
    message.msg_iov = &iov;
    message.msg_iovlen = 1;
    if (fd_count > 0) {
        message.msg_control = control.buffer;
        message.msg_controllen = CMSG_SPACE((size_t)fd_count * sizeof(int));
        struct cmsghdr *header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN((size_t)fd_count * sizeof(int));
        memcpy(CMSG_DATA(header), fds, (size_t)fd_count * sizeof(int));
    }
    ssize_t sent;
    do sent = sendmsg(socket, &message, MSG_NOSIGNAL);
    while (sent < 0 && errno == EINTR);
    if (sent < 0) return -errno;
    return (size_t)sent == length ? 0 : -EMSGSIZE;
}

ssize_t dr_channel_receive(int socket, void *buffer, size_t capacity, int *fds, int max_fds, int *fd_count,
                           int timeout_ms) {
    *fd_count = 0;
    if (max_fds < 0 || max_fds > 4) return -EINVAL;
    struct pollfd waiting = {socket, POLLIN, 0};
    int ready;
    do ready = poll(&waiting, 1, timeout_ms);
    while (ready < 0 && errno == EINTR);
    if (ready < 0) return -errno;
    if (ready == 0) return -ETIMEDOUT;
    struct iovec iov = {buffer, capacity};
    union {
        char buffer[CMSG_SPACE(4 * sizeof(int))];
        struct cmsghdr align;
    } control;
    struct msghdr message = {0};
    message.msg_iov = &iov;
    message.msg_iovlen = 1;
    message.msg_control = control.buffer;
    message.msg_controllen = sizeof control.buffer;
    ssize_t got;
    do got = recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
    while (got < 0 && errno == EINTR);
    if (got < 0) return errno == ECONNRESET ? 0 : -errno;
    int count = 0;
    for (struct cmsghdr *h = CMSG_FIRSTHDR(&message); h; h = CMSG_NXTHDR(&message, h)) {
        if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS) continue;
        int n = (int)((h->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        int *received = (int *)CMSG_DATA(h);
        for (int i = 0; i < n; i++) {
            if (count < max_fds) fds[count++] = received[i];
            else close(received[i]);
        }
    }
    if (message.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
        for (int i = 0; i < count; i++) close(fds[i]);
        return -EMSGSIZE;
    }
    *fd_count = count;
    return got;
}

int dr_channel_memory_file(const char *name) {
    int fd = memfd_create(name, MFD_CLOEXEC);
    return fd >= 0 ? fd : -errno;
}

int dr_channel_sealed_memory_file(const char *name, size_t size) {
    int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return -errno;
    if (ftruncate(fd, (off_t)size) != 0 || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
        int error = errno;
        close(fd);
        return -error;
    }
    return fd;
}

int dr_channel_release_memory(int fd, size_t length) {
    if (length == 0) return 0;
    return fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)length) == 0 ? 0 : -errno;
}

int dr_channel_spawn(const char *path, const char *argument, int channel, pid_t *pid) {
    // dup2 onto itself would keep close-on-exec: a channel that is already descriptor 3 is copied first
    int copy = -1;
    if (channel == 3) {
        copy = fcntl(channel, F_DUPFD_CLOEXEC, 4);
        if (copy < 0) return -errno;
        channel = copy;
    }
    posix_spawn_file_actions_t actions;
    int rc = posix_spawn_file_actions_init(&actions);
    if (rc == 0) {
        rc = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
        if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions, channel, 3);
        // Nothing else of the parent's reaches the worker, close-on-exec or not
        if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(&actions, 4);
        char *argv[] = {(char *)path, (char *)argument, NULL};
        if (rc == 0) rc = posix_spawn(pid, path, &actions, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&actions);
    }
    if (copy >= 0) close(copy);
    return -rc;
}
