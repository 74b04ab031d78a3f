import CSQLite
import Foundation
import Synchronization

/// Wall-clock marks inside a stage, printed to stderr when `IAPRECON_TRACE` is set: where a
/// stage's time goes, for the one profiling it. Off, a mark costs one load of a constant.
public enum Trace {
    private static let enabled = ProcessInfo.processInfo.environment["IAPRECON_TRACE"] != nil
    /// The first use's wall clock, and the previous mark's wall clock and process CPU time (the first
    /// mark counts from the first use).
    private static let clocks = Mutex<(first: UInt64, previousWall: UInt64, previousCPU: UInt64)>({
        let now = DispatchTime.now().uptimeNanoseconds
        return (now, now, cpuNanoseconds())
    }())

    /// Prints `label` with the seconds since the previous mark on any thread, the CPU seconds all
    /// threads spent meanwhile (on a pool, wall time alone hides what a step costs), and the
    /// seconds since the first mark: marks of several threads interleave, and only that places
    /// each on one timeline.
    public static func mark(_ label: @autoclosure () -> String) {
        guard enabled else { return }
        let (wall, cpu, elapsed) = clocks.withLock { state in
            let (nowWall, nowCPU) = (DispatchTime.now().uptimeNanoseconds, cpuNanoseconds())
            defer { (state.previousWall, state.previousCPU) = (nowWall, nowCPU) }
            return (nowWall - min(state.previousWall, nowWall), nowCPU - min(state.previousCPU, nowCPU), nowWall - min(state.first, nowWall))
        }
        let seconds = String(format: "%.3f s, cpu %.3f s, at %.3f s", Double(wall) / 1e9, Double(cpu) / 1e9, Double(elapsed) / 1e9)
        // Not `FileHandle.write`, which traps when stderr refuses the line (closed, a full disk): a mark is never worth a run.
        var line = "trace \(label()): \(seconds)\(memory())\n"
        _ = line.withUTF8 { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    /// User and system time of the whole process so far.
    private static func cpuNanoseconds() -> UInt64 {
        var usage = rusage()
        guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return 0 }
        func nanoseconds(_ time: timeval) -> UInt64 { UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_usec) * 1_000 }
        return nanoseconds(usage.ru_utime) + nanoseconds(usage.ru_stime)
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
