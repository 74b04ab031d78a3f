/// The per-day sources of CONTRACT.md §1, each written one file per UTC day.
enum Source: Int, CaseIterable {
    case server, receipts, notifications, registrations, attribution

    var folder: String {
        switch self {
        case .server: "server"
        case .receipts: "receipts"
        case .notifications: "notifications"
        case .registrations: "registrations"
        case .attribution: "attribution"
        }
    }

    var filePrefix: String { self == .attribution ? "appsflyer" : folder }
    var fileExtension: String { self == .attribution ? "csv" : "jsonl" }
    var isCSV: Bool { self == .attribution }
}

/// The generated input folder: one spooled file per source and day.
///
/// A line belongs to the file of its own time's UTC day (`server/server-2026-09-01.jsonl`),
/// so an incremental benchmark can add one more day's files to a store that holds the rest.
final class InputFolder {
    let directory: String
    let start: Millis
    let days: Int
    private var files: [[SpooledFile]] = []

    init(directory: String, start: Millis, days: Int, gzipFirstServerDay: Bool) {
        self.directory = directory
        self.start = start
        self.days = days
        let fileCount = Source.allCases.count * days
        let threshold = max(16_384, min(262_144, 48 * 1_048_576 / max(fileCount, 1)))
        for source in Source.allCases {
            var row: [SpooledFile] = []
            for day in 0..<days {
                var buffer = LineBuffer(capacity: 32)
                buffer.text(source.folder)
                buffer.byte(UInt8(ascii: "/"))
                buffer.text(source.filePrefix)
                buffer.byte(UInt8(ascii: "-"))
                buffer.date(start + Int64(day) * Clock.day)
                buffer.byte(UInt8(ascii: "."))
                buffer.text(source.fileExtension)
                let gzip = gzipFirstServerDay && source == .server && day == 0
                if gzip { buffer.raw(".gz") }
                row.append(SpooledFile(directory: directory, relativePath: String(decoding: buffer.bytes, as: UTF8.self),
                                       header: source.isCSV ? AppsFlyer.header : nil, gzip: gzip,
                                       flushThreshold: threshold))
            }
            files.append(row)
        }
    }

    /// The day index of `time`, clamped into the folder's days.
    func day(of time: Millis) -> Int {
        min(max(Int(Clock.floorDiv(time - start, Clock.day)), 0), days - 1)
    }

    func file(_ source: Source, at time: Millis) -> SpooledFile {
        files[source.rawValue][day(of: time)]
    }

    func emit(_ source: Source, at time: Millis, _ line: LineBuffer) throws {
        try files[source.rawValue][day(of: time)].append(line.bytes, at: time)
    }

    /// Sorts and writes every file; returns them in path order.
    func finish() throws -> [SpooledFile] {
        let all = files.flatMap { $0 }
        for file in all { try file.finish() }
        return all.sorted { $0.relativePath < $1.relativePath }
    }
}
