import Foundation
import Testing
@testable import IAPRecon
import IAPReconGenerator

/// `iaprecon history`: one user's whole story in time order, from the store built
/// from `sample-data/` (CONTRACT.md §3; cases from sample-data/README.md).
@Suite("user history")
struct UserHistoryTests {
    /// Runs the pipeline on sample-data and opens its store. The scenario owns the folder.
    static func sampleStore() throws -> (Scenario, Database) {
        let scenario = try Scenario()
        _ = try Pipeline.run(RunOptions(
            input: SampleDataTests.sampleData, databasePath: scenario.databasePath, outFolder: scenario.out, jobs: 1,
            lineRules: LineRules(signatures: .testChain), reconcile: ReconcileSettings(), report: ReportSettings(outFolder: scenario.out)), progress: nil)
        return (scenario, try Store.open(path: scenario.databasePath))
    }

    // u_1034 signed up only in a line dated 2099, which is rejected: the store does not know it.
    static let allUsers = (1001...1035).filter { $0 != 1034 }.map { "u_\($0)" }

    @Test("a history looked up while a run holds the store, after a rebuild that did not finish, or before new input is reconciled says so; a settled store's does not")
    func caveats() throws {
        let (scenario, database) = try Self.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        #expect(try UserHistory.load(database, .user("u_1005")).caveat == nil)
        #expect(RunLock.holder(databasePath: scenario.databasePath) == nil, "the run that built the store let go of it")

        do {
            let lock = try RunLock(databasePath: scenario.databasePath, command: "join")
            defer { withExtendedLifetime(lock) {} }
            let holder = try #require(RunLock.holder(databasePath: scenario.databasePath))
            #expect(holder.hasPrefix("pid \(getpid()), iaprecon join, started "))
            let caveat = try #require(try UserHistory.load(database, .user("u_1005")).caveat)
            #expect(caveat.hasPrefix("a run is updating this store (pid \(getpid()), iaprecon join"))
        }
        #expect(RunLock.holder(databasePath: scenario.databasePath) == nil)

        try database.run("INSERT INTO dirty_keys VALUES ('user', 'u_1005')")
        #expect(try UserHistory.load(database, .user("u_1005")).caveat?.hasPrefix("input ingested since the last reconciliation") == true)
        try database.run("INSERT INTO dirty_keys VALUES ('all', '')")
        #expect(try UserHistory.load(database, .user("u_1005")).caveat?.hasPrefix("a full rebuild of this store started and did not finish") == true)
        #expect(RunLock.holder(databasePath: scenario.root + "/no-such-store.sqlite") == nil)
    }

    @Test("a store an older iaprecon wrote is refused by history, naming the run that upgrades it, rather than read with this build's queries; upgraded and reconciled, it tells the story a fresh store does")
    func olderSchemaRefused() throws {
        let (scenario, database) = try Self.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        let fresh = try UserHistory.load(database, .user("u_1005"))
        // Each user's install as the release before migration 12 kept it (that release's table text), whose columns
        // history reads no more.
        try database.execute("""
            DROP TABLE fct_user_installs;
            CREATE TABLE fct_user_installs (
              user_id TEXT PRIMARY KEY, install_ms INTEGER, media_source TEXT, campaign TEXT, matched_by TEXT NOT NULL, source TEXT
            ) WITHOUT ROWID;
            DELETE FROM schema_migrations WHERE id >= 12
            """)
        let older = try Store.open(path: scenario.databasePath, readOnly: true)
        let refused = #expect(throws: StoreError.self) { try UserHistory.load(older, .user("u_1005")) }
        #expect(refused?.reason == "it was written by an older iaprecon (schema version 11; this one reads \(Schema.latestVersion)) and is not "
                + "upgraded yet: the next 'iaprecon run' (or nightly) on it upgrades it; look again after that")
        // The next run upgrades it and reconciles it again (migration 12 has the report write every install anew).
        _ = try Pipeline.run(RunOptions(
            input: SampleDataTests.sampleData, databasePath: scenario.databasePath, outFolder: scenario.out, jobs: 1,
            lineRules: LineRules(signatures: .testChain), reconcile: ReconcileSettings(), report: ReportSettings(outFolder: scenario.out)), progress: nil)
        let upgraded = try UserHistory.load(older, .user("u_1005"))
        #expect(upgraded.events.map(\.event) == fresh.events.map(\.event))
        #expect(upgraded.findingIDs == fresh.findingIDs)
        #expect(upgraded.spent == fresh.spent)
        #expect(upgraded.caveat == nil)
    }

    @Test("a sign-up or MMP file ingested and not yet reported makes history say so, though no stage recomputes anything for it")
    func caveatForReportOnlyInputs() throws {
        for (path, line) in [
            ("registrations/late.jsonl", #"{"ts":"2026-11-20T10:00:00Z","user_id":"u_1005","method":"apple","idfv":"V9"}"#),
            ("attribution/late.csv", "Event Time,Event Name,IDFV\n2026-11-20 09:00:00,install,V9"),
        ] {
            let scenario = try Scenario()
            for file in try SourceFile.list(in: SampleDataTests.sampleData) { try scenario.link(file) }
            _ = try scenario.run()
            let database = try scenario.open()
            #expect(try UserHistory.load(database, .user("u_1005")).caveat == nil, "\(path)")
            try scenario.write(path, [line])
            _ = try Pipeline.ingest(input: scenario.input, database: database, jobs: 1, rules: Scenario.rules(asOf: nil), progress: nil)
            #expect(try UserHistory.load(database, .user("u_1005")).caveat?.hasPrefix("input ingested since the last reconciliation") == true,
                    "\(path)")
        }
    }

    @Test("u_1005: install, sign-up, order, purchase, its delivery, the replayed delivery to u_1006 and the cross-user finding, in time order")
    func crossUserDuplicate() throws {
        let (scenario, database) = try Self.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        let history = try UserHistory.load(database, .user("u_1005"))
        #expect(history.userID == "u_1005")
        #expect(history.events.map(\.event) == [
            "install", "registered", "order", "apple purchase", "delivered", "delivered", "FINDING duplicate_delivery",
        ])
        #expect(history.events.map(\.ms) == [
            "2026-11-24T19:40:02Z", "2026-11-24T19:41:15Z", "2026-11-24T20:04:51Z", "2026-11-24T20:05:12Z", "2026-11-24T20:05:16Z",
            "2026-11-25T09:30:14Z", "2026-11-25T09:30:14Z",
        ].map(Line.ms))
        let order = try #require(history.events.first { $0.event == "order" })
        #expect(order.id == "OrderID_1795550691000_gems300")
        #expect((order.amount, order.currency) == ("5.49", "EUR"))
        #expect(order.detail == "matched to 2000000630024936 by delivery")
        let purchase = try #require(history.events.first { $0.event == "apple purchase" })
        #expect(purchase.id == "2000000630024936")
        #expect(purchase.product == "com.example.gems300")
        #expect((purchase.amount, purchase.currency) == ("5.49", "EUR"))
        #expect(history.events.filter { $0.event == "delivered" }.map(\.detail) == ["to u_1005", "to u_1006"])
        #expect(history.events.filter { $0.event == "delivered" }.map(\.source) == [
            "server/server-2026-11-27.jsonl.gz:37", "server/server-2026-11-27.jsonl.gz:38",
        ])
        let finding = try #require(history.events.last)
        #expect(finding.detail == "critical: cross_user: delivered 2 times to u_1005, u_1006")
        #expect(history.findingIDs == [finding.id])
    }

    @Test("the header names up to 10 open findings by id; past that it counts them by kind, most first")
    func manyFindingsCounted() throws {
        let (scenario, database) = try Self.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        var history = try UserHistory.load(database, .user("u_1005"))
        // The findings line last, as for a customer no rejected line names.
        history.rejectedLines = []
        func findings(_ kinds: [String]) -> [UserHistory.OpenFinding] {
            kinds.enumerated().map { UserHistory.OpenFinding(findingID: "F-\($0.offset)", kind: $0.element, severity: "critical") }
        }
        history.findings = findings(Array(repeating: "lost_delivery", count: 10))
        let ten = try #require(history.headerLines(.utc).last)
        #expect(ten.hasPrefix("open findings: 10 (10 critical): F-0 lost_delivery, F-1 lost_delivery,"))
        history.findings = findings(Array(repeating: "lost_delivery", count: 8) + Array(repeating: "duplicate_delivery", count: 3)
                                    + ["orphan_delivery", "refunded_not_revoked"] + Array(repeating: "orphan_delivery", count: 2))
        #expect(history.headerLines(.utc).last
            == "open findings: 15 (15 critical): lost_delivery 8, duplicate_delivery 3, orphan_delivery 3, refunded_not_revoked 1; each is a FINDING line below")
    }

    @Test("u_1008: a yearly subscription, then a 50 % prorated refund of 3000 JPY and the refunded_not_revoked finding")
    func proratedRefund() throws {
        let (scenario, database) = try Self.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        let history = try UserHistory.load(database, .user("u_1008"))
        #expect(history.events.map(\.event) == [
            "install", "registered", "order", "apple purchase", "delivered", "refund", "FINDING refunded_not_revoked",
        ])
        let purchase = try #require(history.events.first { $0.event == "apple purchase" })
        #expect(purchase.id == "2000000629057412")
        #expect((purchase.amount, purchase.currency) == ("6000", "JPY"))
        #expect(purchase.detail == "Production, expires 2027-11-21T02:30:04.000Z")
        #expect(purchase.shownDetail == "Production, expires 2027-11-21 02:30:04")
        let losAngeles = try UserHistory.load(database, .user("u_1008"), zone: try #require(Zone("America/Los_Angeles")))
        let shown = try #require(losAngeles.events.first { $0.event == "apple purchase" })
        #expect(shown.shownDetail == "Production, expires 2027-11-20 18:30:04")
        #expect(shown.detail == purchase.detail)
        let refund = try #require(history.events.first { $0.event == "refund" })
        #expect(refund.ms == Line.ms("2026-11-27T05:12:00Z"))
        #expect(refund.id == "2000000629057412")
        #expect((refund.amount, refund.currency) == ("3000", "JPY"))
        #expect(refund.detail == "REFUND_PRORATED")
        #expect(history.events.last.map { ($0.amount, $0.currency) } ?? ("", "") == ("3000", "JPY"))
    }

    @Test("a story read a transaction at a time, its events sorted in runs on disk, is the story read at once")
    func readInParts() throws {
        let (scenario, database) = try Self.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        var lookups = Self.allUsers.map(UserHistory.Lookup.user)
        try database.forEach("SELECT transaction_id, original_transaction_id FROM int_transactions_resolved") { row in
            lookups += [.transaction(row.string(0)), .originalTransaction(row.string(1))]
        }
        let history = SQLiteHistoryStore(database)
        for lookup in lookups {
            let whole = try UserHistory.load(history, lookup)
            let inParts = try UserHistory.load(history, lookup, memoryBytes: 256, transactionsAtOnce: 1)
            #expect(inParts.events == whole.events, "\(lookup)")
            #expect(inParts.events.count == whole.events.count)
            #expect((inParts.spent, inParts.refunded, inParts.unconverted) == (whole.spent, whole.refunded, whole.unconverted), "\(lookup)")
            #expect(inParts.findings == whole.findings && inParts.findingIDs == whole.findingIDs, "\(lookup)")
            #expect(inParts.activeSubscriptions == whole.activeSubscriptions, "\(lookup)")
        }
        // Some stories span several transactions, findings and runs.
        #expect(try UserHistory.load(history, .user("u_1005"), memoryBytes: 256, transactionsAtOnce: 1).events.count > 5)
    }

    @Test("--since and --limit on a QA account's long story, read in parts and sorted on disk, show the latest events of the whole story and count the rest")
    func windowOfALongStory() throws {
        let scenario = try Scenario()
        // A QA account buys 300 times, an hour apart: each an order, its purchase and its delivery.
        var server: [String] = [], receipts: [String] = []
        for index in 0..<300 {
            let hour = String(format: "2026-11-%02dT%02d", 10 + index / 24, index % 24)
            server.append(Line.order(hour + ":00:00Z", "o\(index)", "qa", "gems"))
            receipts.append(Line.v2Receipt(hour + ":00:15Z", "qa", orderID: "o\(index)",
                                           transaction: Line.v2("t\(index)", "gems", purchase: hour + ":00:10Z")))
            server.append(Line.delivered(hour + ":00:20Z", "qa", "t\(index)", "gems", orderID: "o\(index)"))
        }
        try scenario.write("server/s.jsonl", server)
        try scenario.write("receipts/r.jsonl", receipts)
        _ = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        let database = try scenario.open()
        let whole = try UserHistory.load(database, .user("qa"))
        #expect(whole.events.count == 900)
        #expect(whole.eventsNotShown == 0)

        let sinceMs = Line.ms("2026-11-20T00:00:00Z")
        for (window, expected) in [
            (UserHistory.Window(sinceMs: sinceMs), Array(whole.events.filter { $0.ms >= sinceMs })),
            (UserHistory.Window(limit: 100), Array(whole.events.suffix(100))),
            (UserHistory.Window(sinceMs: sinceMs, limit: 100), Array(whole.events.suffix(100))),
            (UserHistory.Window(sinceMs: sinceMs, limit: 5_000), Array(whole.events.filter { $0.ms >= sinceMs })),
        ] {
            for (memoryBytes, atOnce) in [(HistoryEvents.memoryBytes, UserHistory.transactionsReadAtOnce), (256, 7)] {
                let shown = try UserHistory.load(SQLiteHistoryStore(database), .user("qa"), window: window, memoryBytes: memoryBytes, transactionsAtOnce: atOnce)
                #expect(Array(shown.events) == expected, "\(window) \(memoryBytes)")
                #expect(shown.events.count == expected.count)
                #expect(shown.eventsNotShown == 900 - expected.count)
                // The header still sums up the whole story.
                #expect((shown.spent, shown.refunded) == (whole.spent, whole.refunded))
                #expect(shown.findingIDs == whole.findingIDs)
            }
        }
    }

    @Test("every user's events are in time order, and a finding comes after what it is about at the same instant")
    func timeOrder() throws {
        let (scenario, database) = try Self.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        for user in Self.allUsers {
            let events = try UserHistory.load(database, .user(user)).events
            #expect(!events.isEmpty, "\(user)")
            #expect(zip(events, events.dropFirst()).allSatisfy { $0.ms <= $1.ms }, "\(user)")
            for (earlier, later) in zip(events, events.dropFirst()) where earlier.ms == later.ms {
                #expect(!(earlier.event.hasPrefix("FINDING") && !later.event.hasPrefix("FINDING")), "\(user): \(earlier.event) before \(later.event)")
            }
        }
    }

    @Test("--transaction, --order and --app-account-token resolve to the buyer: the matched order's user, not the one it was delivered to")
    func lookups() throws {
        let (scenario, database) = try Self.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        #expect(try UserHistory.load(database, .transaction("2000000630024936")).userID == "u_1005")
        #expect(try UserHistory.load(database, .transaction("2000000629057412")).userID == "u_1008")
        // u_1013 ordered and paid; the gems went to u_1014 (wrong_user_delivery).
        #expect(try UserHistory.load(database, .transaction("2000000630825123")).userID == "u_1013")
        #expect(try UserHistory.load(database, .order("OrderID_1795817400000_gems60")).userID == "u_1013")
        #expect(try UserHistory.load(database, .order("OrderID_1795228171000_premium_yearly")).userID == "u_1008")
        // An orphan delivery's transaction is known only to the server log.
        #expect(try UserHistory.load(database, .transaction("2000000629928815")).userID == "u_1010")
        // The token a purchase carries names its user: the user's whole story.
        let byToken = try UserHistory.load(database, .appAccountToken("7d3f8e2a-5b1c-4c9e-9f0a-3e6b2d1c8a47"))
        let owner = try #require(try Store.open(path: scenario.databasePath, readOnly: true)
            .scalar("SELECT user_id FROM int_transactions_resolved WHERE transaction_id = '2000000629887335'"))
        #expect(.text(byToken.userID) == owner)
        #expect(byToken.subject == "user \(byToken.userID)")
        #expect(byToken.events == (try UserHistory.load(database, .user(byToken.userID)).events))
    }

    @Test("--transaction tells that transaction's story only: its order, purchase, deliveries and findings, not the user's other events")
    func transactionStory() throws {
        let (scenario, database) = try Self.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        let story = try UserHistory.load(database, .transaction("2000000630024936"))
        #expect(story.subject == "transaction 2000000630024936")
        #expect(story.events.map(\.event) == ["order", "apple purchase", "delivered", "delivered", "FINDING duplicate_delivery"])
        #expect(story.events.filter { $0.event != "order" && !$0.event.hasPrefix("FINDING") }.allSatisfy { $0.id == "2000000630024936" })
        // u_1004's same-user duplicate is another transaction: not in this story, though it is critical too.
        #expect(story.findingIDs == ["F-abec3d02fb9b869a"])
        let user = try UserHistory.load(database, .user("u_1005"))
        #expect(user.events.count > story.events.count)
    }

    @Test("--original-transaction tells a subscription chain's story: every period, every holder's delivery, the chain's finding")
    func chainStory() throws {
        let (scenario, database) = try Self.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        let chain = try UserHistory.load(database, .originalTransaction("2000000629430075"))
        #expect(chain.subject == "subscription chain 2000000629430075")
        #expect(chain.events.filter { $0.event == "delivered" }.map(\.detail) == ["to u_1016", "to u_1017"])
        #expect(chain.findings.map(\.kind) == ["shared_apple_id_subscription"])
        #expect(throws: UserHistory.NotFound.self) { try UserHistory.load(database, .originalTransaction("2000000630024999")) }
        // A renewed chain: every period, the first purchase (which names itself as the original) included.
        let renewed = try UserHistory.load(database, .originalTransaction("2000000606687096"))
        #expect(renewed.events.filter { $0.event == "apple purchase" }.map(\.id)
                == ["2000000606687096", "2000000614711601", "2000000622487373", "2000000630522840"])
        // Near miss: a renewal's own id is no chain.
        #expect(throws: UserHistory.NotFound.self) { try UserHistory.load(database, .originalTransaction("2000000614711601")) }
    }

    @Test("a user's story shows ten other users' deliveries of each of their transactions and counts the rest; the transaction's story lists all")
    func otherUsersDeliveriesCapped() throws {
        let scenario = try Scenario()
        // One transaction delivered to 14 users a minute apart; another to u_0 and exactly ten others.
        let shared = (0..<14).map { Line.delivered(String(format: "2026-11-20T10:%02d:00Z", $0), "u_\($0)", "2000000000000001", "gems") }
        let few = (0..<11).map { Line.delivered(String(format: "2026-11-21T10:%02d:00Z", $0), "u_\($0)", "2000000000000002", "gems") }
        _ = try scenario.write("server/s.jsonl", shared + few)
        _ = try scenario.run(asOf: "2026-11-22T00:00:00Z")
        let database = try scenario.open()
        func deliveries(_ story: UserHistory, of transactionID: String) -> [String] {
            story.events.filter { $0.id == transactionID && ["delivered", "more deliveries"].contains($0.event) }
                .map { $0.event == "delivered" ? $0.detail : "\($0.event) at \(Timestamp.iso8601($0.ms)): \($0.detail)" }
        }
        let last = try UserHistory.load(database, .user("u_13"))
        #expect(deliveries(last, of: "2000000000000001") == (0..<10).map { "to u_\($0)" } + [
            "more deliveries at 2026-11-20T10:10:00.000Z: 3 more to other users; iaprecon history --transaction 2000000000000001 lists them",
            "to u_13",
        ])
        let first = try UserHistory.load(database, .user("u_0"))
        #expect(deliveries(first, of: "2000000000000001") == (0..<11).map { "to u_\($0)" } + [
            "more deliveries at 2026-11-20T10:11:00.000Z: 3 more to other users; iaprecon history --transaction 2000000000000001 lists them",
        ])
        // Near miss: ten others are all shown, with no line counting more.
        #expect(deliveries(first, of: "2000000000000002") == (0..<11).map { "to u_\($0)" })
        let story = try UserHistory.load(database, .transaction("2000000000000001"))
        #expect(deliveries(story, of: "2000000000000001") == (0..<14).map { "to u_\($0)" })
    }

    @Test("of other users' deliveries at one instant, a user's story shows the first ten in file order: line 10 after line 9")
    func otherUsersDeliveriesAtOneInstantInFileOrder() throws {
        let scenario = try Scenario()
        // Line 1 is the buyer's delivery; lines 2 to 13, twelve other users' restores in one second.
        let restores = (2...13).map { Line.delivered("2026-11-20T10:00:00Z", String(format: "u_line%02d", $0), "2000000000000001", "gems") }
        _ = try scenario.write("server/s.jsonl", [Line.delivered("2026-11-20T09:00:00Z", "u_buyer", "2000000000000001", "gems")] + restores)
        // Near miss: the same restores a second apart, where time alone orders them.
        let apart = (2...13).map { Line.delivered(String(format: "2026-11-21T10:00:%02dZ", $0), String(format: "u_line%02d", $0), "2000000000000002", "gems") }
        _ = try scenario.write("server/t.jsonl", [Line.delivered("2026-11-21T09:00:00Z", "u_buyer", "2000000000000002", "gems")] + apart)
        _ = try scenario.run(asOf: "2026-11-22T00:00:00Z")
        let story = try UserHistory.load(try scenario.open(), .user("u_buyer"))
        for transactionID in ["2000000000000001", "2000000000000002"] {
            let shown = story.events.filter { $0.id == transactionID && ["delivered", "more deliveries"].contains($0.event) }
                .map { $0.event == "delivered" ? $0.detail : String($0.detail.prefix { $0 != ";" }) }
            #expect(shown == ["to u_buyer"] + (2...11).map { String(format: "to u_line%02d", $0) } + ["2 more to other users"], "\(transactionID)")
        }
    }

    @Test("file order at one instant is by path bytes also where two paths differ only in how an accent is encoded")
    func otherUsersDeliveriesInPathByteOrder() throws {
        let scenario = try Scenario()
        let restores = { (transactionID: String, prefix: String) in
            (0..<7).map { Line.delivered("2026-11-20T10:00:00Z", "u_\(prefix)\($0)", transactionID, "gems") }
        }
        // "café" decomposed (e + U+0301: bytes 65 CC 81) sorts before "café" precomposed (C3 A9), though
        // Swift finds the two names equal: the decomposed file's seven lines come first.
        _ = try scenario.write("server/cafe\u{301}.jsonl", restores("2000000000000001", "d"))
        _ = try scenario.write("server/caf\u{E9}.jsonl", [Line.delivered("2026-11-20T09:00:00Z", "u_buyer", "2000000000000001", "gems")]
            + restores("2000000000000001", "c"))
        // Near miss: two names that differ as text too.
        _ = try scenario.write("server/b.jsonl", restores("2000000000000002", "d"))
        _ = try scenario.write("server/c.jsonl", [Line.delivered("2026-11-20T09:00:00Z", "u_buyer", "2000000000000002", "gems")]
            + restores("2000000000000002", "c"))
        _ = try scenario.run(asOf: "2026-11-22T00:00:00Z")
        let story = try UserHistory.load(try scenario.open(), .user("u_buyer"))
        for transactionID in ["2000000000000001", "2000000000000002"] {
            let shown = story.events.filter { $0.id == transactionID && ["delivered", "more deliveries"].contains($0.event) }
                .map { $0.event == "delivered" ? $0.detail : String($0.detail.prefix { $0 != ";" }) }
            #expect(shown == ["to u_buyer"] + (0..<7).map { "to u_d\($0)" } + (0..<3).map { "to u_c\($0)" } + ["4 more to other users"],
                    "\(transactionID)")
        }
    }

    @Test("each order shows the transaction the join matched it to, also where two order ids differ only in how an accent is encoded")
    func ordersShowTheirOwnMatch() throws {
        let scenario = try Scenario()
        // Two orders whose ids Swift finds equal (é precomposed, then decomposed), and a near miss
        // whose ids differ as text too; each delivered with its own transaction.
        let orders = [("ord\u{E9}", "2000000000000001"), ("orde\u{301}", "2000000000000002"), ("ord-a", "2000000000000003"),
                      ("ord-b", "2000000000000004")]
        var server: [String] = [], receipts: [String] = []
        for (index, (orderID, transactionID)) in orders.enumerated() {
            let minute = String(format: "%02d", index)
            server += [Line.order("2026-11-20T10:\(minute):00Z", orderID, "u_1", "gems"),
                       Line.delivered("2026-11-20T10:\(minute):30Z", "u_1", transactionID, "gems", orderID: orderID)]
            receipts.append(Line.v2Receipt("2026-11-20T10:\(minute):20Z", "u_1", orderID: orderID,
                                           transaction: Line.v2(transactionID, "gems", purchase: "2026-11-20T10:\(minute):10Z")))
        }
        _ = try scenario.write("server/s.jsonl", server)
        _ = try scenario.write("receipts/r.jsonl", receipts)
        _ = try scenario.run(asOf: "2026-11-22T00:00:00Z")
        let story = try UserHistory.load(try scenario.open(), .user("u_1"))
        let shown = story.events.filter { $0.event == "order" }.map(\.detail)
        #expect(shown == orders.map { "matched to \($0.1) by delivery" })
    }

    @Test("a purchase's source is its first verifying sighting in file order, as the merge takes them, also where a later file's path sorts first")
    func purchaseSourceIsTheFirstSighting() throws {
        let scenario = try Scenario()
        _ = try InputGenerator.write(GeneratorOptions(users: 200, days: 8, seed: 11), to: scenario.input)
        _ = try scenario.run()
        // A later receipts file whose path sorts before the others: its copies of the last day's
        // sightings come first in file order, though their file id is the largest.
        let receipts = scenario.input + "/receipts"
        let last = try #require(try FileManager.default.contentsOfDirectory(atPath: receipts).filter { $0.hasSuffix(".jsonl") }.sorted().last)
        let lines = try String(contentsOfFile: receipts + "/" + last, encoding: .utf8).split(separator: "\n").map(String.init)
        _ = try scenario.write("receipts/a-copy.jsonl", Array(lines.dropFirst()))
        _ = try scenario.run()
        let database = try scenario.open()
        var files = try StoredLedger.sourceFiles(database)
        var (purchases, fromTheCopy, pastARefundNotice) = (0, 0, 0)
        var users: [String] = []
        try database.forEach("SELECT DISTINCT user_id FROM int_transactions_resolved WHERE user_id IS NOT NULL ORDER BY 1") { users.append($0.string(0)) }
        let aboutARefund: Set<String> = ["REFUND", "REVOKE", "CANCEL", "REFUND_REVERSED", "REFUND_DECLINED", "CONSUMPTION_REQUEST"]
        for user in users {
            for event in try UserHistory.load(database, .user(user)).events where event.event == "apple purchase" {
                // Its sightings in file order, as the merge reads them; those of a notification about a refund last.
                var sightings: [(notice: Bool, place: Int32, line: Int64, item: Int64, file: Int64)] = []
                try database.forEach("""
                    SELECT file_id, line, item, origin, notification_type, revocation_ms FROM raw_apple__transactions WHERE transaction_id = ?1
                    """, [.text(event.id)]) { row in
                    let type = try AppleNotificationType.codes.read(row, 4)
                    let notice = row.int(3) == TransactionOrigin.notification.code && (row.optionalInt(5) != nil || aboutARefund.contains(type ?? ""))
                    sightings.append((notice, try #require(files.place(of: row.int(0))), row.int(1), row.int(2), row.int(0)))
                }
                let inFileOrder = sightings.sorted { ($0.place, $0.line, $0.item) < ($1.place, $1.line, $1.item) }
                let first = try #require(inFileOrder.first { !$0.notice } ?? inFileOrder.first)
                #expect(event.source == files.text(files.line(file: first.file, first.line)), "\(event.id)")
                // The merge's first is that one, unless a refund notice comes before it.
                let merged = try #require(try AppleTransactions.merged(event.id, in: database)?.sources.first)
                if inFileOrder.first?.notice == true, !first.notice {
                    pastARefundNotice += 1
                    #expect(event.source != files.text(files.line(file: merged.file, merged.line)), "\(event.id)")
                } else {
                    #expect(event.source == files.text(files.line(file: merged.file, merged.line)), "\(event.id)")
                }
                purchases += 1
                if event.source.contains("a-copy.jsonl") { fromTheCopy += 1 }
            }
        }
        #expect(purchases > 100)
        #expect(fromTheCopy > 5, "the copy's sightings, first in path order, are the sources")
        #expect(pastARefundNotice > 3, "purchases whose refund notification comes first in path order cite what verified them")
    }

    @Test("every user a finding involves sees it: the account that received a duplicate or a wrong-user delivery, each holder of a shared subscription")
    func everyInvolvedUserSeesTheFinding() throws {
        let (scenario, database) = try Self.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        var involved: [String: Set<String>] = [:]
        // Apple's unverified sales concern a day, product and country, no user.
        try database.forEach("SELECT finding_id, kind FROM fct_findings WHERE kind != 'unverified_apple_sales'") {
            involved[$0.string(1), default: []].insert($0.string(0))
        }
        func kinds(_ user: String) throws -> [String] { try UserHistory.load(database, .user(user)).findings.map(\.kind) }
        #expect(try kinds("u_1006") == ["duplicate_delivery"])          // received u_1005's gems again
        #expect(try kinds("u_1005") == ["duplicate_delivery"])
        #expect(try kinds("u_1017") == ["shared_apple_id_subscription"]) // the second holder
        #expect(try kinds("u_1016") == ["shared_apple_id_subscription"])
        #expect(try kinds("u_1014").contains("wrong_user_delivery"))      // got u_1013's order
        // Near miss: a user who only bought and got their own goods sees nothing.
        #expect(try kinds("u_1001").isEmpty)
        // Each finding reaches at least one user's story.
        let seen = Set(try Self.allUsers.flatMap { try UserHistory.load(database, .user($0)).findingIDs })
        #expect(seen == involved.values.reduce(Set<String>()) { $0.union($1) })
    }

    @Test("the header totals what the user bought and got back in the reporting currency, and lists subscriptions running past as-of")
    func headerTotals() throws {
        let (scenario, database) = try Self.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        // 6000 JPY at 0.006623, half of it refunded (REFUND_PRORATED): the yearly plan is refunded, so not active.
        // Each purchase rounds to the cent, as its transactions.csv row does: 39.738 is 39.74, 19.869 is 19.87.
        let u1008 = try UserHistory.load(database, .user("u_1008"))
        #expect((u1008.spent, u1008.refunded, u1008.reportingCurrency) == ("39.74", "19.87", "USD"))
        #expect(u1008.activeSubscriptions.isEmpty)
        // The buyer of a shared subscription spent its price; the other holder spent nothing, and both can use it.
        let buyer = try UserHistory.load(database, .user("u_1016")), holder = try UserHistory.load(database, .user("u_1017"))
        #expect((buyer.spent, holder.spent) == ("4.99", "0"))
        let expected = [UserHistory.ActiveSubscription(originalTransactionID: "2000000629430075", productID: "com.example.premium.monthly",
                                                       expiresMs: Line.ms("2026-12-22T13:00:25Z"), environment: "Production")]
        #expect(buyer.activeSubscriptions == expected)
        #expect(holder.activeSubscriptions == expected)
        #expect(holder.headerLines(.utc)[2] == "active subscriptions: com.example.premium.monthly until 2026-12-22 13:00:25 (chain 2000000629430075)")
        // The receiver of a duplicate did not pay for it.
        #expect(try UserHistory.load(database, .user("u_1006")).spent == "0")
    }

    @Test("after an upgrade the active subscription is the chain's latest period, though the yearly one it replaced would have run longer")
    func activeSubscriptionAfterUpgrade() throws {
        let scenario = try Scenario()
        try scenario.write("catalog.csv", [
            "product_id,type,subscription_group,price,currency",
            "pro.yearly,auto_renewable,premium,79.99,USD",
            "proplus.monthly,auto_renewable,premium,14.99,USD",
        ])
        // A yearly period to 2027-03-05, upgraded on 2026-09-20 to a higher level billed monthly, renewed once.
        let periods = [
            ("4000000000000900", "pro.yearly", "2026-03-05T09:30:00Z", "2027-03-05T09:30:00Z", 79990),
            ("4000000000000901", "proplus.monthly", "2026-09-20T12:00:00Z", "2026-10-20T12:00:00Z", 14990),
            ("4000000000000902", "proplus.monthly", "2026-10-20T12:00:00Z", "2026-11-20T12:00:00Z", 14990),
        ]
        try scenario.write("receipts/r.jsonl", periods.map { id, product, purchase, expires, price in
            Line.v2Receipt(purchase, "u_sub", transaction: Line.v2(id, product, purchase: purchase, original: "4000000000000900",
                                                                   expires: expires, price: price))
        })
        try scenario.write("server/s.jsonl", periods.map { id, product, purchase, _, _ in Line.delivered(purchase, "u_sub", id, product) })
        _ = try scenario.run(asOf: "2026-11-10T00:00:00Z")
        let expected = [UserHistory.ActiveSubscription(originalTransactionID: "4000000000000900", productID: "proplus.monthly",
                                                       expiresMs: Line.ms("2026-11-20T12:00:00Z"), environment: "Production")]
        let database = try scenario.open()
        #expect(try UserHistory.load(database, .user("u_sub")).activeSubscriptions == expected)
        #expect(try UserHistory.load(database, .originalTransaction("4000000000000900")).activeSubscriptions == expected)
    }

    @Test("an unknown user, transaction or order throws NotFound with a message naming it", arguments: [
        (UserHistory.Lookup.user("u_9999"), "no user 'u_9999' in the store"),
        (UserHistory.Lookup.transaction("2000000000000000"), "no transaction '2000000000000000' in the store"),
        (UserHistory.Lookup.order("OrderID_0_nothing"), "no order 'OrderID_0_nothing' in the store"),
    ])
    func notFound(lookup: UserHistory.Lookup, message: String) throws {
        let (scenario, database) = try Self.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        let error = #expect(throws: UserHistory.NotFound.self) { try UserHistory.load(database, lookup) }
        #expect(error?.description == message)
    }

    @Test("IDFAs are masked to their last four characters; no field shows a full IDFA")
    func idfaMasked() throws {
        let (scenario, database) = try Self.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        var idfas: [String] = []
        try database.forEach("SELECT idfa FROM raw_registrations__users WHERE idfa IS NOT NULL") { idfas.append($0.string(0)) }
        #expect(idfas.count == 4)
        let registered = try #require(try UserHistory.load(database, .user("u_1030")).events.first { $0.event == "registered" })
        #expect(registered.detail == "method guest, country US, idfa …B682")
        for user in Self.allUsers {
            for event in try UserHistory.load(database, .user(user)).events {
                for field in Self.fields(event) {
                    for idfa in idfas {
                        #expect(!field.contains(idfa), "\(user) \(event.event) shows the IDFA \(idfa)")
                        #expect(!field.contains(String(idfa.prefix(8))), "\(user) \(event.event) shows the start of the IDFA \(idfa)")
                    }
                }
            }
        }
    }

    @Test("no field carries a JWS, a receipt blob or any long base64 text")
    func noBlobs() throws {
        let (scenario, database) = try Self.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        for user in Self.allUsers {
            for event in try UserHistory.load(database, .user(user)).events {
                for field in Self.fields(event) {
                    #expect(!field.contains("eyJ"), "\(user) \(event.event): \(field.prefix(60))")
                    #expect(Self.longestBase64Run(field) < 64, "\(user) \(event.event): \(field.prefix(60))")
                }
            }
        }
    }

    @Test("an install time is read in --mmp-tz, as the attribution report reads it")
    func installTimeInMMPZone() throws {
        let scenario = try Scenario()
        try AttributionReportTests.Fixture.mmp(scenario, [
            AttributionReportTests.Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "googleadwords_int", campaign: "C",
                                                  appsflyerID: "af1", cuid: "u1"),
        ])
        try scenario.write("registrations/r.jsonl", [AttributionReportTests.Fixture.signup("2026-11-09T23:30:00Z", "u1")])
        _ = try Pipeline.run(RunOptions(
            input: scenario.input, databasePath: scenario.databasePath, outFolder: scenario.out, jobs: 1,
            lineRules: LineRules(signatures: .testChain), reconcile: ReconcileSettings(asOfMs: Line.ms("2026-11-30T00:00:00Z"), mmpZone: try #require(Zone("Asia/Tokyo"))),
            report: ReportSettings(outFolder: scenario.out)), progress: nil)
        let history = try UserHistory.load(try scenario.open(), .user("u1"))
        // 08:00 in Tokyo is 23:00 UTC the day before: the install comes before the sign-up.
        #expect(history.events.map(\.event) == ["install", "registered"])
        #expect(history.events.first?.ms == Line.ms("2026-11-09T23:00:00Z"))
    }

    @Test("the install a user was joined to by IDFV or IDFA is part of the story, as one joined by Customer User ID or AppsFlyer ID is")
    func installJoinedByDeviceID() throws {
        let (scenario, database) = try Self.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        // sample-data/README.md: u_1003 joined by appsflyer_id, u_1029 by idfv, u_1030 by idfa.
        #expect(try UserHistory.load(database, .user("u_1003")).events.first?.source == "attribution/installs_2026-11-20_2026-11-29.csv:10")
        #expect(try UserHistory.load(database, .user("u_1029")).events.first?.source == "attribution/installs_2026-11-20_2026-11-29.csv:21")
        #expect(try UserHistory.load(database, .user("u_1030")).events.first?.source == "attribution/installs_2026-11-20_2026-11-29.csv:26")
    }

    static func fields(_ event: UserHistory.Event) -> [String] {
        [event.event, event.id, event.product, event.amount, event.detail, event.source]
    }

    /// The longest run of base64 / base64url characters in `text`.
    static func longestBase64Run(_ text: String) -> Int {
        var longest = 0
        var run = 0
        for scalar in text.unicodeScalars {
            let isBase64 = (scalar.properties.isASCIIHexDigit || ("A"..."Z").contains(scalar) || ("a"..."z").contains(scalar)
                || ("0"..."9").contains(scalar) || "+/=_-".unicodeScalars.contains(scalar))
            run = isBase64 ? run + 1 : 0
            longest = max(longest, run)
        }
        return longest
    }
}
