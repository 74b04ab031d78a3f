import Foundation
import Testing
@testable import IAPRecon

/// A history's events in time order, sorted in memory or, past a budget, in runs on disk and
/// merged (`HistoryEvents`).
@Suite("History events")
struct HistoryEventsTests {
    typealias Event = UserHistory.Event

    /// Events with many ties: few instants, few names, ids that only compare as strings do (an
    /// accent precomposed and decomposed, which are equal; non-ASCII; an emoji), and findings.
    static func events(count: Int, seed: UInt64) -> [Event] {
        var state = seed
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        let names = ["order", "apple purchase", "delivered", "FINDING lost_delivery", "FINDING duplicate_delivery", "refund"]
        let ids = ["t1", "t2", "T1", "t10", "caf\u{E9}", "cafe\u{301}", "caf", "\u{FC}ber", "u_1", "\u{1F600}", ""]
        return (0..<count).map { index in
            let name = names[next(names.count)]
            return Event(ms: Int64(1_764_000_000_000 + next(4) * 1_000), event: name, id: ids[next(ids.count)], product: "gems\(next(3))",
                         amount: next(2) == 0 ? "" : "0.99", currency: "USD", detail: "detail \(index)", shownDetail: "shown \(index)",
                         source: "server/s.jsonl:\(index + 1)")
        }
    }

    /// The order history has always shown: by time, a finding after the rest at one instant, then
    /// by event and id as Swift compares strings, then as found.
    static func inTimeOrder(_ events: [Event]) -> [Event] {
        events.indices.sorted { a, b in
            let (x, y) = (events[a], events[b])
            if x.ms != y.ms { return x.ms < y.ms }
            let (xFinding, yFinding) = (x.event.hasPrefix("FINDING"), y.event.hasPrefix("FINDING"))
            if xFinding != yFinding { return !xFinding }
            if x.event != y.event { return x.event < y.event }
            if x.id != y.id { return x.id < y.id }
            return a < b
        }.map { events[$0] }
    }

    @Test("events sorted in many runs on disk come back merged in the order sorting them in memory gives, as often as read")
    func runsMergeInTimeOrder() throws {
        let folder = FileManager.default.temporaryDirectory.path + "/iaprecon-history-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let events = Self.events(count: 600, seed: 20_261_205)
        let expected = Self.inTimeOrder(events)

        var inRuns = HistoryEvents.Builder(memoryBytes: 1_024, folder: folder)
        var inMemory = HistoryEvents.Builder(folder: folder)
        for event in events {
            inRuns.add(event)
            inMemory.add(event)
        }
        let merged = inRuns.finished()
        let sorted = inMemory.finished()
        #expect(Array(merged) == expected)
        #expect(Array(sorted) == expected)
        #expect(Array(merged) == expected, "read again, merged again")
        #expect(merged == sorted)
        #expect(merged.count == 600)
        #expect(merged.first == expected.first)
        #expect(merged.last == expected.last)
        #expect(merged.readFailure == nil)
        // The runs' file was removed from the folder as it was made.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
    }

    @Test("no events, and events that never reach the budget, need no file; where no file can be made, all are held")
    func fewEvents() throws {
        let folder = FileManager.default.temporaryDirectory.path + "/iaprecon-history-missing-" + UUID().uuidString
        // A folder that does not exist: making a spill file there would fail.
        var none = HistoryEvents.Builder(folder: folder)
        #expect(none.finished().isEmpty)
        let events = Self.events(count: 20, seed: 7)
        for event in events { none.add(event) }
        #expect(Array(none.finished()) == Self.inTimeOrder(events))
        #expect(none.finished().spillFailure == nil)
        // Past the budget in a folder where no file can be made, every event is held in memory, and it says why.
        var unsorted = HistoryEvents.Builder(memoryBytes: 64, folder: folder)
        for event in events { unsorted.add(event) }
        let held = unsorted.finished()
        #expect(Array(held) == Self.inTimeOrder(events))
        #expect(held.spillFailure?.hasPrefix("could not make a spill file in \(folder): ") == true)
    }
}
