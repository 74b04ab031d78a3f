import CSQLite

/// `PackedRows` to and from SQLite: a result row packed as it is stored, and packed rows bound
/// to an INSERT.
extension PackedRows {
    /// Appends columns `0..<columns` of `row` as they are stored: integers, blobs and text (a float as text).
    ///
    /// Every column is read first (a column's text stays where SQLite put it while the others are
    /// read), then the row is packed in one place and appended at once: an append per value checks
    /// the buffer's room and ownership again, and a fact row is many small values.
    mutating func append(_ row: Row, columns: Int) {
        withUnsafeTemporaryAllocation(of: StoredValue.self, capacity: columns) { values in
            var size = 0
            for column in 0..<columns {
                let index = Int32(column)
                let value: StoredValue
                switch row.statement.columnType(index) {
                case SQLITE_NULL: value = StoredValue(tag: 0)
                case SQLITE_INTEGER: value = StoredValue(tag: 1, integer: row.statement.int64(index))
                case let type:
                    value = row.statement.withText(index) { StoredValue(tag: type == SQLITE_BLOB ? 3 : 2, text: $0) }
                }
                size += value.packedSize
                values.initializeElement(at: column, to: value)
            }
            withUnsafeTemporaryAllocation(byteCount: size, alignment: 8) { packed in
                var offset = 0
                for column in 0..<columns { offset = values[column].pack(into: packed, at: offset) }
                appendPacked(UnsafeRawBufferPointer(packed))
            }
        }
        endRow()
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

/// A column of a stepping statement's row as `PackedRows` packs it; its text still SQLite's.
private struct StoredValue {
    var tag: UInt8
    var integer: Int64 = 0
    var text = UnsafeBufferPointer<UInt8>(start: nil, count: 0)

    init(tag: UInt8, integer: Int64 = 0) {
        self.tag = tag
        self.integer = integer
    }

    init(tag: UInt8, text: UnsafeBufferPointer<UInt8>) {
        self.tag = tag
        self.text = text
    }

    /// Its bytes packed: the tag, then 8 bytes of integer or a 4-byte length and the bytes.
    var packedSize: Int {
        switch tag {
        case 0: 1
        case 1: 9
        default: 5 + text.count
        }
    }

    /// Packs it at `offset` of `buffer`; returns the offset just past it.
    func pack(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
        buffer[offset] = tag
        switch tag {
        case 0:
            return offset + 1
        case 1:
            buffer.storeBytes(of: integer.littleEndian, toByteOffset: offset + 1, as: Int64.self)
            return offset + 9
        default:
            buffer.storeBytes(of: UInt32(text.count).littleEndian, toByteOffset: offset + 1, as: UInt32.self)
            UnsafeMutableRawBufferPointer(rebasing: buffer[(offset + 5)...]).copyMemory(from: UnsafeRawBufferPointer(text))
            return offset + 5 + text.count
        }
    }
}
