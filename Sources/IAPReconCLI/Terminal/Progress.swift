import Foundation
import IAPRecon

/// Stage progress for people: a live line on a terminal, one line per stage otherwise.
///
/// The live ingest line shows lines done, the rate, and the time left, estimated from the bytes
/// of the files already stored against the bytes planned; normalize and join count the rows they
/// have written, report the files.
final class StageProgress: ProgressSink {
    private let live: Bool
    private var lines = 0
    private var plannedBytes = 0
    private var doneBytes = 0
    private var started = Date()
    private var lastDraw = Date.distantPast
    private var stage = ""
    private let write: (String) -> Void
    /// Where alerts go, when not where `write` puts the rest: under `--quiet`, stderr all the same.
    private let writeAlert: ((String) -> Void)?

    init(live: Bool, write: @escaping (String) -> Void, alert: ((String) -> Void)? = nil) {
        self.live = live
        self.write = write
        writeAlert = alert
    }

    /// What a command prints under `--quiet`: nothing but alerts, on stderr.
    static func quiet(alert: @escaping (String) -> Void) -> StageProgress {
        StageProgress(live: false, write: { _ in }, alert: alert)
    }

    func stageStarted(_ stage: String) {
        self.stage = stage
        lines = 0
        plannedBytes = 0
        doneBytes = 0
        started = Date()
    }

    func advanced(_ progress: IngestProgress) {
        switch progress {
        case .planned(let bytes): plannedBytes = bytes
        case .lines(let count): lines += count
        case .fileDone(let bytes): doneBytes += bytes
        }
        guard live, Date().timeIntervalSince(lastDraw) > 0.2 else { return }
        lastDraw = Date()
        StandardStreams.write(("\r\u{1B}[K" + Self.line(stage: stage, lines: lines, seconds: Date().timeIntervalSince(started),
                                                        doneBytes: doneBytes, plannedBytes: plannedBytes)).utf8, to: STDERR_FILENO)
    }

    /// `ingest: 120000 lines, 250000 lines/s, 12 s left`, `join: 40000 rows, 90000 rows/s`, `report: 5 files, 3 s`.
    static func line(stage: String, lines: Int, seconds: Double, doneBytes: Int, plannedBytes: Int) -> String {
        let elapsed = max(seconds, 0.001)
        if stage == "report" { return "report: \(lines) files, \(Int(elapsed)) s" }
        let unit = stage == "ingest" ? "lines" : "rows"
        var text = "\(stage): \(lines) \(unit), \(Int(Double(lines) / elapsed)) \(unit)/s"
        if doneBytes > 0, plannedBytes > doneBytes {
            let left = elapsed * Double(plannedBytes - doneBytes) / Double(doneBytes)
            text += ", \(Int(left.rounded(.up))) s left"
        }
        return text
    }

    /// Clears the live line (a stage command that prints its own result).
    func clear() {
        if live { StandardStreams.write("\r\u{1B}[K".utf8, to: STDERR_FILENO) }
    }

    func warning(_ message: String) {
        if live { StandardStreams.write("\r\u{1B}[K".utf8, to: STDERR_FILENO) }
        write("Warning: " + message)
    }

    func alert(_ message: String) {
        if live { StandardStreams.write("\r\u{1B}[K".utf8, to: STDERR_FILENO) }
        (writeAlert ?? write)("Warning: " + message)
    }

    func stageFinished(_ stage: String, seconds: Double, note: String) {
        if live { StandardStreams.write("\r\u{1B}[K".utf8, to: STDERR_FILENO) }
        write("\(stage): \(String(format: "%.2f", seconds))s" + (note.isEmpty ? "" : " — \(note)"))
    }
}
