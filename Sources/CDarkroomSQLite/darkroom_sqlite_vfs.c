/* A pass-through VFS over the default one that prefaults the pages a WAL checkpoint writes into the database file.
 *
 * SQLite reads a database through a read-only shared mapping (PRAGMA mmap_size) but writes it with pwrite, so a
 * page a checkpoint copied out of the WAL is new to the mapping: the first read of it takes a page fault (measured
 * ~4 us each on the project machine, one per 16 pages). A cache reads recently written values first, on its
 * latency-critical path; the checkpoint runs on the writing thread. This shim records the runs of bytes each
 * checkpoint writes and, when the checkpoint is done (SQLITE_FCNTL_CKPT_DONE), asks the kernel to map them with
 * madvise(MADV_POPULATE_READ), which maps pages already in the page cache and reports failure instead of
 * raising SIGBUS. The mapping's address comes from the wrapped file's own xFetch (released at once), so the shim
 * never touches an address SQLite has not just handed out. Failure of any of this is ignored: it is only a hint. */

#include "darkroom_sqlite.h"

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 */
#endif

/* A run of bytes written: [start, end). */
typedef struct dr_run {
    sqlite3_int64 start, end;
} dr_run;

typedef struct dr_file {
    sqlite3_file base;  /* pMethods: one of the dr_io_methods tables */
    sqlite3_file *real; /* the wrapped file, allocated just after this struct */
    int is_main_db;
    /* What was written since the last checkpoint finished, as runs of contiguous bytes (a checkpoint writes pages
       in ascending order, so appended pages coalesce into one run and rewritten b-tree pages add short ones).
       Populating only these, not the span from the first to the last, keeps the cost to the pages written. */
    dr_run *runs;
    int run_count, run_capacity;
} dr_file;

/* Most runs kept per checkpoint; past it the rest are not prefaulted (their first reads fault as without the
   VFS). A checkpoint of 1,000 pages has at most 1,000 runs; 4,096 × 16 bytes bounds the memory at 64 KiB. */
#define DR_MAX_RUNS 4096

/* sizeof(dr_file) rounded up so the wrapped file that follows is 8-byte aligned. */
#define DR_FILE_SIZE ((sizeof(dr_file) + 7) & ~(size_t)7)

static sqlite3_vfs dr_vfs;
static sqlite3_vfs *dr_root;
static pthread_once_t dr_once = PTHREAD_ONCE_INIT;
static int dr_register_rc = SQLITE_ERROR;
static _Atomic uint64_t dr_prefaulted;
static _Atomic int dr_populate_unsupported;

#define REAL(f) (((dr_file *)(f))->real)

/* Enters [start, end) of the file into SQLite's current mapping, if both ends are in it. */
static void dr_prefault_run(dr_file *f, sqlite3_int64 start, sqlite3_int64 end, sqlite3_int64 limit) {
    const sqlite3_io_methods *m = f->real->pMethods;
    if (end > limit) end = limit;
    if (end <= start) return;
    /* Both ends must be inside the mapping SQLite holds now. The last byte itself may be refused (xFetch wants a
       margin past what it hands out at the end of the file), so the end is checked 512 bytes short: checkpoint
       writes are whole pages of at least 512 bytes, so the page-granular mapping still reaches `end`. */
    sqlite3_int64 probe = end - 512 > start ? end - 512 : start;
    void *first = NULL, *last = NULL;
    if (m->xFetch(f->real, start, 1, &first) != SQLITE_OK || first == NULL) return;
    if (m->xFetch(f->real, probe, 1, &last) == SQLITE_OK && last != NULL) {
        uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
        if (page == 0 || (page & (page - 1)) != 0) page = 4096;
        uintptr_t lo = (uintptr_t)first & ~(page - 1);
        uintptr_t hi = (uintptr_t)first + (uintptr_t)(end - start);
        if ((uintptr_t)last == (uintptr_t)first + (uintptr_t)(probe - start)) { /* one contiguous mapping */
            if (madvise((void *)lo, hi - lo, MADV_POPULATE_READ) == 0) {
                atomic_fetch_add(&dr_prefaulted, (uint64_t)(hi - lo));
            } else if (errno == EINVAL) {
                atomic_store(&dr_populate_unsupported, 1); /* kernel before 5.14: stop trying */
            }
        }
        m->xUnfetch(f->real, probe, last);
    }
    m->xUnfetch(f->real, start, first);
}

static void dr_prefault(dr_file *f) {
    int count = f->run_count;
    f->run_count = 0;
    if (count == 0 || atomic_load(&dr_populate_unsupported)) return;
    const sqlite3_io_methods *m = f->real->pMethods;
    if (m == NULL || m->iVersion < 3 || m->xFetch == NULL || m->xUnfetch == NULL) return;
    /* The mapping covers at most the connection's mmap_size limit (queried with -1, which changes nothing). */
    sqlite3_int64 limit = -1;
    if (m->xFileControl(f->real, SQLITE_FCNTL_MMAP_SIZE, &limit) != SQLITE_OK || limit <= 0) return;
    for (int i = 0; i < count; i++) dr_prefault_run(f, f->runs[i].start, f->runs[i].end, limit);
}

/* Adds [start, end) to the runs written since the last checkpoint. */
static void dr_note_write(dr_file *f, sqlite3_int64 start, sqlite3_int64 end) {
    if (f->run_count > 0) {
        dr_run *last = &f->runs[f->run_count - 1];
        if (start == last->end) {
            last->end = end;
            return;
        }
        if (start >= last->start && end <= last->end) return;
    }
    if (f->run_count == f->run_capacity) {
        if (f->run_capacity >= DR_MAX_RUNS) return;
        int capacity = f->run_capacity ? f->run_capacity * 2 : 64;
        dr_run *runs = sqlite3_realloc64(f->runs, (sqlite3_uint64)capacity * sizeof(dr_run));
        if (runs == NULL) return; /* only a hint */
        f->runs = runs;
        f->run_capacity = capacity;
    }
    f->runs[f->run_count].start = start;
    f->runs[f->run_count].end = end;
    f->run_count++;
}

static int dr_close(sqlite3_file *f) {
    int rc = REAL(f)->pMethods ? REAL(f)->pMethods->xClose(REAL(f)) : SQLITE_OK;
    dr_file *d = (dr_file *)f;
    sqlite3_free(d->runs);
    d->runs = NULL;
    d->run_count = d->run_capacity = 0;
    f->pMethods = NULL;
    return rc;
}
static int dr_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off) {
    return REAL(f)->pMethods->xRead(REAL(f), buf, n, off);
}
static int dr_write(sqlite3_file *f, const void *buf, int n, sqlite3_int64 off) {
    int rc = REAL(f)->pMethods->xWrite(REAL(f), buf, n, off);
    dr_file *d = (dr_file *)f;
    if (rc == SQLITE_OK && d->is_main_db && n > 0) dr_note_write(d, off, off + n);
    return rc;
}
static int dr_truncate(sqlite3_file *f, sqlite3_int64 size) {
    dr_file *d = (dr_file *)f;
    for (int i = 0; i < d->run_count; i++) {
        if (d->runs[i].end > size) d->runs[i].end = size; /* a run emptied this way is skipped */
    }
    return REAL(f)->pMethods->xTruncate(REAL(f), size);
}
static int dr_sync(sqlite3_file *f, int flags) { return REAL(f)->pMethods->xSync(REAL(f), flags); }
static int dr_file_size(sqlite3_file *f, sqlite3_int64 *size) {
    return REAL(f)->pMethods->xFileSize(REAL(f), size);
}
static int dr_lock(sqlite3_file *f, int level) { return REAL(f)->pMethods->xLock(REAL(f), level); }
static int dr_unlock(sqlite3_file *f, int level) { return REAL(f)->pMethods->xUnlock(REAL(f), level); }
static int dr_check_reserved_lock(sqlite3_file *f, int *out) {
    return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}
static int dr_file_control(sqlite3_file *f, int op, void *arg) {
    dr_file *d = (dr_file *)f;
    if (op == SQLITE_FCNTL_VFSNAME) {
        /* Name both layers, as SQLite's own shims do. */
        int rc = REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
        char *inner = rc == SQLITE_OK ? *(char **)arg : NULL;
        *(char **)arg = inner ? sqlite3_mprintf("%s/%z", DARKROOM_SQLITE_VFS_NAME, inner)
                              : sqlite3_mprintf("%s", DARKROOM_SQLITE_VFS_NAME);
        return SQLITE_OK;
    }
    int rc = REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
    if (op == SQLITE_FCNTL_CKPT_DONE && d->is_main_db) dr_prefault(d);
    return rc;
}
static int dr_sector_size(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int dr_device_characteristics(sqlite3_file *f) {
    return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}
static int dr_shm_map(sqlite3_file *f, int region, int size, int extend, void volatile **pp) {
    return REAL(f)->pMethods->xShmMap(REAL(f), region, size, extend, pp);
}
static int dr_shm_lock(sqlite3_file *f, int offset, int n, int flags) {
    return REAL(f)->pMethods->xShmLock(REAL(f), offset, n, flags);
}
static void dr_shm_barrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int dr_shm_unmap(sqlite3_file *f, int delete_flag) {
    return REAL(f)->pMethods->xShmUnmap(REAL(f), delete_flag);
}
static int dr_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **pp) {
    return REAL(f)->pMethods->xFetch(REAL(f), off, n, pp);
}
static int dr_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p) {
    return REAL(f)->pMethods->xUnfetch(REAL(f), off, p);
}

/* Version 3 methods for wrapped files that have them; version 1 and 2 files get tables that stop where theirs
   do, so SQLite never calls a method the wrapped file lacks. */
static const sqlite3_io_methods dr_io_methods_v3 = {
    3, dr_close, dr_read, dr_write, dr_truncate, dr_sync, dr_file_size, dr_lock, dr_unlock,
    dr_check_reserved_lock, dr_file_control, dr_sector_size, dr_device_characteristics,
    dr_shm_map, dr_shm_lock, dr_shm_barrier, dr_shm_unmap, dr_fetch, dr_unfetch,
};
static const sqlite3_io_methods dr_io_methods_v2 = {
    2, dr_close, dr_read, dr_write, dr_truncate, dr_sync, dr_file_size, dr_lock, dr_unlock,
    dr_check_reserved_lock, dr_file_control, dr_sector_size, dr_device_characteristics,
    dr_shm_map, dr_shm_lock, dr_shm_barrier, dr_shm_unmap, NULL, NULL,
};
static const sqlite3_io_methods dr_io_methods_v1 = {
    1, dr_close, dr_read, dr_write, dr_truncate, dr_sync, dr_file_size, dr_lock, dr_unlock,
    dr_check_reserved_lock, dr_file_control, dr_sector_size, dr_device_characteristics,
    NULL, NULL, NULL, NULL, NULL, NULL,
};

static int dr_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out_flags) {
    (void)vfs;
    dr_file *d = (dr_file *)file;
    memset(d, 0, sizeof(dr_file));
    d->real = (sqlite3_file *)((char *)file + DR_FILE_SIZE);
    d->is_main_db = (flags & SQLITE_OPEN_MAIN_DB) != 0;
    int rc = dr_root->xOpen(dr_root, name, d->real, flags, out_flags);
    const sqlite3_io_methods *m = d->real->pMethods;
    if (m == NULL) {
        file->pMethods = NULL; /* nothing to close */
        return rc;
    }
    /* Installed even when the open failed: SQLite then calls xClose, which must reach the wrapped file. */
    file->pMethods = m->iVersion >= 3 ? &dr_io_methods_v3 : m->iVersion == 2 ? &dr_io_methods_v2 : &dr_io_methods_v1;
    return rc;
}

static int dr_delete(sqlite3_vfs *v, const char *n, int sync) { (void)v; return dr_root->xDelete(dr_root, n, sync); }
static int dr_access(sqlite3_vfs *v, const char *n, int flags, int *out) {
    (void)v;
    return dr_root->xAccess(dr_root, n, flags, out);
}
static int dr_full_pathname(sqlite3_vfs *v, const char *n, int size, char *out) {
    (void)v;
    return dr_root->xFullPathname(dr_root, n, size, out);
}
static void *dr_dl_open(sqlite3_vfs *v, const char *n) { (void)v; return dr_root->xDlOpen(dr_root, n); }
static void dr_dl_error(sqlite3_vfs *v, int n, char *out) { (void)v; dr_root->xDlError(dr_root, n, out); }
static void (*dr_dl_sym(sqlite3_vfs *v, void *h, const char *s))(void) {
    (void)v;
    return dr_root->xDlSym(dr_root, h, s);
}
static void dr_dl_close(sqlite3_vfs *v, void *h) { (void)v; dr_root->xDlClose(dr_root, h); }
static int dr_randomness(sqlite3_vfs *v, int n, char *out) { (void)v; return dr_root->xRandomness(dr_root, n, out); }
static int dr_sleep(sqlite3_vfs *v, int us) { (void)v; return dr_root->xSleep(dr_root, us); }
static int dr_current_time(sqlite3_vfs *v, double *out) { (void)v; return dr_root->xCurrentTime(dr_root, out); }
static int dr_get_last_error(sqlite3_vfs *v, int n, char *out) {
    (void)v;
    return dr_root->xGetLastError ? dr_root->xGetLastError(dr_root, n, out) : 0;
}
static int dr_current_time_int64(sqlite3_vfs *v, sqlite3_int64 *out) {
    (void)v;
    return dr_root->xCurrentTimeInt64(dr_root, out);
}
static int dr_set_system_call(sqlite3_vfs *v, const char *n, sqlite3_syscall_ptr p) {
    (void)v;
    return dr_root->xSetSystemCall(dr_root, n, p);
}
static sqlite3_syscall_ptr dr_get_system_call(sqlite3_vfs *v, const char *n) {
    (void)v;
    return dr_root->xGetSystemCall(dr_root, n);
}
static const char *dr_next_system_call(sqlite3_vfs *v, const char *n) {
    (void)v;
    return dr_root->xNextSystemCall(dr_root, n);
}

static void dr_register_once(void) {
    if (sqlite3_initialize() != SQLITE_OK) return;
    dr_root = sqlite3_vfs_find(NULL);
    if (dr_root == NULL) return;
    memset(&dr_vfs, 0, sizeof dr_vfs);
    dr_vfs.iVersion = dr_root->iVersion >= 3 ? 3 : dr_root->iVersion;
    dr_vfs.szOsFile = (int)DR_FILE_SIZE + dr_root->szOsFile;
    dr_vfs.mxPathname = dr_root->mxPathname;
    dr_vfs.zName = DARKROOM_SQLITE_VFS_NAME;
    dr_vfs.xOpen = dr_open;
    dr_vfs.xDelete = dr_delete;
    dr_vfs.xAccess = dr_access;
    dr_vfs.xFullPathname = dr_full_pathname;
    dr_vfs.xDlOpen = dr_root->xDlOpen ? dr_dl_open : NULL;
    dr_vfs.xDlError = dr_root->xDlError ? dr_dl_error : NULL;
    dr_vfs.xDlSym = dr_root->xDlSym ? dr_dl_sym : NULL;
    dr_vfs.xDlClose = dr_root->xDlClose ? dr_dl_close : NULL;
    dr_vfs.xRandomness = dr_randomness;
    dr_vfs.xSleep = dr_sleep;
    dr_vfs.xCurrentTime = dr_current_time;
    dr_vfs.xGetLastError = dr_get_last_error;
    if (dr_vfs.iVersion >= 2) dr_vfs.xCurrentTimeInt64 = dr_root->xCurrentTimeInt64 ? dr_current_time_int64 : NULL;
    if (dr_vfs.iVersion >= 3) {
        dr_vfs.xSetSystemCall = dr_root->xSetSystemCall ? dr_set_system_call : NULL;
        dr_vfs.xGetSystemCall = dr_root->xGetSystemCall ? dr_get_system_call : NULL;
        dr_vfs.xNextSystemCall = dr_root->xNextSystemCall ? dr_next_system_call : NULL;
    }
    dr_register_rc = sqlite3_vfs_register(&dr_vfs, 0);
}

int darkroom_sqlite_register_vfs(void) {
    pthread_once(&dr_once, dr_register_once);
    return dr_register_rc;
}

uint64_t darkroom_sqlite_prefaulted_bytes(void) { return atomic_load(&dr_prefaulted); }
