import Foundation

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
    /// Lines wait in memory up to this many bytes in all; then every file moves its lines to its spool.
    static let memoryBudget = 48 * 1_048_576
    private var buffered = 0

    init(directory: String, start: Millis, days: Int, gzipFirstServerDay: Bool, partitioned: Bool = false) {
        self.directory = directory
        self.start = start
        self.days = days
        for source in Source.allCases {
            var row: [SpooledFile] = []
            for day in 0..<days {
                var buffer = LineBuffer(capacity: 48)
                if partitioned {
                    buffer.date(start + Int64(day) * Clock.day)
                    buffer.byte(UInt8(ascii: "/"))
                }
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
                                       header: source.isCSV ? AppsFlyer.header : nil, gzip: gzip))
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
        try append(line.bytes, to: files[source.rawValue][day(of: time)], at: time)
    }

    /// Adds a line to `file` with sort key `time` (a bad line may sort last on purpose).
    func append(_ line: [UInt8], to file: SpooledFile, at time: Millis) throws {
        buffered += file.append(line, at: time)
        if buffered > Self.memoryBudget {
            for row in files { for file in row { try file.flush() } }
            buffered = 0
        }
    }

    /// Sorts and writes every file, one worker per core; returns them in path order.
    func finish() throws -> [SpooledFile] {
        let all = files.flatMap { $0 }.sorted { $0.bytes > $1.bytes }
        let failures = FailureList()
        DispatchQueue.concurrentPerform(iterations: all.count) { index in
            do {
                try all[index].finish()
            } catch {
                failures.append(error)
            }
        }
        if let first = failures.first { throw first }
        return all.sorted { $0.relativePath < $1.relativePath }
    }
}

/// Errors collected from workers.
private final class FailureList: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [any Error] = []

    func append(_ error: any Error) {
        lock.lock()
        errors.append(error)
        lock.unlock()
    }

    var first: (any Error)? {
        lock.lock()
        defer { lock.unlock() }
        return errors.first
    }
}
