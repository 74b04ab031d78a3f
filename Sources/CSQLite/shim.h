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

/// Makes the heap grow, and keep when it shrinks, `bytes` beyond what an allocation needs. glibc's
/// default, 128 KiB, hands pages back and asks for them again as a stage's many mid-sized blocks come
/// and go, and each page asked for again costs a fault and its zeroing.
static inline void iaprecon_pad_heap_by(int bytes) {
#if defined(__GLIBC__)
    mallopt(M_TOP_PAD, bytes);
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

static inline int iaprecon_hex_digit(unsigned char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/// SQL `unhex(X)` as SQLite 3.41 defines it (one argument): the bytes the hexadecimal digits of
/// X spell, as a blob; NULL for NULL, an odd number of digits or any other character.
static void iaprecon_unhex(sqlite3_context *context, int count, sqlite3_value **values) {
    (void)count;
    if (sqlite3_value_type(values[0]) == SQLITE_NULL) return;
    const unsigned char *text = sqlite3_value_text(values[0]);
    int length = sqlite3_value_bytes(values[0]);
    if (text == 0 || length % 2 != 0) { sqlite3_result_null(context); return; }
    unsigned char *bytes = sqlite3_malloc(length / 2 + 1);
    if (bytes == 0) { sqlite3_result_error_nomem(context); return; }
    for (int index = 0; index < length / 2; index++) {
        int high = iaprecon_hex_digit(text[2 * index]), low = iaprecon_hex_digit(text[2 * index + 1]);
        if (high < 0 || low < 0) { sqlite3_free(bytes); sqlite3_result_null(context); return; }
        bytes[index] = (unsigned char)(high << 4 | low);
    }
    sqlite3_result_blob(context, bytes, length / 2, sqlite3_free);
}

/// Gives a connection `unhex` where its SQLite is older than 3.41, which has it built in: a
/// migration's frozen text turns the hex a store kept into bytes with it.
static inline int iaprecon_sqlite3_add_unhex(sqlite3 *database) {
    if (sqlite3_libversion_number() >= 3041000) return SQLITE_OK;
    return sqlite3_create_function_v2(database, "unhex", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, 0,
                                      iaprecon_unhex, 0, 0, 0);
}
