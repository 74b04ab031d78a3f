import Foundation

/// The columns a store hands a reader in each row, in order: what the reader names a column by.
/// A backend says how it selects each (SQLite's: `SelectedColumn`).
protocol StoredColumn: CaseIterable, RawRepresentable<Int> {}

/// One row as a store hands it to a reader, valid only while the reader has it (a callback's
/// row, a cursor's current row). Text is read in place, as bytes, where the reader needs no
/// `String` (a CSV cell, a fingerprint, a comparison): a report of millions of rows makes few strings.
protocol StoredRow {
    func isNull(_ index: Int) -> Bool
    func int(_ index: Int) -> Int64
    func string(_ index: Int) -> String
    func value(_ index: Int) -> SQLValue
    /// Column `index` as UTF-8 bytes (a blob's bytes; empty for NULL), valid only inside `body`.
    func withText<T>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T
    /// Column `index`'s text against `other`'s column `otherIndex`, byte by byte: negative, zero or positive.
    func compareText(_ index: Int, with other: Self, _ otherIndex: Int) -> Int
}

extension StoredRow {
    func optionalInt(_ index: Int) -> Int64? { isNull(index) ? nil : int(index) }
    func optionalString(_ index: Int) -> String? { isNull(index) ? nil : string(index) }

    /// The fingerprint of column `index`'s text, as `RowFingerprint(string(index))` but without
    /// making the `String`; nil when it is NULL.
    func fingerprint(_ index: Int) -> RowFingerprint? {
        isNull(index) ? nil : withText(index) { RowFingerprint($0) }
    }

    /// Whether column `index`'s text is `text`, byte for byte, without making a `String` of it.
    func text(_ index: Int, equals text: String) -> Bool {
        withText(index) { bytes in
            var text = text
            return text.withUTF8 { utf8 in
                guard utf8.count == bytes.count else { return false }
                guard let a = utf8.baseAddress, let b = bytes.baseAddress else { return true }
                return memcmp(a, b, utf8.count) == 0
            }
        }
    }

    func isNull(_ column: some StoredColumn) -> Bool { isNull(column.rawValue) }
    func int(_ column: some StoredColumn) -> Int64 { int(column.rawValue) }
    func optionalInt(_ column: some StoredColumn) -> Int64? { optionalInt(column.rawValue) }
    func string(_ column: some StoredColumn) -> String { string(column.rawValue) }
    func optionalString(_ column: some StoredColumn) -> String? { optionalString(column.rawValue) }
    func fingerprint(_ column: some StoredColumn) -> RowFingerprint? { fingerprint(column.rawValue) }
    func text(_ column: some StoredColumn, equals text: String) -> Bool { self.text(column.rawValue, equals: text) }
    func withText<T>(_ column: some StoredColumn, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        try withText(column.rawValue, body)
    }
}

/// Rows a store hands a reader one at a time, in its order: readers that merge two orders of the
/// same keys step two cursors in turn.
protocol StoredCursor<Row>: AnyObject {
    associatedtype Row: StoredRow
    /// Moves to the next row; false after the last.
    func step() throws -> Bool
    /// The current row, after a `step()` that returned true.
    var row: Row { get }
    /// Lets the cursor's read go; a `step()` after it starts again from the first row.
    func reset()
}
