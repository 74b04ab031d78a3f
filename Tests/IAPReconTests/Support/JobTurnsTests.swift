import Dispatch
import Synchronization
import Testing
@testable import IAPRecon

@Suite("Job turns: each job to exactly one thread")
struct JobTurnsTests {
    @Test("threads taking turns get every job once between them, and none after the last")
    func everyJobOnce() {
        let turns = JobTurns(count: 20_000)
        let taken = Mutex<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            var mine: [Int] = []
            while let job = turns.take() { mine.append(job) }
            taken.withLock { $0 += mine }
        }
        #expect(taken.withLock { $0.sorted() } == Array(0..<20_000))
        #expect(turns.take() == nil)
    }

    @Test("after stop, no job is handed out")
    func stop() {
        let turns = JobTurns(count: 5)
        #expect(turns.take() == 0)
        turns.stop()
        #expect(turns.take() == nil)
        #expect(turns.take() == nil)
    }
}
