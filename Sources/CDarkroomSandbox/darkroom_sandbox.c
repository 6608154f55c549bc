#define _GNU_SOURCE
#include "darkroom_sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

// A sanitizer's runtime reserves terabytes of shadow address space before main: an address-space limit would fail
// its every later mapping, so sanitized builds (the thread-safety tests') leave it off.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define DR_SANITIZED 1
#endif
#endif
#ifndef DR_SANITIZED
#define DR_SANITIZED 0
#endif

struct dr_sandbox_filter {
    struct sock_fprog program;  // nothing may be opened
    struct sock_fprog reading;  // files may be opened read-only: for a root that holds only what may be read
};

static void set_message(char *msg, size_t len, const char *what, int err) {
    if (msg && len) snprintf(msg, len, "%s: %s", what, strerror(err));
}

// What decoding needs: the descriptors it was handed, memory, threads, time, signals to itself. Everything else is
// refused with EPERM (a library that probes a file or the network sees an ordinary failure); running a program and
// reaching into other processes end the process instead.
static const int allowed[] = {
    SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(readv), SCMP_SYS(writev), SCMP_SYS(pread64), SCMP_SYS(preadv),
    SCMP_SYS(lseek), SCMP_SYS(close), SCMP_SYS(fstat), SCMP_SYS(newfstatat), SCMP_SYS(fcntl), SCMP_SYS(ftruncate),
    SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(mprotect), SCMP_SYS(madvise), SCMP_SYS(brk),
    SCMP_SYS(futex), SCMP_SYS(set_robust_list), SCMP_SYS(get_robust_list), SCMP_SYS(rseq),
    SCMP_SYS(set_tid_address), SCMP_SYS(membarrier), SCMP_SYS(sched_yield), SCMP_SYS(sched_getaffinity),
    SCMP_SYS(clock_gettime), SCMP_SYS(clock_getres), SCMP_SYS(clock_nanosleep), SCMP_SYS(nanosleep),
    SCMP_SYS(gettimeofday), SCMP_SYS(gettid), SCMP_SYS(getpid), SCMP_SYS(getuid), SCMP_SYS(geteuid),
    SCMP_SYS(rt_sigaction), SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigreturn), SCMP_SYS(sigaltstack),
    SCMP_SYS(tgkill), SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(restart_syscall),
    SCMP_SYS(recvmsg), SCMP_SYS(sendmsg), SCMP_SYS(poll), SCMP_SYS(ppoll), SCMP_SYS(getrandom),
    SCMP_SYS(uname), SCMP_SYS(sysinfo),
};

static const int killed[] = {
    SCMP_SYS(execve), SCMP_SYS(execveat), SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv),
    SCMP_SYS(process_vm_writev),
};

// What reading the files of a root that holds only readable folders needs: opening without any way to write or
// create, listing folders, and the metadata calls fontconfig makes to validate its caches.
static const int reading_allowed[] = {
    SCMP_SYS(getdents64), SCMP_SYS(fstatfs), SCMP_SYS(statfs), SCMP_SYS(readlink), SCMP_SYS(readlinkat),
    SCMP_SYS(access), SCMP_SYS(faccessat), SCMP_SYS(faccessat2), SCMP_SYS(stat), SCMP_SYS(lstat), SCMP_SYS(statx),
    SCMP_SYS(fadvise64),
};

// One program: the rules above, with `reading` the read-only opens too. 0 or a negative errno.
static int build_program(int reading, struct sock_fprog *program, char *msg, size_t msg_len) {
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
    if (!ctx) {
        set_message(msg, msg_len, "seccomp_init", ENOMEM);
        return -ENOMEM;
    }
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof allowed / sizeof *allowed; i++)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i], 0);
    for (size_t i = 0; rc == 0 && i < sizeof killed / sizeof *killed; i++)
        rc = seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, killed[i], 0);
    // Threads, not processes: clone only with CLONE_THREAD; clone3, whose flags a filter cannot read, answers
    // ENOSYS so the C library falls back to clone
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                              SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
    if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    // A thread may name itself
    if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1, SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME));
    // Limits may be read, never raised
    if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 1, SCMP_A2(SCMP_CMP_EQ, 0));
    if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(getrlimit), 0);
    if (reading) {
        // Opened for reading only: no write access mode, no creating, truncating, appending or temporary file (the
        // C library's __O_TMPFILE includes O_DIRECTORY, which opening a folder to list it needs: its own bit only)
        const uint64_t writes = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND | 020000000;
        if (rc == 0)
            rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, writes, 0));
        if (rc == 0)
            rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(open), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, writes, 0));
        for (size_t i = 0; rc == 0 && i < sizeof reading_allowed / sizeof *reading_allowed; i++)
            rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, reading_allowed[i], 0);
    }
    if (rc != 0) {
        set_message(msg, msg_len, "seccomp_rule_add", -rc);
        seccomp_release(ctx);
        return rc;
    }
    // The program, exported through a memory file (libseccomp 2.5 exports to a descriptor)
    int fd = memfd_create("darkroom-seccomp", MFD_CLOEXEC);
    if (fd < 0) {
        rc = -errno;
        set_message(msg, msg_len, "memfd_create", errno);
        seccomp_release(ctx);
        return rc;
    }
    rc = seccomp_export_bpf(ctx, fd);
    seccomp_release(ctx);
    off_t size = rc == 0 ? lseek(fd, 0, SEEK_END) : -1;
    int built = 0;
    if (rc == 0 && size > 0 && size % (off_t)sizeof(struct sock_filter) == 0) {
        struct sock_filter *code = malloc((size_t)size);
        if (code && pread(fd, code, (size_t)size, 0) == size) {
            program->filter = code;
            program->len = (unsigned short)(size / (off_t)sizeof(struct sock_filter));
            built = 1;
        } else {
            free(code);
        }
    }
    close(fd);
    if (!built) {
        set_message(msg, msg_len, "seccomp_export_bpf", rc < 0 ? -rc : EIO);
        return rc < 0 ? rc : -EIO;
    }
    return 0;
}

int dr_sandbox_filter_build(dr_sandbox_filter **out, char *msg, size_t msg_len) {
    if (!out) return -EINVAL;
    *out = NULL;
    struct dr_sandbox_filter *filter = calloc(1, sizeof *filter);
    if (!filter) return -ENOMEM;
    int rc = build_program(0, &filter->program, msg, msg_len);
    if (rc == 0) rc = build_program(1, &filter->reading, msg, msg_len);
    if (rc != 0) {
        dr_sandbox_filter_free(filter);
        return rc;
    }
    *out = filter;
    return 0;
}

void dr_sandbox_filter_free(dr_sandbox_filter *filter) {
    if (!filter) return;
    free(filter->program.filter);
    free(filter->reading.filter);
    free(filter);
}

int dr_sandbox_filter_length(const dr_sandbox_filter *filter) { return filter ? filter->program.len : 0; }

// Writes `text` to the file at `path` (a /proc file of this process). 0, or -1 with errno set.
static int write_file(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    size_t length = strlen(text);
    ssize_t n = write(fd, text, length);
    int saved = errno;
    close(fd);
    errno = saved;
    return n == (ssize_t)length ? 0 : -1;
}

// Creates every folder of `path` (absolute) that is missing. 0, or -1 with errno set.
static int make_folders(const char *path) {
    char partial[4096];
    size_t length = strlen(path);
    if (length >= sizeof partial) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(partial, path, length + 1);
    for (char *slash = strchr(partial + 1, '/');; slash = strchr(slash + 1, '/')) {
        if (slash) *slash = 0;
        if (mkdir(partial, 0755) != 0 && errno != EEXIST) return -1;
        if (!slash) return 0;
        *slash = '/';
    }
}

// `source` bound read-only at the same path under `root` (the mount's own flags kept: an unprivileged namespace may
// not clear them). A folder that does not exist is skipped. 0, or -1 with errno set.
static int bind_read_only(const char *root, const char *source) {
    struct statvfs fs;
    struct stat st;
    if (stat(source, &st) != 0 || !S_ISDIR(st.st_mode) || statvfs(source, &fs) != 0) return 0;
    char target[4096];
    if (snprintf(target, sizeof target, "%s%s", root, source) >= (int)sizeof target) return 0;
    if (make_folders(target) != 0) return -1;
    if (mount(source, target, NULL, MS_BIND | MS_REC, NULL) != 0) return -1;
    unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV;
    if (fs.f_flag & ST_NOEXEC) flags |= MS_NOEXEC;
    if (fs.f_flag & ST_NOATIME) flags |= MS_NOATIME;
    if (fs.f_flag & ST_NODIRATIME) flags |= MS_NODIRATIME;
    if (fs.f_flag & ST_RELATIME) flags |= MS_RELATIME;
    return mount(NULL, target, NULL, flags, NULL);
}

// A new user, mount and network namespace whose root is a read-only tmpfs holding nothing but the folders of
// `readable` (newline-separated absolute paths; may be NULL), each bound read-only at its own path: nothing else of
// the host's files is there to reach, and no network but an unconfigured loopback. 0, or -1 (errno set) when the
// kernel refuses.
static int enter_namespaces(const char *readable) {
    uid_t uid = getuid();
    gid_t gid = getgid();
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET) != 0) return -1;
    // This process's own ids, mapped to themselves: needed to make the mount points
    char map[64];
    snprintf(map, sizeof map, "%u %u 1", (unsigned)uid, (unsigned)uid);
    if (write_file("/proc/self/uid_map", map) != 0) return -1;
    if (write_file("/proc/self/setgroups", "deny") != 0) return -1;
    snprintf(map, sizeof map, "%u %u 1", (unsigned)gid, (unsigned)gid);
    if (write_file("/proc/self/gid_map", map) != 0) return -1;
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) return -1;
    if (mount("darkroom-root", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k,mode=0755") != 0)
        return -1;
    if (readable) {
        const char *start = readable;
        while (*start) {
            const char *end = strchr(start, '\n');
            size_t length = end ? (size_t)(end - start) : strlen(start);
            char path[4096];
            if (length > 0 && length < sizeof path && start[0] == '/') {
                memcpy(path, start, length);
                path[length] = 0;
                if (bind_read_only("/tmp", path) != 0) return -1;
            }
            if (!end) break;
            start = end + 1;
        }
    }
    if (chdir("/tmp") != 0) return -1;
    if (syscall(SYS_pivot_root, ".", ".") != 0) return -1;
    if (umount2(".", MNT_DETACH) != 0) return -1;
    if (chdir("/") != 0) return -1;
    return mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
}

static int limit(int resource, int64_t value) {
    struct rlimit r = {(rlim_t)value, (rlim_t)value};
    return setrlimit(resource, &r);
}

int dr_sandbox_confine(const dr_sandbox_filter *filter, const dr_sandbox_limits *limits, int *namespaces) {
    if (!filter || !limits) return -EINVAL;
    int entered = limits->namespaces && enter_namespaces(limits->readable_paths) == 0;
    if (namespaces) *namespaces = entered;
    // Files may be opened (read-only) only in a root that holds nothing but the readable folders
    const struct sock_fprog *program =
        entered && limits->readable_paths && *limits->readable_paths ? &filter->reading : &filter->program;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -errno;
    if (!DR_SANITIZED && limits->address_space_bytes > 0 && limit(RLIMIT_AS, limits->address_space_bytes) != 0)
        return -errno;
    if (limits->cpu_seconds > 0) {
        // The soft limit sends SIGXCPU (which ends the process), the hard one a second later SIGKILL
        struct rlimit r = {(rlim_t)limits->cpu_seconds, (rlim_t)limits->cpu_seconds + 1};
        if (setrlimit(RLIMIT_CPU, &r) != 0) return -errno;
    }
    if (limit(RLIMIT_FSIZE, 0) != 0 || limit(RLIMIT_CORE, 0) != 0) return -errno;
    signal(SIGXFSZ, SIG_IGN);
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, program, 0, 0) != 0) return -errno;
    return 0;
}

// The child's two reports: after the confinement, and after the attempt.
typedef struct {
    int stage;
    int confined;
    int namespaces;
    int64_t result;
    int error;
} report;

static void send_report(int fd, const report *r) {
    ssize_t n;
    do n = write(fd, r, sizeof *r);
    while (n < 0 && errno == EINTR);
}

static void attempt_in_child(const dr_sandbox_filter *filter, const dr_sandbox_limits *limits,
                             dr_sandbox_attempt attempt, const char *path, int fd, int out) {
    report r = {1, 0, 0, 0, 0};
    r.confined = dr_sandbox_confine(filter, limits, &r.namespaces) == 0;
    send_report(out, &r);
    if (!r.confined) _exit(2);
    r.stage = 2;
    errno = 0;
    char byte = 'x';
    switch (attempt) {
    case DR_SANDBOX_TRY_NOTHING: r.result = 0; break;
    case DR_SANDBOX_TRY_OPEN: {
        r.result = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
        if (r.result >= 0) r.result = read((int)r.result, &byte, 1) == 1 ? 1 : 0;
        break;
    }
    case DR_SANDBOX_TRY_CREATE: {
        r.result = syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (r.result >= 0) r.result = write((int)r.result, &byte, 1);
        break;
    }
    case DR_SANDBOX_TRY_WRITE: r.result = write(fd, &byte, 1); break;
    case DR_SANDBOX_TRY_SOCKET: {
        r.result = syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
        if (r.result < 0) r.result = syscall(SYS_socket, AF_UNIX, SOCK_STREAM, 0);
        break;
    }
    case DR_SANDBOX_TRY_EXEC: {
        char *const argv[] = {(char *)path, NULL};
        char *const envp[] = {NULL};
        r.result = syscall(SYS_execve, path, argv, envp);
        break;
    }
    case DR_SANDBOX_TRY_PTRACE: r.result = syscall(SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0, 0); break;
    case DR_SANDBOX_TRY_ALLOCATE: {
        size_t size = (size_t)(limits->address_space_bytes > 0 ? limits->address_space_bytes : 1 << 30) * 2;
        void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        r.result = p == MAP_FAILED ? -1 : 0;
        break;
    }
    }
    r.error = r.result < 0 ? errno : 0;
    send_report(out, &r);
    _exit(0);
}

int dr_sandbox_try(const dr_sandbox_filter *filter, const dr_sandbox_limits *limits, dr_sandbox_attempt attempt,
                   const char *path, int fd, dr_sandbox_outcome *outcome) {
    if (!filter || !limits || !outcome) return -EINVAL;
    memset(outcome, 0, sizeof *outcome);
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0) return -errno;
    pid_t pid = fork();
    if (pid < 0) {
        int err = errno;
        close(pipefd[0]);
        close(pipefd[1]);
        return -err;
    }
    if (pid == 0) {
        close(pipefd[0]);
        attempt_in_child(filter, limits, attempt, path, fd, pipefd[1]);
        _exit(3);
    }
    close(pipefd[1]);
    report r;
    ssize_t n;
    for (;;) {
        do n = read(pipefd[0], &r, sizeof r);
        while (n < 0 && errno == EINTR);
        if (n != (ssize_t)sizeof r) break;
        outcome->confined = r.confined;
        outcome->namespaces = r.namespaces;
        if (r.stage == 2) {
            outcome->attempted = 1;
            outcome->result = r.result;
            outcome->error = r.error;
        }
    }
    close(pipefd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -errno;
    if (WIFSIGNALED(status)) outcome->signal = WTERMSIG(status);
    if (WIFEXITED(status)) outcome->exit_status = WEXITSTATUS(status);
    return 0;
}
