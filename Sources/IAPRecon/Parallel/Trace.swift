import CSQLite
import Foundation
import Synchronization

/// Wall-clock marks inside a stage, printed to stderr when `IAPRECON_TRACE` is set: where a
/// stage's time goes, for the one profiling it. Off, a mark costs one load of a constant.
public enum Trace {
    private static let enabled = ProcessInfo.processInfo.environment["IAPRECON_TRACE"] != nil
    /// The previous mark (the first mark counts from the first use).
    private static let start = Mutex<UInt64>(DispatchTime.now().uptimeNanoseconds)

    /// Prints `label` with the seconds since the previous mark on any thread.
    public static func mark(_ label: @autoclosure () -> String) {
        guard enabled else { return }
        let elapsed = start.withLock { previous in
            let now = DispatchTime.now().uptimeNanoseconds
            defer { previous = now }
            return now - min(previous, now)
        }
        FileHandle.standardError.write(Data("trace \(label()): \(String(format: "%.3f", Double(elapsed) / 1e9)) s\(memory())\n".utf8))
    }

    /// The resident memory (anonymous, file-backed and shared) and its peak, from `/proc/self/status` where there is one,
    /// and what the heap holds in use and keeps free.
    private static func memory() -> String {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return "" }
        var megabytes: [String: Int] = [:]
        for line in status.split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if parts.count >= 2, let kilobytes = Int(parts[1]) { megabytes[String(parts[0].dropLast())] = kilobytes / 1024 }
        }
        guard let rss = megabytes["VmRSS"], let peak = megabytes["VmHWM"] else { return "" }
        let parts = ["RssAnon": "anon", "RssFile": "file", "RssShmem": "shared"].sorted { $0.key < $1.key }
            .compactMap { key, name in megabytes[key].map { "\(name) \($0)" } }
        let heap = iaprecon_heap_bytes(0) < 0 ? "" : ", heap in use \(iaprecon_heap_bytes(0) >> 20) MB, kept free \(iaprecon_heap_bytes(1) >> 20) MB"
        return "  rss \(rss) MB (\(parts.joined(separator: ", "))), peak \(peak) MB\(heap)"
    }
}
