#include <sqlite3.h>

/// SQLite keeps memory statistics behind one process-wide mutex, taken on every allocation:
/// with several connections on several threads (readers beside the writer) they contend for
/// it. iaprecon never reads the statistics. sqlite3_config is variadic, so Swift cannot call it;
/// this must run before the first connection opens (it returns SQLITE_MISUSE after).
static inline int iaprecon_sqlite3_disable_memstatus(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
