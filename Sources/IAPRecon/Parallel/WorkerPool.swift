import Dispatch
import Foundation
import Synchronization

/// Runs jobs on a fixed number of Dispatch worker threads.
///
/// With `Background`, the only code that uses Dispatch directly. Workers take jobs in index
/// order and hand results to the calling thread through an `OrderedChannel`,
/// so whatever the width, the caller sees results in job order and `--jobs 1`
/// and `--jobs 8` write the same store and the same outputs.
public struct WorkerPool: Sendable {
    public let width: Int

    public init(width: Int) {
        self.width = max(1, width)
    }

    public static var defaultWidth: Int { ProcessInfo.processInfo.activeProcessorCount }

    /// Runs `produce(index, send)` for every index in `0..<count` on the workers, while the
    /// calling thread receives each job's messages in job order through `consume`.
    ///
    /// Each job may have at most `bound` messages waiting, so memory stays bounded
    /// however large the inputs; a job blocks until the consumer catches up.
    public func run<Message: Sendable>(
        count: Int,
        bound: Int = 4,
        produce: @escaping @Sendable (_ index: Int, _ send: (Message) -> Void) -> Void,
        consume: (_ index: Int, _ message: Message) throws -> Void
    ) throws {
        try withWorkers(count: count, bound: bound, produce: produce) { channel in
            for index in 0..<count {
                while let message = channel.take(index) {
                    try consume(index, message)
                }
            }
        }
    }

    /// Starts the workers (each takes the next job index, runs it into the channel and marks it
    /// finished), lets `drain` take the messages on the calling thread, then stops and waits for them.
    private func withWorkers<Message: Sendable>(
        count: Int, bound: Int, produce: @escaping @Sendable (_ index: Int, _ send: (Message) -> Void) -> Void,
        drain: (OrderedChannel<Message>) throws -> Void
    ) throws {
        guard count > 0 else { return }
        let channel = OrderedChannel<Message>(jobs: count, bound: bound)
        let next = Atomic<Int>(0)
        let group = DispatchGroup()
        for _ in 0..<min(width, count) {
            DispatchQueue.global().async(group: group) {
                while true {
                    let index = next.add(1, ordering: .relaxed).oldValue
                    if index >= count || channel.isCancelled { break }
                    produce(index) { channel.put(index, $0) }
                    channel.finish(index)
                }
            }
        }
        defer {
            channel.cancel()
            group.wait()
        }
        try drain(channel)
    }
}

/// Per-job bounded queues, drained by one consumer in job order (`take`).
final class OrderedChannel<Message: Sendable>: @unchecked Sendable {
    // All state is guarded by `condition`.
    private let condition = NSCondition()
    private var queues: [[Message]]
    private var finished: [Bool]
    private var cancelled = false
    private let bound: Int

    init(jobs: Int, bound: Int) {
        queues = Array(repeating: [], count: jobs)
        finished = Array(repeating: false, count: jobs)
        self.bound = max(1, bound)
    }

    var isCancelled: Bool {
        condition.lock()
        defer { condition.unlock() }
        return cancelled
    }

    func put(_ job: Int, _ message: Message) {
        condition.lock()
        defer { condition.unlock() }
        while queues[job].count >= bound, !cancelled { condition.wait() }
        if cancelled { return }
        queues[job].append(message)
        condition.broadcast()
    }

    func finish(_ job: Int) {
        condition.lock()
        defer { condition.unlock() }
        finished[job] = true
        condition.broadcast()
    }

    /// The next message of `job`, or nil once the job has finished (or the channel was cancelled)
    /// and its queue is empty.
    func take(_ job: Int) -> Message? {
        condition.lock()
        defer { condition.unlock() }
        while queues[job].isEmpty, !finished[job], !cancelled { condition.wait() }
        if queues[job].isEmpty { return nil }
        let message = queues[job].removeFirst()
        condition.broadcast()
        return message
    }

    /// Stops producers: pending and future `put`s return at once.
    func cancel() {
        condition.lock()
        defer { condition.unlock() }
        cancelled = true
        condition.broadcast()
    }
}
