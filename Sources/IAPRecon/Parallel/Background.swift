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

    func value() throws -> Value {
        done.wait()
        guard let outcome = result.withLock({ $0 }) else { preconditionFailure("background work ended without a result") }
        return try outcome.get()
    }
}
