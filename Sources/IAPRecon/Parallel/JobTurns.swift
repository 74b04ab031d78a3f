import Synchronization

/// The numbers `0..<count` handed out one at a time to whichever thread asks next: threads that
/// each keep state of their own (a connection and what it has prepared) share a list of jobs of
/// unequal length, and each takes the next job as soon as it is free, so they finish close together.
final class JobTurns: Sendable {
    let count: Int
    private let next = Atomic<Int>(0)

    init(count: Int) {
        self.count = count
    }

    /// The next job's number, or nil when every job has been taken (or `stop` was called).
    func take() -> Int? {
        let turn = next.add(1, ordering: .relaxed).oldValue
        return turn < count ? turn : nil
    }

    /// Hands out no more jobs: a thread that failed stops the others at their next turn.
    func stop() {
        next.store(count, ordering: .relaxed)
    }
}
