import Foundation
import IAPRecon
import IAPReconGenerator

/// The generator's counts, read from `iaprecon generate`'s "wrote N files, N lines, N bytes" line.
struct GeneratedCounts: Equatable, Sendable {
    var files: Int
    var lines: Int
    var bytes: Int

    init(files: Int, lines: Int, bytes: Int) {
        self.files = files
        self.lines = lines
        self.bytes = bytes
    }

    init?(parsing output: String) {
        guard let match = output.firstMatch(of: /wrote (\d+) files, (\d+) lines, (\d+) bytes/),
              let files = Int(match.1), let lines = Int(match.2), let bytes = Int(match.3) else { return nil }
        self.init(files: files, lines: lines, bytes: bytes)
    }
}

/// `input.stamp` beside a generated folder: the size asked for, the generator parameters and
/// counts, so a later benchmark reuses the folder when the parameters match. Written after
/// generation succeeds. The generator's own estimate and its data version are parameters: a
/// re-tuned generator, or one that writes other bytes, and the folder is generated again.
struct InputStamp: Equatable, Sendable {
    static let header = "iaprecon bench input, format 3"
    var target: Int
    /// `InputGenerator.users(forLines:days:)` for the target.
    var estimate: Int
    var days: Int
    var seed: UInt64
    /// `InputGenerator.dataVersion` of the generator that wrote the folder.
    var generator: Int
    /// The users the folder was generated with (the estimate, or the calibrated count).
    var users: Int
    var counts = GeneratedCounts(files: 0, lines: 0, bytes: 0)

    init(target: Int, estimate: Int, days: Int, seed: UInt64, generator: Int = InputGenerator.dataVersion) {
        self.target = target
        self.estimate = estimate
        self.days = days
        self.seed = seed
        self.generator = generator
        users = estimate
    }

    init?(parsing text: String) {
        let lines = text.split(separator: "\n").map(String.init)
        guard lines.first == Self.header else { return nil }
        var fields: [String: Int] = [:]
        for line in lines.dropFirst() {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2, let value = Int(parts[1]) { fields[parts[0]] = value }
        }
        guard let target = fields["target"], let estimate = fields["estimate"], let days = fields["days"],
              let seed = fields["seed"], seed >= 0, let generator = fields["generator"], let users = fields["users"],
              let files = fields["files"], let lines = fields["lines"], let bytes = fields["bytes"] else { return nil }
        self.init(target: target, estimate: estimate, days: days, seed: UInt64(seed), generator: generator)
        self.users = users
        counts = GeneratedCounts(files: files, lines: lines, bytes: bytes)
    }

    var text: String {
        [Self.header, "target=\(target)", "estimate=\(estimate)", "days=\(days)", "seed=\(seed)", "generator=\(generator)", "users=\(users)",
         "files=\(counts.files)", "lines=\(counts.lines)", "bytes=\(counts.bytes)"].joined(separator: "\n") + "\n"
    }

    func sameParameters(as other: InputStamp) -> Bool {
        target == other.target && estimate == other.estimate && days == other.days && seed == other.seed
            && generator == other.generator
    }
}

/// Bringing a generated folder near its size when the generator's estimate misses.
enum GeneratorCalibration {
    /// A folder within this fraction of its size is kept.
    static let tolerance = 0.05
    /// Generations per size at most, the first included.
    static let attempts = 3

    static func isNear(_ lines: Int, _ target: Int) -> Bool {
        abs(Double(lines) / Double(target) - 1) <= tolerance
    }

    /// Users for the next try, assuming lines grow in proportion to users.
    static func rescaled(users: Int, gave lines: Int, target: Int) -> Int {
        max(1, Int((Double(users) * Double(target) / Double(max(lines, 1))).rounded()))
    }
}

// MARK: - The incremental night's earlier days

/// A folder of hard links to every input file but one day's: the store as it stood the night before.
/// Not symbolic links: iaprecon refuses a symlink that leads outside its input folder.
enum IncrementalView {
    /// The latest `yyyy-MM-dd` in the file names, the day the night adds.
    static func lastDay(of relativePaths: [String]) -> String? {
        relativePaths.compactMap(day(in:)).max()
    }

    /// The `yyyy-MM-dd` in a file's name, if it is a one-day file.
    static func day(in relativePath: String) -> String? {
        let name = relativePath.split(separator: "/").last.map(String.init) ?? relativePath
        return name.firstMatch(of: /\d{4}-\d{2}-\d{2}/).map { String($0.output) }
    }

    /// The files the earlier days' store reads: all but `day`'s (one-day files) and the generator's truth.
    static func filesBefore(_ day: String, in relativePaths: [String]) -> [String] {
        relativePaths.filter { Self.day(in: $0) != day && $0 != "truth.json" }
    }

    /// Lines the night's store read from `day`'s files.
    static func linesRead(of day: String, in database: String) throws -> Int {
        try StoredFiles.linesRead(in: Database(path: database, readOnly: true)).reduce(0) { total, file in
            total + (Self.day(in: file.key) == day ? file.value : 0)
        }
    }

    /// Recreates `view` with hard links to the files of `input` before `day` (copies where the file
    /// system refuses a link).
    static func build(at view: String, from input: String, files: [String], holdingBack day: String) throws {
        let manager = FileManager.default
        try? manager.removeItem(atPath: view)
        for relative in filesBefore(day, in: files) {
            let link = view + "/" + relative
            try manager.createDirectory(atPath: (link as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            do {
                try manager.linkItem(atPath: input + "/" + relative, toPath: link)
            } catch {
                try manager.copyItem(atPath: input + "/" + relative, toPath: link)
            }
        }
    }
}
