import Foundation
import IAPRecon

/// Stage progress for people: a live line on a terminal, one line per stage otherwise.
final class StageProgress: ProgressSink {
    private let live: Bool
    private var lines = 0
    private var started = Date()
    private var lastDraw = Date.distantPast
    private var stage = ""
    private let totalBytes: Int
    private var write: (String) -> Void

    init(live: Bool, totalBytes: Int = 0, write: @escaping (String) -> Void) {
        self.live = live
        self.totalBytes = totalBytes
        self.write = write
    }

    func stageStarted(_ stage: String) {
        self.stage = stage
        lines = 0
        started = Date()
    }

    func advanced(lines count: Int) {
        lines += count
        guard live, Date().timeIntervalSince(lastDraw) > 0.2 else { return }
        lastDraw = Date()
        let seconds = max(Date().timeIntervalSince(started), 0.001)
        let rate = Double(lines) / seconds
        FileHandle.standardError.write(Data("\r\u{1B}[K\(stage): \(lines) lines, \(Int(rate)) lines/s, \(String(format: "%.1f", seconds))s".utf8))
    }

    func stageFinished(_ stage: String, seconds: Double, note: String) {
        if live { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        write("\(stage): \(String(format: "%.2f", seconds))s" + (note.isEmpty ? "" : " — \(note)"))
    }
}
