import Testing
@testable import IAPRecon

/// Attribution finds a user's install by each id, as the earliest install of that id at or before
/// sign-up (the first in file order among installs at one time). One id shared by many installs
/// and users (a device farm's fixed IDFA) must cost one lookup per user, not one per install.
@Suite("Installs by id")
struct InstallIndexTests {
    typealias Install = AttributionReport.Install

    /// The rule read straight off its words: every install of the id, the earliest (time, then
    /// file order) of those at or before `ms`, or `best` when it is earlier.
    static func reference(_ ids: [RowFingerprint?], _ installs: [Install], of id: RowFingerprint?, atOrBefore ms: Int64, than best: Int?) -> Int? {
        guard let id else { return best }
        var found = best
        for index in installs.indices where ids[index] == id && installs[index].ms <= ms {
            if found.map({ (installs[index].ms, index) < (installs[$0].ms, $0) }) ?? true { found = index }
        }
        return found
    }

    @Test("the earliest install of an id at or before a time, against the rule itself, on seeded random installs")
    func earliestAsTheRuleSays() {
        var random = SplitMix64(state: 42)
        let names = (0..<7).map { RowFingerprint("id\($0)") }
        for round in 0..<200 {
            var index = AttributionReport.InstallIndex()
            var installs: [Install] = []
            var ids: [RowFingerprint?] = []
            for _ in 0..<Int(random.next() % 40) {
                // Few distinct times, so ties between installs of one id are common; some installs name no id.
                let id = random.next() % 5 == 0 ? nil : names[Int(random.next() % UInt64(names.count))]
                let ms = Int64(random.next() % 12) * 1_000
                installs.append(Install(ms: ms, slot: 0, appsflyerID: nil, file: 1, line: Int64(installs.count + 1)))
                ids.append(id)
                index.add(id, install: installs.count - 1, ms: ms)
            }
            for id in names + [nil] {
                for ms in stride(from: Int64(-1_000), through: 13_000, by: 500) {
                    let best: Int? = installs.isEmpty || random.next() % 3 != 0 ? nil : Int(random.next() % UInt64(installs.count))
                    #expect(index.earliest(of: id, atOrBefore: ms, in: installs, than: best)
                            == Self.reference(ids, installs, of: id, atOrBefore: ms, than: best), "round \(round)")
                }
            }
        }
    }
}
