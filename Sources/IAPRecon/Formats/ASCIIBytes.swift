/// Whether bytes are ASCII alone, eight at a time: a record's bytes (`CSVRow.isASCII`), an id's
/// (`IDTable`), a history key's.
enum ASCIIBytes {
    static func only(_ raw: UnsafeRawBufferPointer) -> Bool {
        var highBits: UInt64 = 0
        var offset = 0
        while offset + 8 <= raw.count {
            highBits |= raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        while offset < raw.count {
            highBits |= UInt64(raw[offset])
            offset += 1
        }
        return highBits & 0x8080_8080_8080_8080 == 0
    }
}
