/// Rows for one table, packed in one byte buffer: how a reader connection's thread hands rows to
/// the writer without a Swift `String` per value. Each value is a tag byte (0 null, 1 integer,
/// 2 text, 3 blob) then 8 bytes of integer or a 4-byte length and the text's UTF-8 bytes (or the blob's).
struct PackedRows: Sendable {
    /// Which of its job's INSERT statements the rows are for.
    let table: Int
    private(set) var bytes: [UInt8] = []
    private(set) var count = 0

    init(table: Int) { self.table = table }

    mutating func append(_ values: [SQLValue]) {
        for value in values { appendValue(value) }
        endRow()
    }

    /// One value of the row being built; `endRow()` closes it.
    mutating func appendValue(_ value: SQLValue) {
        switch value {
        case .null: bytes.append(0)
        case .integer(let integer): appendInteger(integer)
        case .text(let text): appendText(text.utf8)
        case .blob(let bytes): appendBytes(bytes, tag: 3)
        }
    }

    mutating func endRow() {
        count += 1
    }

    mutating func appendInteger(_ integer: Int64) {
        bytes.append(1)
        withUnsafeBytes(of: integer.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func appendText<Text: Collection<UInt8>>(_ text: Text) {
        appendBytes(text, tag: 2)
    }

    mutating func appendBytes<Bytes: Collection<UInt8>>(_ value: Bytes, tag: UInt8) {
        bytes.append(tag)
        withUnsafeBytes(of: UInt32(value.count).littleEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: value)
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
