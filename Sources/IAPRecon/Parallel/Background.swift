import Dispatch
import Synchronization

/// One piece of work on a Dispatch worker thread while the calling thread does another;
/// `value()` waits for it and returns its result or rethrows its error.
final class Background<Value: Sendable>: Sendable {
    private let result = Mutex<Result<Value, any Error>?>(nil)
    private let done = DispatchGroup()

    init(_ work: @escaping @Sendable () throws -> Value) {
        DispatchQueue.global().async(group: done) { [self] in
            let outcome = Result { try work() }
            result.withLock { $0 = outcome }
        }
    }

    /// Waits for the work and hands its result over (once: the result is not kept, so its memory
    /// goes when the caller is done with it).
    func value() throws -> Value {
        done.wait()
        let outcome = result.withLock { stored in
            defer { stored = nil }
            return stored
        }
        guard let outcome else { preconditionFailure("background work ended without a result, or value() was called twice") }
        return try outcome.get()
    }

    /// Waits for the work, leaving its result unclaimed (a caller that leaves with an error).
    func wait() {
        done.wait()
    }
}
