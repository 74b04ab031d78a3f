import Foundation

/// One MMP file's rows as attribution counts them after the files before it (`MMPEvents`): its
/// installs and purchases that are no repeat of an earlier one, and, of its other events, each link
/// between a Customer User ID and an AppsFlyer ID that no row before made. Kept packed in
/// `fct_mmp_segments` (`StoredMMPSegments`) so that a night reads the rows of its new files only.
///
/// A segment holds only what attribution reads of a row (`MMPEventColumn`), as the raw row has it:
/// ids as their stored bytes, times as integers. It is valid while the MMP files up to its own are
/// the same files in the same order, their rows as they were (`chain`): a late or replaced file
/// makes the segments after it be counted again from their rows.
struct MMPSegment: Sendable, Equatable {
    var fileID: Int64
    /// The fingerprint of the format, the schema and the ids of the MMP files up to this one, in order.
    var chain: RowFingerprint
    var data: [UInt8]

    /// The packing's version: a segment of another is counted again from its rows.
    static let format: UInt8 = 1

    /// The chain before the first file, for the store's schema version `schema` and the key its
    /// device ids are pseudonymised with (`deviceIDKey`, as stored): a migration or a new key
    /// (which rewrites an older store's ids in place) has every file counted again.
    static func chainSeed(schema: Int, deviceIDKey: String) -> RowFingerprint {
        var chain = RowFingerprint("mmp segments")
        chain.add(format)
        chain.add(decimal: Int64(schema))
        chain.add(0x1F)
        for byte in deviceIDKey.utf8 { chain.add(byte) }
        return chain
    }

    /// `chain` carried past the file `fileID`.
    static func chain(_ chain: RowFingerprint, then fileID: Int64) -> RowFingerprint {
        var chain = chain
        chain.add(0x1F)
        chain.add(decimal: fileID)
        return chain
    }

    /// A segment's bytes were not what `Encoder` writes (a defect, or a damaged store).
    struct Malformed: Error, CustomStringConvertible {
        var fileID: Int64
        var description: String {
            "fct_mmp_segments: the segment of file \(fileID) is malformed; delete its rows (sqlite3 <db> 'DELETE FROM fct_mmp_segments') and run report again"
        }
    }

    typealias Column = MMPEventColumn

    /// How each column is packed. The file id is the segment's and is not packed.
    private enum Packing {
        /// An integer: the event time against the previous row's, the install time against the
        /// row's event time, the line against the previous row's line.
        case integer
        /// An entry of the segment's table of names (media sources and campaigns repeat).
        case name
        /// Length and bytes: text.
        case text
        /// Length and bytes: a blob (device ids, the event value's hash).
        case blob

        static let byColumn: [Packing] = Column.allCases.map { column in
            switch column {
            case .eventWallMs, .installWallMs, .retargeting, .line, .fileID: .integer
            case .eventName, .mediaSource, .campaign: .name
            case .idfv, .idfa, .appsflyerID, .eventValueKey: .blob
            case .customerUserID, .revenue, .revenueCurrency, .revenueUSD: .text
            }
        }
    }

    /// A row starts with one byte: its kind (a link, an install, a purchase, or a row whose name, if
    /// any, is in the table), its retargeting flag, and whether it has an event time and a line. Then, but for a
    /// link, a bit per other column it has, the most frequent first (one byte for most rows).
    private enum Header {
        static let link: UInt8 = 0, install: UInt8 = 1, purchase: UInt8 = 2, named: UInt8 = 3, kinds: UInt8 = 3
        static let retargetingSet: UInt8 = 4, retargetingOne: UInt8 = 8, eventTime: UInt8 = 16, line: UInt8 = 32
        /// The columns a presence bit stands for, bit 0 first.
        static let optional: [Column] = [
            .appsflyerID, .customerUserID, .idfv, .eventValueKey, .installWallMs, .mediaSource, .campaign, .revenueUSD, .idfa,
            .revenue, .revenueCurrency, .eventName,
        ]
    }

    // MARK: Writing

    /// Packs rows, in file order, into a segment's bytes.
    struct Encoder {
        private var names: [[UInt8]] = []
        /// Each name's number by the fingerprint of its bytes: a row's name is looked up in place,
        /// not copied into an array and hashed byte by byte.
        private var nameNumbers: [RowFingerprint: Int] = [:]
        private var rows: [UInt8] = []
        private var rowCount = 0
        private var previousEventMs: Int64 = 0
        private var previousLine: Int64 = 0

        /// Appends `row` (`MMPEventColumn`'s columns) whole.
        mutating func append(_ row: some StoredRow) {
            var header: UInt8 = Header.named
            if row.text(Column.eventName, equals: "install") { header = Header.install }
            if row.text(Column.eventName, equals: "af_purchase") { header = Header.purchase }
            // Ingest flags retargeting 0 or 1; any other value would read back as 1.
            if !row.isNull(Column.retargeting) {
                header |= Header.retargetingSet | (row.int(Column.retargeting) != 0 ? Header.retargetingOne : 0)
            }
            if !row.isNull(Column.eventWallMs) { header |= Header.eventTime }
            if !row.isNull(Column.line) { header |= Header.line }
            rows.append(header)
            let eventMs = row.isNull(Column.eventWallMs) ? 0 : row.int(Column.eventWallMs)
            if header & Header.eventTime != 0 {
                rows.appendZigZag(eventMs &- previousEventMs)
                previousEventMs = eventMs
            }
            if header & Header.line != 0 {
                let line = row.int(Column.line)
                rows.appendZigZag(line &- previousLine)
                previousLine = line
            }
            let kind = header & Header.kinds
            var present: UInt64 = 0
            for (bit, column) in Header.optional.enumerated() where !row.isNull(column) {
                if column == .eventName, kind != Header.named { continue }
                present |= 1 << UInt64(bit)
            }
            rows.appendVarint(present)
            for (bit, column) in Header.optional.enumerated() where present & (1 << UInt64(bit)) != 0 {
                switch Packing.byColumn[column.rawValue] {
                case .integer: rows.appendZigZag(row.int(column) &- eventMs)
                case .name: rows.appendVarint(UInt64(row.withText(column) { number(of: $0) }))
                case .text, .blob:
                    row.withText(column) { bytes in
                        rows.appendVarint(UInt64(bytes.count))
                        rows.append(contentsOf: bytes)
                    }
                }
            }
            rowCount += 1
        }

        /// Appends a row that only links `customerUserID` to `appsflyerID`: its other columns NULL.
        mutating func appendLink(_ row: some StoredRow) {
            rows.append(Header.link)
            for column in [Column.customerUserID, .appsflyerID] {
                row.withText(column) { bytes in
                    rows.appendVarint(UInt64(bytes.count))
                    rows.append(contentsOf: bytes)
                }
            }
            rowCount += 1
        }

        /// The number of `name` in the table, numbered in the order names are first seen. The bytes
        /// are compared too: a name whose fingerprint another took (never seen in practice) is
        /// found, or added, by its bytes, so the table is the same whatever the fingerprints.
        private mutating func number(of name: UnsafeBufferPointer<UInt8>) -> Int {
            let fingerprint = RowFingerprint(name)
            guard let number = nameNumbers[fingerprint] else {
                nameNumbers[fingerprint] = names.count
                names.append(Array(name))
                return names.count - 1
            }
            if names[number].elementsEqual(name) { return number }
            if let number = names.firstIndex(where: { $0.elementsEqual(name) }) { return number }
            names.append(Array(name))
            return names.count - 1
        }

        /// The segment's bytes: the format, the table of names, then the rows.
        func finish() -> [UInt8] {
            var data: [UInt8] = [MMPSegment.format]
            data.appendVarint(UInt64(names.count))
            for name in names {
                data.appendVarint(UInt64(name.count))
                data.append(contentsOf: name)
            }
            data.appendVarint(UInt64(rowCount))
            data.append(contentsOf: rows)
            return data
        }
    }

    // MARK: Reading

    /// Calls `body` with each row, in the order it was appended. A row is valid only inside `body`.
    func forEachRow(_ body: (Row) throws -> Void) throws {
        try data.withUnsafeBufferPointer { bytes in
            var reader = ByteReader(bytes: bytes)
            guard reader.byte() == Self.format else { throw Malformed(fileID: fileID) }
            // The kinds' names are the table's first entries, after the segment's own.
            var names: [Int64] = []
            let nameCount = try reader.count(of: fileID)
            names.reserveCapacity(nameCount)
            for _ in 0..<nameCount { names.append(try reader.span(of: fileID)) }
            let rowCount = try reader.count(of: fileID)
            var slots = [Int64](repeating: 0, count: Column.allCases.count)
            var previousEventMs: Int64 = 0
            var previousLine: Int64 = 0
            let fileBit: UInt64 = 1 << UInt64(Column.fileID.rawValue)
            try Self.kindNames.withUnsafeBufferPointer { kindNames in
                try slots.withUnsafeMutableBufferPointer { slots in
                    guard let base = slots.baseAddress else { return }
                    slots[Column.fileID.rawValue] = fileID
                    for _ in 0..<rowCount {
                        guard let header = reader.byte() else { throw Malformed(fileID: fileID) }
                        guard header < Header.line << 1 else { throw Malformed(fileID: fileID) }
                        let kind = header & Header.kinds
                        if kind == Header.link {
                            guard header == Header.link else { throw Malformed(fileID: fileID) }
                            slots[Column.customerUserID.rawValue] = try reader.span(of: fileID)
                            slots[Column.appsflyerID.rawValue] = try reader.span(of: fileID)
                            let present = fileBit | 1 << UInt64(Column.customerUserID.rawValue) | 1 << UInt64(Column.appsflyerID.rawValue)
                            try body(Row(bytes: bytes, kindNames: kindNames, slots: UnsafePointer(base), present: present))
                            continue
                        }
                        var present = fileBit
                        if kind != Header.named {
                            present |= 1 << UInt64(Column.eventName.rawValue)
                            slots[Column.eventName.rawValue] = -Int64(kind)
                        }
                        if header & Header.retargetingSet != 0 {
                            present |= 1 << UInt64(Column.retargeting.rawValue)
                            slots[Column.retargeting.rawValue] = header & Header.retargetingOne != 0 ? 1 : 0
                        }
                        var eventMs: Int64 = 0
                        if header & Header.eventTime != 0 {
                            eventMs = previousEventMs &+ (try reader.zigZag(of: fileID))
                            previousEventMs = eventMs
                            present |= 1 << UInt64(Column.eventWallMs.rawValue)
                            slots[Column.eventWallMs.rawValue] = eventMs
                        }
                        if header & Header.line != 0 {
                            previousLine = previousLine &+ (try reader.zigZag(of: fileID))
                            present |= 1 << UInt64(Column.line.rawValue)
                            slots[Column.line.rawValue] = previousLine
                        }
                        guard let optional = reader.varint(), optional < 1 << UInt64(Header.optional.count) else { throw Malformed(fileID: fileID) }
                        for (bit, column) in Header.optional.enumerated() where optional & (1 << UInt64(bit)) != 0 {
                            present |= 1 << UInt64(column.rawValue)
                            switch Packing.byColumn[column.rawValue] {
                            case .integer: slots[column.rawValue] = eventMs &+ (try reader.zigZag(of: fileID))
                            case .name:
                                let number = try reader.count(of: fileID)
                                guard number < names.count else { throw Malformed(fileID: fileID) }
                                slots[column.rawValue] = names[number]
                            case .text, .blob: slots[column.rawValue] = try reader.span(of: fileID)
                            }
                        }
                        try body(Row(bytes: bytes, kindNames: kindNames, slots: UnsafePointer(base), present: present))
                    }
                }
            }
            guard reader.isAtEnd else { throw Malformed(fileID: fileID) }
        }
    }

    /// The names a row's kind stands for, by kind (`Header`): read in place like the table's.
    private static let kindNames: [UInt8] = Array("installaf_purchase".utf8)

    /// A row of a segment, read in place: its integers, and where its texts are in the segment's bytes.
    struct Row: StoredRow {
        fileprivate let bytes: UnsafeBufferPointer<UInt8>
        fileprivate let kindNames: UnsafeBufferPointer<UInt8>
        /// Per column: an integer's value, or a text's place (`ByteReader.span`); an event name
        /// its kind's, negated, when the row's kind names it.
        fileprivate let slots: UnsafePointer<Int64>
        /// A bit per column that is not NULL.
        fileprivate let present: UInt64

        func isNull(_ index: Int) -> Bool { present & (1 << UInt64(index)) == 0 }

        func int(_ index: Int) -> Int64 {
            guard !isNull(index) else { return 0 }
            if Packing.byColumn[index] == .integer { return slots[index] }
            return withText(index) { Int64(String(decoding: $0, as: UTF8.self)) ?? 0 }
        }

        func string(_ index: Int) -> String {
            withText(index) { String(decoding: $0, as: UTF8.self) }
        }

        func value(_ index: Int) -> SQLValue {
            guard !isNull(index) else { return .null }
            switch Packing.byColumn[index] {
            case .integer: return .integer(slots[index])
            case .blob: return .blob(withText(index) { Array($0) })
            case .name, .text: return .text(string(index))
            }
        }

        func withText<T>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
            guard !isNull(index) else { return try body(UnsafeBufferPointer(start: nil, count: 0)) }
            if Packing.byColumn[index] == .integer {
                var text = String(slots[index])
                return try text.withUTF8(body)
            }
            let slot = slots[index]
            if slot < 0 {
                // An install's or a purchase's name, from `kindNames`.
                let range = slot == -Int64(Header.install) ? 0..<7 : 7..<18
                return try body(UnsafeBufferPointer(rebasing: kindNames[range]))
            }
            let (start, count) = ByteReader.place(slot)
            return try body(UnsafeBufferPointer(rebasing: bytes[start..<(start + count)]))
        }

        func compareText(_ index: Int, with other: Row, _ otherIndex: Int) -> Int {
            withText(index) { a in other.withText(otherIndex) { b in BinaryOrder.compare(a, b) } }
        }
    }
}

/// Reads a segment's bytes, every read checked against their end.
private struct ByteReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var offset = 0

    var isAtEnd: Bool { offset == bytes.count }

    mutating func byte() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func varint() -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while shift < 64, let byte = byte() {
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }

    mutating func zigZag(of fileID: Int64) throws -> Int64 {
        guard let value = varint() else { throw MMPSegment.Malformed(fileID: fileID) }
        return Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
    }

    /// A count or a table number: small enough to index with.
    mutating func count(of fileID: Int64) throws -> Int {
        guard let value = varint(), value <= UInt64(bytes.count) else { throw MMPSegment.Malformed(fileID: fileID) }
        return Int(value)
    }

    /// A length and its bytes, skipped: their place, as `place` reads it back.
    mutating func span(of fileID: Int64) throws -> Int64 {
        let count = try count(of: fileID)
        guard count <= bytes.count - offset, count < 1 << 24 else { throw MMPSegment.Malformed(fileID: fileID) }
        defer { offset += count }
        return Int64(offset) << 24 | Int64(count)
    }

    static func place(_ span: Int64) -> (start: Int, count: Int) {
        (Int(span >> 24), Int(span & 0xFF_FFFF))
    }
}

private extension Array where Element == UInt8 {
    mutating func appendVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        append(UInt8(value))
    }

    mutating func appendZigZag(_ value: Int64) {
        appendVarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }
}
