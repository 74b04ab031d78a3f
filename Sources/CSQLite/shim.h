#include <sqlite3.h>

/// SQLite keeps memory statistics behind one process-wide mutex, taken on every allocation:
/// with several connections on several threads (readers beside the writer) they contend for
/// it. iaprecon never reads the statistics. sqlite3_config is variadic, so Swift cannot call it;
/// this must run before the first connection opens (it returns SQLITE_MISUSE after).
static inline int iaprecon_sqlite3_disable_memstatus(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

#if __has_include(<malloc.h>)
#include <malloc.h>
#endif

/// Hands the heap's freed pages back to the system. glibc keeps what a finished stage freed for
/// reuse, so a later stage would start from the earlier one's peak (Swift cannot see malloc.h).
static inline void iaprecon_release_freed_heap(void) {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

/// Makes every allocation of at least `bytes` get pages of its own, unmapped when it is freed. glibc
/// otherwise raises this threshold each time such a block is freed (up to 32 MiB), and from then on
/// a stage's large buffers stay in the heap after they are freed.
static inline void iaprecon_map_allocations_from(int bytes) {
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, bytes);
#endif
}

/// The heap's bytes in use and free-but-kept (glibc's mallinfo2), for `IAPRECON_TRACE`; -1 elsewhere.
static inline long iaprecon_heap_bytes(int freeKept) {
#if defined(__GLIBC__)
    struct mallinfo2 info = mallinfo2();
    return freeKept ? (long)info.fordblks : (long)(info.uordblks + info.hblkhd);
#else
    return -1;
#endif
}
