import CSQLite
import Foundation


/// Set once, before the first connection opens: no memory statistics (their global mutex would
/// serialise the allocations of the reader threads and the writer).
private let sqliteConfigured: Int32 = iaprecon_sqlite3_disable_memstatus()

/// One SQLite connection, used from one thread at a time.
///
/// The store has one writer connection (CONTRACT: one run at a time); reads
/// for `history` open their own. WAL with `synchronous=NORMAL`: committed
/// transactions survive a process crash, and readers never block the writer.
/// A new store's first build turns the syncs off until it is whole (`FirstBuild`).
public final class Database {
    let handle: OpaquePointer
    private var cache: [String: Statement] = [:]
    public let path: String

    /// Opens (creating if needed) the database at `path`.
    /// - Throws: `SQLiteError` when the file cannot be opened or is not a database.
    public init(path: String, readOnly: Bool = false) throws(SQLiteError) {
        _ = sqliteConfigured
        var pointer: OpaquePointer?
        let flags = readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        if !readOnly { Self.createOwnerOnly(path) }
        let code = sqlite3_open_v2(path, &pointer, flags | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let pointer else {
            let message = pointer.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            if let pointer { sqlite3_close_v2(pointer) }
            throw SQLiteError(code: code, message: message, sql: nil)
        }
        handle = pointer
        self.path = path
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, 5_000)
        do throws(SQLiteError) {
            let added = iaprecon_sqlite3_add_unhex(handle)
            if added != SQLITE_OK { throw SQLiteError(code: added, message: "cannot add unhex()", sql: nil) }
            // Reading the schema fails at once on a file that is not a database.
            try execute("SELECT count(*) FROM sqlite_master")
            try execute("PRAGMA foreign_keys = ON")
            // Every writer, not only the one that turned WAL on (`enableWAL`): SQLite's default for a connection
            // waits for the disk at each of its commits, which a store's later writers (the report's segments, a
            // stage's second connection) would otherwise pay per file they save.
            if !readOnly { try execute("PRAGMA synchronous = NORMAL") }
            try setCacheSize(kibibytes: Self.cacheKiB)
        } catch {
            cache.removeAll()
            sqlite3_close_v2(handle)
            throw error
        }
    }

    /// Creates a missing store file readable and writable by its owner only (0600), whatever
    /// the umask: it holds user ids and purchases. SQLite gives the `-wal` and `-shm` files it
    /// creates beside it the same permissions.
    private static func createOwnerOnly(_ path: String) {
        guard !path.isEmpty, path != ":memory:", !path.hasPrefix("file:") else { return }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            fchmod(descriptor, 0o600)
            close(descriptor)
        }
        // An existing file is left as its owner set it; a failure here is SQLite's to report.
    }

    deinit {
        cache.removeAll()
        sqlite3_close_v2(handle)
    }

    /// A connection's page cache, in KiB, unless a caller sets another (`setCacheSize`). It is also
    /// what the connection's sorter holds before it writes a sorted run to a temporary file, and
    /// SQLite merges up to 16 runs at once: past that, every row is written and read once more.
    /// Smaller runs made a reader's ORDER BY over a large store's transactions take that second pass.
    static let cacheKiB = 16_384

    /// Sets this connection's page cache: the most it holds of the store's pages, clean or dirty.
    func setCacheSize(kibibytes: Int) throws(SQLiteError) {
        try execute("PRAGMA cache_size = -\(kibibytes)")
    }

    /// Keeps the connection's temporary storage in memory, or (false) in files as SQLite does by
    /// default. Besides temp tables, that storage holds each statement's journal: the pages a
    /// statement changes inside a larger transaction, kept until it ends so that it alone can be
    /// undone. A statement that adds rows to indexed tables changes pages all over them, and past
    /// 64 KiB its journal goes to a file: written, never read, and deleted. In memory, it stays as
    /// large as one statement's pages. Temp tables are dropped by the change, so it is made
    /// outside a transaction, where the connection holds none it still needs.
    func keepTemporaryStorageInMemory(_ inMemory: Bool) throws(SQLiteError) {
        try execute("PRAGMA temp_store = \(inMemory ? "MEMORY" : "DEFAULT")")
    }

    /// Whether the connection checks foreign keys (and so cascades deletes): on, but while ingest
    /// writes a file that replaces none (`FileWriter`).
    private(set) var enforcesForeignKeys = true

    /// Turns foreign-key checks on or off. A change makes SQLite prepare every statement again, so
    /// it is only made when it is one.
    func enforceForeignKeys(_ enforced: Bool) throws {
        guard enforced != enforcesForeignKeys else { return }
        try execute("PRAGMA foreign_keys = \(enforced ? "ON" : "OFF")")
        // Inside a transaction SQLite leaves the setting as it was: what holds is read back.
        enforcesForeignKeys = try scalar("PRAGMA foreign_keys").integerValue != 0
    }

    /// Write-ahead logging with `synchronous=NORMAL`: committed transactions survive a process
    /// crash, readers never block the writer. Changes the file, so callers check it is theirs first.
    public func enableWAL() throws(SQLiteError) {
        try execute("PRAGMA journal_mode = WAL")
        try execute("PRAGMA synchronous = NORMAL")
    }

    /// The pages this connection read from the file (its page cache's misses) since the last reset.
    func pagesRead(reset: Bool) -> Int64 {
        var current: Int32 = 0
        var highest: Int32 = 0
        sqlite3_db_status(handle, SQLITE_DBSTATUS_CACHE_MISS, &current, &highest, reset ? 1 : 0)
        return Int64(current)
    }

    var lastErrorMessage: String { String(cString: sqlite3_errmsg(handle)) }

    /// Runs one or more SQL statements that return no rows.
    public func execute(_ sql: String) throws(SQLiteError) {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if code != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? lastErrorMessage
            sqlite3_free(errorMessage)
            throw SQLiteError(code: sqlite3_extended_errcode(handle), message: message, sql: sql, systemErrno: sqlite3_system_errno(handle))
        }
    }

    /// A prepared statement kept for the life of the connection, keyed by its SQL.
    public func cached(_ sql: String) throws(SQLiteError) -> Statement {
        if let statement = cache[sql] { return statement }
        let statement = try Statement(database: self, sql: sql, persistent: true)
        cache[sql] = statement
        return statement
    }

    /// Runs `body` in a `BEGIN IMMEDIATE` transaction: commits when it returns,
    /// rolls back and rethrows the first error when it throws.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            if sqlite3_get_autocommit(handle) == 0 { try? execute("ROLLBACK") }
            throw error
        }
    }

    /// Runs `body` in a deferred transaction that only reads: every read sees one snapshot,
    /// and no write lock is held, so another connection may write meanwhile.
    public func readTransaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN DEFERRED")
        defer { if sqlite3_get_autocommit(handle) == 0 { try? execute("COMMIT") } }
        return try body()
    }

    /// Runs `sql` with `arguments` and calls `row` for each result row.
    public func forEach(_ sql: String, _ arguments: [SQLValue] = [], _ row: (Row) throws -> Void) throws {
        let statement = try cached(sql)
        try statement.bind(arguments)
        defer { statement.reset() }
        while try statement.step() { try row(Row(statement: statement)) }
    }

    /// Runs a statement that returns no rows.
    public func run(_ sql: String, _ arguments: [SQLValue] = []) throws(SQLiteError) {
        let statement = try cached(sql)
        try statement.bind(arguments)
        defer { statement.reset() }
        _ = try statement.step()
    }

    /// Rows the last INSERT, UPDATE or DELETE changed.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// The names of the schema's indexes, SQLite's own included.
    func indexNames() throws -> Set<String> {
        var names = Set<String>()
        try forEach("SELECT name FROM sqlite_master WHERE type = 'index'") { names.insert($0.string(0)) }
        return names
    }

    /// The first column of the first row, or nil.
    public func scalar(_ sql: String, _ arguments: [SQLValue] = []) throws -> SQLValue? {
        var result: SQLValue?
        try forEach(sql, arguments) { row in if result == nil { result = row.value(0) } }
        return result
    }
}

@available(*, unavailable)
extension Database: Sendable {}

/// A prepared statement; reset and re-bound for each use.
public final class Statement {
    private let pointer: OpaquePointer
    private unowned let database: Database
    let sql: String

    init(database: Database, sql: String, persistent: Bool) throws(SQLiteError) {
        var statement: OpaquePointer?
        let flags: UInt32 = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        let code = sqlite3_prepare_v3(database.handle, sql, -1, flags, &statement, nil)
        guard code == SQLITE_OK, let statement else {
            throw SQLiteError(code: code, message: database.lastErrorMessage, sql: sql)
        }
        self.pointer = statement
        self.database = database
        self.sql = sql
    }

    deinit { sqlite3_finalize(pointer) }

    /// Binds `values` to parameters 1...n.
    public func bind(_ values: [SQLValue]) throws(SQLiteError) {
        sqlite3_reset(pointer)
        for (offset, value) in values.enumerated() { try bind(value, at: Int32(offset + 1)) }
    }

    /// Steps once: true when a row is ready, false when done.
    public func step() throws(SQLiteError) -> Bool {
        let code = sqlite3_step(pointer)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = SQLiteError(code: sqlite3_extended_errcode(database.handle), message: database.lastErrorMessage, sql: sql,
                                    systemErrno: sqlite3_system_errno(database.handle))
            sqlite3_reset(pointer)
            throw error
        }
    }

    /// Binds one value to parameter `index` (1-based), after `reset()`.
    public func bind(_ value: SQLValue, at index: Int32) throws(SQLiteError) {
        let code: Int32
        switch value {
        case .null: code = sqlite3_bind_null(pointer, index)
        case .integer(let integer): code = sqlite3_bind_int64(pointer, index, integer)
        case .text(var text):
            // By its length, not up to a NUL: text holding one is stored whole.
            code = text.withUTF8 { utf8 in bindText(UnsafeRawBufferPointer(utf8), index) }
        case .blob(let bytes):
            code = bytes.withUnsafeBytes { bindBlob($0, index) }
        }
        if code != SQLITE_OK { throw SQLiteError(code: code, message: database.lastErrorMessage, sql: sql) }
    }

    private func bindText(_ text: UnsafeRawBufferPointer, _ index: Int32) -> Int32 {
        // SQLITE_TRANSIENT: SQLite copies the text before the call returns. (Made here, not a
        // global: a global's lazy initialiser would be checked on every call.)
        let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
        return withUnsafeBytes(of: 0 as UInt8) { empty in
            // An empty buffer may have no address, and a null pointer would bind NULL.
            let start = text.isEmpty ? empty.baseAddress : text.baseAddress
            return sqlite3_bind_text(pointer, index, start?.assumingMemoryBound(to: CChar.self), Int32(text.count), transient)
        }
    }

    private func bindBlob(_ bytes: UnsafeRawBufferPointer, _ index: Int32) -> Int32 {
        let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
        return withUnsafeBytes(of: 0 as UInt8) { empty in
            // As for text: an empty blob is a zero-length blob, never NULL.
            sqlite3_bind_blob(pointer, index, bytes.isEmpty ? empty.baseAddress : bytes.baseAddress, Int32(bytes.count), transient)
        }
    }

    /// Binds `bytes` as a blob without copying them (SQLITE_STATIC), on the terms of `bindBorrowedText`.
    func bindBorrowedBlob(_ bytes: UnsafeRawBufferPointer, at index: Int32) throws(SQLiteError) {
        let code = bytes.isEmpty ? bindBlob(bytes, index) : sqlite3_bind_blob(pointer, index, bytes.baseAddress, Int32(bytes.count), nil)
        if code != SQLITE_OK { throw SQLiteError(code: code, message: database.lastErrorMessage, sql: sql) }
    }

    /// Binds UTF-8 `text` (SQLite copies it) without making a Swift `String` of it.
    func bindText(_ text: UnsafeRawBufferPointer, at index: Int32) throws(SQLiteError) {
        let code = bindText(text, index)
        if code != SQLITE_OK { throw SQLiteError(code: code, message: database.lastErrorMessage, sql: sql) }
    }

    /// Binds UTF-8 `text` without copying it (SQLITE_STATIC). The caller keeps the bytes alive and
    /// unchanged until the statement has been stepped and every parameter bound again or cleared
    /// (`reset()`): what a loop over rows in one buffer does.
    func bindBorrowedText(_ text: UnsafeRawBufferPointer, at index: Int32) throws(SQLiteError) {
        let code = text.isEmpty
            ? bindText(text, index)
            : sqlite3_bind_text(pointer, index, text.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(text.count), nil)
        if code != SQLITE_OK { throw SQLiteError(code: code, message: database.lastErrorMessage, sql: sql) }
    }

    var parameterCount: Int32 { sqlite3_bind_parameter_count(pointer) }

    /// Runs a statement whose parameters are bound; resets it.
    public func execute() throws(SQLiteError) {
        defer { sqlite3_reset(pointer) }
        _ = try step()
    }

    /// Inserts one row: bind, step, reset.
    public func insert(_ values: [SQLValue]) throws(SQLiteError) {
        try bind(values)
        try execute()
    }

    /// The current row, after `step()` returned true: for reading two statements side by side.
    var row: Row { Row(statement: self) }

    public func reset() {
        sqlite3_reset(pointer)
        sqlite3_clear_bindings(pointer)
    }

    func columnType(_ index: Int32) -> Int32 { sqlite3_column_type(pointer, index) }
    func int64(_ index: Int32) -> Int64 { sqlite3_column_int64(pointer, index) }

    /// Column `index` as UTF-8 bytes, valid only inside `body`.
    func withText<T>(_ index: Int32, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        guard let text = sqlite3_column_text(pointer, index) else { return try body(UnsafeBufferPointer(start: nil, count: 0)) }
        return try body(UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(pointer, index))))
    }
    /// By the length SQLite already knows, so no scan for a NUL.
    fileprivate func text(_ index: Int32) -> String {
        withText(index) { String(decoding: $0, as: UTF8.self) }
    }
}

@available(*, unavailable)
extension Statement: Sendable {}

extension Statement: StoredCursor {}

/// The current row of a stepping statement; valid only inside the row callback.
public struct Row: StoredRow {
    let statement: Statement

    public func isNull(_ index: Int) -> Bool { statement.columnType(Int32(index)) == SQLITE_NULL }
    public func int(_ index: Int) -> Int64 { statement.int64(Int32(index)) }
    public func string(_ index: Int) -> String { statement.text(Int32(index)) }

    func withText<T>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        try statement.withText(Int32(index), body)
    }

    /// Byte by byte as SQLite's BINARY collation orders text.
    func compareText(_ index: Int, with other: Row, _ otherIndex: Int) -> Int {
        statement.withText(Int32(index)) { mine in other.statement.withText(Int32(otherIndex)) { theirs in BinaryOrder.compare(mine, theirs) } }
    }

    public func value(_ index: Int) -> SQLValue {
        switch statement.columnType(Int32(index)) {
        case SQLITE_NULL: .null
        case SQLITE_INTEGER: .integer(int(index))
        case SQLITE_BLOB: .blob(statement.withText(Int32(index)) { Array($0) })
        default: .text(string(index))
        }
    }
}
