#ifndef DARKROOM_SQLITE_H
#define DARKROOM_SQLITE_H

#include <stdint.h>

/* The name of the VFS registered by darkroom_sqlite_register_vfs. */
#define DARKROOM_SQLITE_VFS_NAME "darkroom-prefault"

/* Registers (once per process; later calls return the first result) a VFS that wraps the default one and changes
   one thing: when a checkpoint has copied pages into a main database file, the pages it wrote are entered into
   the connection's memory map (madvise MADV_POPULATE_READ) on the checkpointing thread, so the first read of
   each does not take a page fault. Every other call is passed through unchanged. Returns an SQLite result code. */
int darkroom_sqlite_register_vfs(void);

/* Bytes entered into memory maps by the VFS since the process started (for tests and measurements). */
uint64_t darkroom_sqlite_prefaulted_bytes(void);

#endif
