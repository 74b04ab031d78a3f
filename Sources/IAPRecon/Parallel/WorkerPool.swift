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

    /// Like `run`, but the calling thread takes each message as soon as any job sends it (the
    /// earliest job first when several wait), and hears `finished(index)` once a job is done.
    ///
    /// For jobs whose results do not depend on each other's order (each fills its own tables): a
    /// long job no longer holds the others' messages back, so no worker waits for the consumer
    /// to reach its job. Memory stays bounded the same way.
    ///
    /// Whenever no message waits, the calling thread runs `idle`, which does one piece of work of
    /// its own and says whether it had any: such work fills the gaps instead of holding back the
    /// messages that arrive meanwhile.
    public func runUnordered<Message: Sendable>(
        count: Int,
        bound: Int = 4,
        produce: @escaping @Sendable (_ index: Int, _ send: (Message) -> Void) -> Void,
        consume: (_ index: Int, _ message: Message) throws -> Void,
        finished: (_ index: Int) throws -> Void,
        idle: () throws -> Bool = { false }
    ) throws {
        try withWorkers(count: count, bound: bound, produce: produce) { channel in
            while true {
                var next = channel.takeAny(waiting: false)
                if next == nil, try idle() { continue }
                if next == nil { next = channel.takeAny(waiting: true) }
                guard let (index, message) = next ?? nil else { return }
                if let message { try consume(index, message) } else { try finished(index) }
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

/// Per-job bounded queues, drained by one consumer in job order (`take`) or as messages come (`takeAny`).
final class OrderedChannel<Message: Sendable>: @unchecked Sendable {
    // All state is guarded by `condition`.
    private let condition = NSCondition()
    private var queues: [[Message]]
    private var finished: [Bool]
    /// By `takeAny`: the jobs whose end it has handed to the consumer.
    private var reported: [Bool]
    private var cancelled = false
    private let bound: Int

    init(jobs: Int, bound: Int) {
        queues = Array(repeating: [], count: jobs)
        finished = Array(repeating: false, count: jobs)
        reported = Array(repeating: false, count: jobs)
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

    /// The next message of any job, the earliest job first, or `(job, nil)` once for each job that
    /// has finished with an empty queue; `.some(nil)` when every job has been reported finished (or
    /// the channel was cancelled). Not `waiting`, nil at once when none of that is ready yet.
    func takeAny(waiting: Bool = true) -> (job: Int, message: Message?)?? {
        condition.lock()
        defer { condition.unlock() }
        while !cancelled {
            var allReported = true
            for job in queues.indices where !reported[job] {
                if !queues[job].isEmpty {
                    let message = queues[job].removeFirst()
                    condition.broadcast()
                    return (job, message)
                }
                if finished[job] {
                    reported[job] = true
                    return (job, nil)
                }
                allReported = false
            }
            if allReported { return .some(nil) }
            if !waiting { return nil }
            condition.wait()
        }
        return .some(nil)
    }

    /// Stops producers: pending and future `put`s return at once.
    func cancel() {
        condition.lock()
        defer { condition.unlock() }
        cancelled = true
        condition.broadcast()
    }
}
