import Foundation

/// Rows for one table, packed in one byte buffer: how a reader connection's thread hands rows to
/// the writer without a Swift `String` per value. Each value is a tag byte (0 null, 1 integer,
/// 2 text, 3 blob) then 8 bytes of integer or a 4-byte length and the text's UTF-8 bytes (or the blob's).
struct PackedRows: Sendable {
    /// Which of its job's INSERT statements the rows are for.
    let table: Int
    private(set) var bytes: [UInt8] = []
    private(set) var count = 0

    init(table: Int) { self.table = table }

    /// Rows packed elsewhere: `count` rows in `bytes`.
    init(table: Int, bytes: [UInt8], count: Int) {
        self.table = table
        self.bytes = bytes
        self.count = count
    }

    /// A row of `values`, packed in one append: each append checks the buffer's room and
    /// ownership again, and a row is many small values.
    mutating func append(_ values: [SQLValue]) {
        appendPacked(values, size: values.reduce(0) { $0 + Self.packedSize($1) })
        endRow()
    }

    /// One value of the row being built; `endRow()` closes it.
    mutating func appendValue(_ value: SQLValue) {
        appendPacked(CollectionOfOne(value), size: Self.packedSize(value))
    }

    /// Values packed elsewhere, appended as they are (`endRow()` closes the row).
    mutating func appendPacked(_ packed: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: packed)
    }

    mutating func endRow() {
        count += 1
    }

    /// `values`, `size` bytes packed, packed in a scratch buffer and appended in one copy.
    private mutating func appendPacked(_ values: some Sequence<SQLValue>, size: Int) {
        withUnsafeTemporaryAllocation(byteCount: size, alignment: 1) { row in
            var offset = 0
            for value in values { Self.pack(value, into: row, at: &offset) }
            bytes.append(contentsOf: UnsafeRawBufferPointer(row))
        }
    }

    /// The bytes `value` takes packed: its tag, then 8 bytes of integer or a 4-byte length and its bytes.
    private static func packedSize(_ value: SQLValue) -> Int {
        switch value {
        case .null: 1
        case .integer: 9
        case .text(let text): 5 + text.utf8.count
        case .blob(let blob): 5 + blob.count
        }
    }

    /// Packs `value` into `row` at `offset` (`packedSize` bytes), and moves `offset` past it.
    private static func pack(_ value: SQLValue, into row: UnsafeMutableRawBufferPointer, at offset: inout Int) {
        func header<Value: FixedWidthInteger>(_ tag: UInt8, _ value: Value) {
            row[offset] = tag
            row.storeBytes(of: value, toByteOffset: offset + 1, as: Value.self)
            offset += 1 + MemoryLayout<Value>.size
        }
        func content(_ bytes: UnsafeRawBufferPointer) {
            UnsafeMutableRawBufferPointer(rebasing: row[offset...]).copyMemory(from: bytes)
            offset += bytes.count
        }
        switch value {
        case .null:
            row[offset] = 0
            offset += 1
        case .integer(let integer): header(1, integer.littleEndian)
        case .text(var text):
            text.withUTF8 { utf8 in
                header(2, UInt32(utf8.count).littleEndian)
                content(UnsafeRawBufferPointer(utf8))
            }
        case .blob(let blob):
            header(3, UInt32(blob.count).littleEndian)
            blob.withUnsafeBytes { content($0) }
        }
    }

    /// Calls `body` with each row, as rows of `columns` values, in order.
    func forEachRow(columns: Int, _ body: (PackedRow) throws -> Void) rethrows {
        try bytes.withUnsafeBufferPointer { buffer in
            var offset = 0
            for _ in 0..<count {
                let start = offset
                for _ in 0..<columns { offset = PackedRow.end(ofValueAt: offset, in: buffer) }
                try body(PackedRow(bytes: UnsafeBufferPointer(rebasing: buffer[start..<offset])))
            }
        }
    }

    /// Makes room for `bytes` bytes of rows in all.
    mutating func reserveCapacity(_ bytes: Int) {
        self.bytes.reserveCapacity(bytes)
    }

    /// Appends every row of `other` (of the same columns) as it is packed.
    mutating func append(contentsOf other: PackedRows) {
        bytes.append(contentsOf: other.bytes)
        count += other.count
    }

    /// Appends `row` (of another batch of the same columns) as it is packed.
    mutating func append(_ row: PackedRow) {
        bytes.append(contentsOf: row.bytes)
        count += 1
    }
}

/// One row of a `PackedRows` batch, borrowed while `forEachRow` runs.
struct PackedRow {
    /// The row's values, packed.
    let bytes: UnsafeBufferPointer<UInt8>

    /// A value of the row.
    enum Value {
        case null
        case integer(Int64)
        /// Text or blob bytes.
        case bytes(UnsafeBufferPointer<UInt8>)
    }

    /// Column `index` as it is packed, its tag first (found by walking the values before it).
    func packed(_ index: Int) -> UnsafeBufferPointer<UInt8> {
        var offset = 0
        for _ in 0..<index { offset = Self.end(ofValueAt: offset, in: bytes) }
        return UnsafeBufferPointer(rebasing: bytes[offset..<Self.end(ofValueAt: offset, in: bytes)])
    }

    /// The value of column `index`.
    func value(_ index: Int) -> Value {
        let value = packed(index)
        switch value[0] {
        case 1: return .integer(Int64(littleEndian: UnsafeRawBufferPointer(value).loadUnaligned(fromByteOffset: 1, as: Int64.self)))
        case 2, 3: return .bytes(UnsafeBufferPointer(rebasing: value[5...]))
        default: return .null
        }
    }

    /// The offset just past the value packed at `offset`.
    static func end(ofValueAt offset: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Int {
        switch bytes[offset] {
        case 1: return offset + 9
        case 2, 3:
            let length = Int(UInt32(littleEndian: UnsafeRawBufferPointer(bytes).loadUnaligned(fromByteOffset: offset + 1, as: UInt32.self)))
            return offset + 5 + length
        default: return offset + 1
        }
    }
}

/// One row of a `PackedRows` batch whose values' starts were found once (`starts`, the row's
/// from `first` on): read by column as a store's row, without walking the values before it.
struct PackedFields: StoredRow {
    let bytes: UnsafeBufferPointer<UInt8>
    let starts: UnsafeBufferPointer<Int>
    let first: Int

    private func start(_ index: Int) -> Int { starts[first + index] }

    func isNull(_ index: Int) -> Bool { bytes[start(index)] == 0 }

    /// An integer; text as SQLite reads it for a number (0 when it is none); 0 for NULL.
    func int(_ index: Int) -> Int64 {
        let start = start(index)
        switch bytes[start] {
        case 1: return Int64(littleEndian: UnsafeRawBufferPointer(bytes).loadUnaligned(fromByteOffset: start + 1, as: Int64.self))
        case 2: return withText(index) { Int64(String(decoding: $0, as: UTF8.self)) } ?? 0
        default: return 0
        }
    }

    func string(_ index: Int) -> String {
        withText(index) { String(decoding: $0, as: UTF8.self) }
    }

    func value(_ index: Int) -> SQLValue {
        switch bytes[start(index)] {
        case 0: .null
        case 1: .integer(int(index))
        case 3: .blob(withText(index) { Array($0) })
        default: .text(string(index))
        }
    }

    /// Text or blob bytes; an integer's decimal digits, as SQLite gives an integer as text; empty for NULL.
    func withText<T>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        let start = start(index)
        switch bytes[start] {
        case 1:
            var digits = String(int(index))
            return try digits.withUTF8(body)
        case 2, 3:
            let length = Int(UInt32(littleEndian: UnsafeRawBufferPointer(bytes).loadUnaligned(fromByteOffset: start + 1, as: UInt32.self)))
            return try body(UnsafeBufferPointer(rebasing: bytes[(start + 5)..<(start + 5 + length)]))
        default:
            return try body(UnsafeBufferPointer(start: nil, count: 0))
        }
    }

    /// Byte by byte as SQLite's BINARY collation orders text.
    func compareText(_ index: Int, with other: PackedFields, _ otherIndex: Int) -> Int {
        withText(index) { mine in other.withText(otherIndex) { theirs in BinaryOrder.compare(mine, theirs) } }
    }
}
