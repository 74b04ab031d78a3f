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
        FileHandle.standardError.write(Data("trace \(label()): \(String(format: "%.3f", Double(elapsed) / 1e9)) s\n".utf8))
    }
}
