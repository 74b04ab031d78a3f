import CSQLite

/// `PackedRows` to and from SQLite: a result row packed as it is stored, and packed rows bound
/// to an INSERT.
extension PackedRows {
    /// Appends columns `0..<columns` of `row` as they are stored: integers, blobs and text (a float as text).
    mutating func append(_ row: Row, columns: Int) {
        for column in 0..<Int32(columns) {
            switch row.statement.columnType(column) {
            case SQLITE_NULL: appendValue(.null)
            case SQLITE_INTEGER: appendInteger(row.statement.int64(column))
            case SQLITE_BLOB: row.statement.withText(column) { appendBytes($0, tag: 3) }
            default: row.statement.withText(column) { appendText($0) }
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
