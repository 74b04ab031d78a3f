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
    /// however large the inputs; a job blocks until the consumer catches up. With `runAhead`,
    /// a job may also queue more, while all jobs' waiting messages weigh less than its bytes:
    /// a worker that finished its share then goes on with later jobs while the consumer is
    /// still on a long one, instead of waiting for it.
    public func run<Message: Sendable>(
        count: Int,
        bound: Int = 4,
        runAhead: RunAhead<Message>? = nil,
        produce: @escaping @Sendable (_ index: Int, _ send: (Message) -> Void) -> Void,
        consume: (_ index: Int, _ message: Message) throws -> Void
    ) throws {
        try withWorkers(count: count, bound: bound, runAhead: runAhead, produce: produce) { channel in
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
        count: Int, bound: Int, runAhead: RunAhead<Message>?, produce: @escaping @Sendable (_ index: Int, _ send: (Message) -> Void) -> Void,
        drain: (OrderedChannel<Message>) throws -> Void
    ) throws {
        guard count > 0 else { return }
        let channel = OrderedChannel<Message>(jobs: count, bound: bound, runAhead: runAhead)
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

/// How far jobs may queue messages beyond `bound`: while the messages waiting in all queues
/// weigh less than `bytes` together, by `weight` (what a message holds in memory).
public struct RunAhead<Message>: Sendable {
    public var bytes: Int
    public var weight: @Sendable (Message) -> Int

    public init(bytes: Int, weight: @escaping @Sendable (Message) -> Int) {
        self.bytes = bytes
        self.weight = weight
    }
}

/// Per-job bounded queues, drained by one consumer in job order (`take`).
final class OrderedChannel<Message: Sendable>: @unchecked Sendable {
    // All state is guarded by `condition`.
    private let condition = NSCondition()
    private var queues: [[(message: Message, weight: Int)]]
    private var finished: [Bool]
    private var cancelled = false
    private let bound: Int
    private let runAhead: RunAhead<Message>?
    /// The weight of every queued message (`runAhead`).
    private var waitingBytes = 0

    init(jobs: Int, bound: Int, runAhead: RunAhead<Message>? = nil) {
        queues = Array(repeating: [], count: jobs)
        finished = Array(repeating: false, count: jobs)
        self.bound = max(1, bound)
        self.runAhead = runAhead
    }

    var isCancelled: Bool {
        condition.lock()
        defer { condition.unlock() }
        return cancelled
    }

    /// Queues `message` for `job`; waits while the job's queue is full. A job's first `bound`
    /// messages never wait for the others' bytes: the job the consumer is on always moves.
    func put(_ job: Int, _ message: Message) {
        let weight = runAhead?.weight(message) ?? 0
        condition.lock()
        defer { condition.unlock() }
        while queues[job].count >= bound, !cancelled, !fitsAhead(weight) { condition.wait() }
        if cancelled { return }
        queues[job].append((message, weight))
        waitingBytes += weight
        condition.broadcast()
    }

    private func fitsAhead(_ weight: Int) -> Bool {
        guard let runAhead else { return false }
        return waitingBytes + weight <= runAhead.bytes
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
        let (message, weight) = queues[job].removeFirst()
        waitingBytes -= weight
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
