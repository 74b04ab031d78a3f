import Dispatch
import Foundation
import Synchronization
import Testing
@testable import IAPRecon

@Suite("Worker pool: jobs on workers, messages in job order", .serialized)
struct WorkerPoolTests {
    /// Job 0 sends one message, then holds its worker until job 1 (on the other worker) has sent
    /// `waitFor` messages (at most 60 s, on a busy machine), and a moment more; job 1 sends `sent` messages of `weight` bytes. Returns
    /// how many job 1 had sent when job 0 let go, and every message in the order consumed.
    private func holdFirstJob(runAhead: Int?, bound: Int, sent: Int, weight: Int, waitFor: Int)
        throws -> (sentWhileHeld: Int, consumed: [String]) {
        let sentByJob1 = Atomic<Int>(0)
        let seenWhileHeld = Atomic<Int>(-1)
        let ahead = runAhead.map { RunAhead<String>(bytes: $0) { _ in weight } }
        var consumed: [String] = []
        try WorkerPool(width: 2).run(count: 2, bound: bound, runAhead: ahead, produce: { index, send in
            if index == 0 {
                send("0.0")
                let deadline = Date().addingTimeInterval(60)
                while sentByJob1.load(ordering: .relaxed) < waitFor, Date() < deadline { usleep(1_000) }
                // Whatever job 1 could queue, it has by now: a put that may not go on waits.
                usleep(50_000)
                seenWhileHeld.store(sentByJob1.load(ordering: .relaxed), ordering: .relaxed)
                send("0.1")
            } else {
                for message in 0..<sent {
                    send("1.\(message)")
                    sentByJob1.add(1, ordering: .relaxed)
                }
            }
        }, consume: { _, message in consumed.append(message) })
        return (seenWhileHeld.load(ordering: .relaxed), consumed)
    }

    @Test("with run-ahead, a later job goes on queuing while the consumer waits on a long job, up to the bytes allowed")
    func runAheadQueuesLaterJobs() throws {
        let result = try holdFirstJob(runAhead: 50, bound: 2, sent: 20, weight: 10, waitFor: 5)
        // 50 bytes of 10-byte messages: five wait, the sixth does not fit.
        #expect(result.sentWhileHeld == 5)
        #expect(result.consumed == ["0.0", "0.1"] + (0..<20).map { "1.\($0)" })
    }

    @Test("without run-ahead, a later job stops at its bound until the consumer reaches it")
    func boundHoldsWithoutRunAhead() throws {
        let result = try holdFirstJob(runAhead: nil, bound: 2, sent: 20, weight: 10, waitFor: 2)
        #expect(result.sentWhileHeld == 2)
        #expect(result.consumed == ["0.0", "0.1"] + (0..<20).map { "1.\($0)" })
    }

    @Test("a message heavier than all the run-ahead allows still goes through its job's bound")
    func heavyMessagesKeepTheBound() throws {
        let result = try holdFirstJob(runAhead: 50, bound: 2, sent: 6, weight: 100, waitFor: 2)
        #expect(result.sentWhileHeld == 2)
        #expect(result.consumed == ["0.0", "0.1"] + (0..<6).map { "1.\($0)" })
    }
}
