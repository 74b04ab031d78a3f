import CSQLite

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

    /// Appends columns `0..<columns` of `row` as they are stored: integers, blobs and text (a float as text).
    mutating func append(_ row: Row, columns: Int) {
        for column in 0..<Int32(columns) {
            switch row.statement.columnType(column) {
            case SQLITE_NULL: bytes.append(0)
            case SQLITE_INTEGER: appendInteger(row.statement.int64(column))
            case SQLITE_BLOB: row.statement.withText(column) { appendBytes($0, tag: 3) }
            default: row.statement.withText(column) { appendText($0) }
            }
        }
        count += 1
    }

    private mutating func appendInteger(_ integer: Int64) {
        bytes.append(1)
        withUnsafeBytes(of: integer.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private mutating func appendText<Text: Collection<UInt8>>(_ text: Text) {
        appendBytes(text, tag: 2)
    }

    private mutating func appendBytes<Bytes: Collection<UInt8>>(_ value: Bytes, tag: UInt8) {
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

    /// Inserts every row with `statement`: `prefix` binds its first parameters, each row's packed
    /// values the rest. With `groupsOf`, a statement that takes the prefix once and then that many
    /// rows' values writes the rows in groups, and `statement` the rows left over.
    func insert(with statement: Statement, prefix: [SQLValue] = [], groupsOf group: (statement: Statement, rows: Int)? = nil) throws {
        let perRow = Int(statement.parameterCount) - prefix.count
        statement.reset()
        group?.statement.reset()
        // Every execution binds every parameter, and `execute()` resets after each step; the final
        // `reset()` clears the bindings, so none points into `bytes` once they are gone.
        defer {
            statement.reset()
            group?.statement.reset()
        }
        try bytes.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            var offsetInBuffer = 0
            var row = 0
            while row < count {
                let (target, rows) = if let group, count - row >= group.rows { (group.statement, group.rows) } else { (statement, 1) }
                for (index, value) in prefix.enumerated() { try target.bind(value, at: Int32(index) + 1) }
                var index = Int32(prefix.count) + 1
                for _ in 0..<(rows * perRow) {
                    let tag = buffer[offsetInBuffer]
                    offsetInBuffer += 1
                    switch tag {
                    case 1:
                        let integer = Int64(littleEndian: buffer.loadUnaligned(fromByteOffset: offsetInBuffer, as: Int64.self))
                        offsetInBuffer += 8
                        try target.bind(.integer(integer), at: index)
                    case 2, 3:
                        let length = Int(UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: offsetInBuffer, as: UInt32.self)))
                        offsetInBuffer += 4
                        let value = UnsafeRawBufferPointer(rebasing: buffer[offsetInBuffer..<(offsetInBuffer + length)])
                        if tag == 2 {
                            try target.bindBorrowedText(value, at: index)
                        } else {
                            try target.bindBorrowedBlob(value, at: index)
                        }
                        offsetInBuffer += length
                    default:
                        try target.bind(.null, at: index)
                    }
                    index += 1
                }
                try target.execute()
                row += rows
            }
        }
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
