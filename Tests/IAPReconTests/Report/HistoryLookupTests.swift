import Foundation
import Testing
@testable import IAPRecon

/// `iaprecon history` as support uses it: a key of the wrong kind, a key several users share,
/// a token in capitals, the rejected lines that name the customer, a refund Apple reversed.
@Suite("history lookups")
struct HistoryLookupTests {
    static func message(_ database: Database, _ lookup: UserHistory.Lookup) -> String? {
        do {
            _ = try UserHistory.load(database, lookup)
            return nil
        } catch {
            return (error as? UserHistory.NotFound)?.description
        }
    }

    @Test("a key of another kind says what it is and the option that looks it up, not that the store has no such customer")
    func keyOfAnotherKind() throws {
        let (scenario, database) = try UserHistoryTests.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        #expect(Self.message(database, .user("2000000630024936"))
                == "'2000000630024936' is a transaction, not a user: iaprecon history --transaction 2000000630024936")
        #expect(Self.message(database, .user("OrderID_1795550691000_gems300"))
                == "'OrderID_1795550691000_gems300' is an order, not a user: iaprecon history --order OrderID_1795550691000_gems300")
        #expect(Self.message(database, .transaction("OrderID_1795550691000_gems300"))
                == "'OrderID_1795550691000_gems300' is an order, not a transaction: iaprecon history --order OrderID_1795550691000_gems300")
        #expect(Self.message(database, .order("2000000630024936"))
                == "'2000000630024936' is a transaction, not an order: iaprecon history --transaction 2000000630024936")
        #expect(Self.message(database, .transaction("u_1005")) == "'u_1005' is a user, not a transaction: iaprecon history u_1005")
        // A renewal given as its chain names the chain.
        #expect(Self.message(database, .originalTransaction("2000000614711601")) == """
            '2000000614711601' is a renewal in subscription chain 2000000606687096, not a chain: \
            iaprecon history --original-transaction 2000000606687096, or iaprecon history --transaction 2000000614711601 for this renewal alone
            """)
        // Near misses: a key of no kind is still not found, and one of the kind asked is found.
        #expect(Self.message(database, .user("u_9999")) == "no user 'u_9999' in the store")
        #expect(Self.message(database, .originalTransaction("2000000630024999")) == "no subscription chain '2000000630024999' in the store")
        #expect(Self.message(database, .user("u_1005")) == nil)
    }

    @Test("a device id (IDFV, IDFA, AppsFlyer ID) given as the key names the user whose sign-up gave it, masked as the story shows it")
    func deviceIDNamesItsUser() throws {
        let (scenario, database) = try UserHistoryTests.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        // u_1005 signed up with IDFV 690ED90C-…-373BA8A596DA and AppsFlyer ID 1795549202000-5007017; u_1007 with IDFA 521E8E99-…-7120914E6681.
        let idfv = "690ED90C-8246-4894-A504-373BA8A596DA"
        #expect(Self.message(database, .user(idfv)) == "IDFV …96DA is on the sign-up of user u_1005, not a user: iaprecon history u_1005")
        // Apple's ids are in capitals; one typed in lower case is the same id.
        #expect(Self.message(database, .user(idfv.lowercased())) == "IDFV …96da is on the sign-up of user u_1005, not a user: iaprecon history u_1005")
        #expect(Self.message(database, .appAccountToken(idfv))
                == "IDFV …96DA is on the sign-up of user u_1005, not an app account token: iaprecon history u_1005")
        #expect(Self.message(database, .user("521E8E99-D4D7-479A-86F7-7120914E6681"))
                == "IDFA …6681 is on the sign-up of user u_1007, not a user: iaprecon history u_1007")
        #expect(Self.message(database, .order("1795549202000-5007017"))
                == "AppsFlyer ID …7017 is on the sign-up of user u_1005, not an order: iaprecon history u_1005")
        // Near misses: a UUID no sign-up gave is not found, and no message shows a device id whole.
        #expect(Self.message(database, .user("690ED90C-8246-4894-A504-373BA8A596DB")) == "no user '690ED90C-8246-4894-A504-373BA8A596DB' in the store")
        #expect(Self.message(database, .user(idfv))?.contains("690ED90C") == false)
    }

    @Test("a user id that differs only in case from a user's names that user, as an email-like id is often typed")
    func userIDInAnotherCase() throws {
        let scenario = try Scenario()
        try scenario.write("registrations/r.jsonl", [
            #"{"ts":"2026-11-20T10:00:00Z","user_id":"Alice.Smith@Example.com","method":"email"}"#,
            #"{"ts":"2026-11-20T11:00:00Z","user_id":"bob@example.com","method":"email"}"#,
            #"{"ts":"2026-11-20T12:00:00Z","user_id":"BOB@example.com","method":"email"}"#,
        ])
        try scenario.write("server/s.jsonl", [Line.order("2026-11-20T10:05:00Z", "o1", "Alice.Smith@Example.com", "gems")])
        _ = try scenario.run(asOf: "2026-11-21T00:00:00Z")
        let database = try scenario.open()
        #expect(Self.message(database, .user("alice.smith@example.com"))
                == "no user 'alice.smith@example.com' in the store; user Alice.Smith@Example.com differs only in case: "
                + "iaprecon history Alice.Smith@Example.com")
        #expect(Self.message(database, .user("Bob@Example.com")) == "no user 'Bob@Example.com' in the store; 2 users differ from it only in case: "
                + "BOB@example.com (iaprecon history BOB@example.com), bob@example.com (iaprecon history bob@example.com)")
        // Near misses: the id as stored is found, and one that differs in more than case is not found.
        #expect(Self.message(database, .user("Alice.Smith@Example.com")) == nil)
        #expect(Self.message(database, .user("alice.smith@example.org")) == "no user 'alice.smith@example.org' in the store")
    }

    @Test("the table says in words what support would misread: a family member's purchase, a test purchase, a refund's kind, an order nothing paid for; scripts keep Apple's words")
    func wordsForSupport() throws {
        let (scenario, database) = try UserHistoryTests.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        func shown(_ user: String, _ event: String) throws -> [String] {
            try UserHistory.load(database, .user(user)).events.filter { $0.event == event }.map(\.shownDetail)
        }
        func detail(_ user: String, _ event: String) throws -> [String] {
            try UserHistory.load(database, .user(user)).events.filter { $0.event == event }.map(\.detail)
        }
        // u_1009 got removeads through Family Sharing (3.99 USD on the row: the organiser's price), then the organiser stopped sharing.
        #expect(try shown("u_1009", "apple purchase") == ["Production, family shared: a family member bought it, this user was not charged"])
        #expect(try shown("u_1009", "refund") == ["FAMILY_REVOKE: Apple took back the family-shared access; nothing was refunded to this user"])
        #expect(try shown("u_1007", "refund") == ["REFUND_FULL: Apple refunded the whole price"])
        #expect(try shown("u_1008", "refund") == ["REFUND_PRORATED: Apple refunded part of the price"])
        // u_1011's TestFlight purchase.
        #expect(try shown("u_1011", "apple purchase") == ["Sandbox: a test purchase, nobody was charged"])
        // u_1023 paid, but no receipt ever reached the server: the order is linked to no Apple purchase.
        #expect(try shown("u_1023", "order") == ["no transaction matched: no receipt, notification or delivery links an Apple purchase to this order"])
        // Scripts keep the words as they were.
        #expect(try detail("u_1009", "apple purchase") == ["Production, family shared"])
        #expect(try detail("u_1009", "refund") == ["FAMILY_REVOKE"])
        #expect(try detail("u_1011", "apple purchase") == ["Sandbox"])
        #expect(try detail("u_1023", "order") == ["no transaction matched"])
        // Near misses: a production purchase of one's own, and a matched order, read as before.
        #expect(try shown("u_1005", "apple purchase") == ["Production"])
        #expect(try shown("u_1005", "order") == ["matched to 2000000630024936 by delivery"])
    }

    @Test("an app account token is found in capitals as in lower case, as the same story")
    func tokenInAnyCase() throws {
        let (scenario, database) = try UserHistoryTests.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        let lower = try UserHistory.load(database, .appAccountToken("7d3f8e2a-5b1c-4c9e-9f0a-3e6b2d1c8a47"))
        let upper = try UserHistory.load(database, .appAccountToken("7D3F8E2A-5B1C-4C9E-9F0A-3E6B2D1C8A47"))
        #expect(upper.subject == lower.subject)
        #expect(upper.events == lower.events)
        #expect(Self.message(database, .appAccountToken("7d3f8e2a-5b1c-4c9e-9f0a-3e6b2d1c8a48"))
                == "no app account token '7d3f8e2a-5b1c-4c9e-9f0a-3e6b2d1c8a48' in the store")
    }

    /// One token on two users' purchases; one order id logged by two users; a refund Apple reversed.
    static func sharedKeysStore() throws -> (Scenario, Database) {
        let scenario = try Scenario()
        let token = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-06T10:00:12Z", "tok_a", transaction: Line.v2("3300000000000001", "gems", purchase: "2026-11-06T10:00:10Z", token: token)),
            Line.v2Receipt("2026-11-06T11:00:12Z", "tok_b", transaction: Line.v2("3300000000000002", "gems", purchase: "2026-11-06T11:00:10Z", token: token)),
            Line.v2Receipt("2026-11-07T10:00:12Z", "rev", transaction: Line.v2("3400000000000001", "gems", purchase: "2026-11-07T10:00:10Z")),
        ])
        try scenario.write("server/s.jsonl", [
            Line.delivered("2026-11-06T10:00:15Z", "tok_a", "3300000000000001", "gems"),
            Line.delivered("2026-11-06T11:00:15Z", "tok_b", "3300000000000002", "gems"),
            Line.delivered("2026-11-07T10:00:15Z", "rev", "3400000000000001", "gems"),
            Line.order("2026-11-11T10:00:00Z", "ORD-SAME", "dupord_a", "gems"),
            Line.order("2026-11-11T11:00:00Z", "ORD-SAME", "dupord_b", "gems"),
        ])
        try scenario.write("registrations/signups.jsonl", [#"{"ts":"2026-11-06T00:00:00Z","user_id":"solo","method":"email","country":"US"}"#])
        try scenario.write("notifications/n.jsonl", [
            Line.notification("REFUND", uuid: "11111111-1111-4111-8111-111111111111", signed: "2026-11-08T10:00:01Z",
                              transaction: Line.v2("3400000000000001", "gems", purchase: "2026-11-07T10:00:10Z",
                                                   revocation: "2026-11-08T10:00:00Z", revocationType: "REFUND_FULL")),
            Line.notification("REFUND_REVERSED", uuid: "22222222-2222-4222-8222-222222222222", signed: "2026-11-09T10:00:01Z",
                              transaction: Line.v2("3400000000000001", "gems", purchase: "2026-11-07T10:00:10Z")),
        ])
        _ = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        return (scenario, try scenario.open())
    }

    @Test("a token on several users' purchases lists the users and how to look each up, and shows every purchase it is on")
    func tokenOfSeveralUsers() throws {
        let (scenario, database) = try Self.sharedKeysStore()
        defer { withExtendedLifetime(scenario) {} }
        let story = try UserHistory.load(database, .appAccountToken("aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"))
        #expect(story.subject == "app account token aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee")
        #expect(story.headerLines(.utc).contains(
            "2 users' purchases carry this token: tok_a (iaprecon history tok_a), tok_b (iaprecon history tok_b)"))
        #expect(story.events.filter { $0.event == "apple purchase" }.map(\.id) == ["3300000000000001", "3300000000000002"])
        // Near miss: a token one user's purchases carry is that user's story.
        let (sample, sampleDatabase) = try UserHistoryTests.sampleStore()
        defer { withExtendedLifetime(sample) {} }
        let single = try UserHistory.load(sampleDatabase, .appAccountToken("7d3f8e2a-5b1c-4c9e-9f0a-3e6b2d1c8a47"))
        #expect(single.subject.hasPrefix("user "))
        #expect(!single.headerLines(.utc).contains { $0.contains("carry this token") })
    }

    @Test("an order id two users logged shows the first's story and names the other, with how to look them up")
    func orderOfTwoUsers() throws {
        let (scenario, database) = try Self.sharedKeysStore()
        defer { withExtendedLifetime(scenario) {} }
        let story = try UserHistory.load(database, .order("ORD-SAME"))
        #expect(story.subject == "user dupord_a")
        #expect(story.headerLines(.utc).contains(
            "order ORD-SAME was logged by 2 users; this is the story of dupord_a, whose line came first; also dupord_b (iaprecon history dupord_b)"))
        let (sample, sampleDatabase) = try UserHistoryTests.sampleStore()
        defer { withExtendedLifetime(sample) {} }
        let single = try UserHistory.load(sampleDatabase, .order("OrderID_1795550691000_gems300"))
        #expect(!single.headerLines(.utc).contains { $0.contains("was logged by") })
    }

    @Test("an order id or a token that many users share names the first ten users and counts the rest, so the story stays in sight; near miss: ten are all named")
    func keySharedByManyUsers() throws {
        let token = "aaaaaaaa-bbbb-4ccc-8ddd-ffffffffffff"
        func users(_ count: Int) -> [String] { (1...count).map { "u" + ($0 < 10 ? "0" : "") + String($0) } }
        for count in [10, 13] {
            let scenario = try Scenario()
            try scenario.catalog()
            // Each logs the placeholder order id "0" and buys with the app's one fixed token.
            try scenario.write("server/s.jsonl", users(count).enumerated().flatMap { index, user in
                [Line.order("2026-11-01T10:00:\(10 + index)Z", "0", user, "gems60"),
                 Line.delivered("2026-11-01T11:00:\(10 + index)Z", user, "t_\(user)", "gems60")]
            })
            try scenario.write("receipts/r.jsonl", users(count).enumerated().map { index, user in
                Line.v2Receipt("2026-11-01T11:00:\(10 + index)Z", user,
                               transaction: Line.v2("t_\(user)", "gems60", purchase: "2026-11-01T10:59:\(10 + index)Z", token: token))
            })
            _ = try scenario.run(asOf: "2026-11-30T00:00:00Z")
            let database = try scenario.open()
            let others = users(count).dropFirst().prefix(10).map { "\($0) (iaprecon history \($0))" }.joined(separator: ", ")
                + (count > 11 ? " and \(count - 11) more" : "")
            let order = try UserHistory.load(database, .order("0"))
            #expect(order.headerLines(.utc).contains(
                "order 0 was logged by \(count) users; this is the story of u01, whose line came first; also \(others)"), "\(count)")
            let named = users(count).prefix(10).map { "\($0) (iaprecon history \($0))" }.joined(separator: ", ")
                + (count > 10 ? " and \(count - 10) more" : "")
            let shared = try UserHistory.load(database, .appAccountToken(token))
            #expect(shared.headerLines(.utc).contains("\(count) users' purchases carry this token: \(named)"), "\(count)")
            #expect(shared.events.filter { $0.event == "apple purchase" }.count == count, "every purchase the token is on is shown")
        }
    }

    @Test("a token on the purchases of two users whose ids differ only in how an accent is encoded names both, as the store tells them apart")
    func tokenOfUsersDifferingInEncoding() throws {
        let token = "aaaaaaaa-bbbb-4ccc-8ddd-000000000001"
        let (composed, decomposed) = ("jos\u{E9}", "jose\u{301}")
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [composed, decomposed].enumerated().map { index, user in
            Line.v2Receipt("2026-11-01T11:00:1\(index)Z", user,
                           transaction: Line.v2("t_\(index)", "gems60", purchase: "2026-11-01T10:59:1\(index)Z", token: token))
        })
        _ = try scenario.run(asOf: "2026-11-30T00:00:00Z")
        let shared = try UserHistory.load(try scenario.open(), .appAccountToken(token))
        #expect(shared.subject == "app account token \(token)")
        #expect(shared.headerLines(.utc).contains { $0.hasPrefix("2 users' purchases carry this token: ") })
    }

    @Test("the user who logged an order id second sees their own order, said to be the first user's in the reconciliation")
    func orderLoggedSecond() throws {
        let (scenario, database) = try Self.sharedKeysStore()
        defer { withExtendedLifetime(scenario) {} }
        let orders = try UserHistory.load(database, .user("dupord_b")).events.filter { $0.event == "order" }
        #expect(orders.map(\.id) == ["ORD-SAME"])
        #expect(orders.first?.source == "server/s.jsonl:5", "the user's own line")
        #expect(orders.first?.detail == "order id logged first by dupord_a (server/s.jsonl:4), whose order the reconciliation takes: "
            + "none of this user's transactions is matched to it")
        // Near miss: the first user's order is theirs, as before.
        let first = try UserHistory.load(database, .user("dupord_a")).events.filter { $0.event == "order" }
        #expect(first.map(\.source) == ["server/s.jsonl:4"])
        #expect(first.first?.detail == "no transaction matched")
    }

    @Test("a refund Apple reversed shows the refund, then its reversal, each with its time and line")
    func refundReversed() throws {
        let (scenario, database) = try Self.sharedKeysStore()
        defer { withExtendedLifetime(scenario) {} }
        for lookup in [UserHistory.Lookup.user("rev"), .transaction("3400000000000001")] {
            let events = try UserHistory.load(database, lookup).events.filter { $0.event.hasPrefix("refund") }
            #expect(events.map(\.event) == ["refund", "refund reversed"], "\(lookup)")
            #expect(events.map { Timestamp.iso8601($0.ms) } == ["2026-11-08T10:00:00.000Z", "2026-11-09T10:00:01.000Z"], "\(lookup)")
            #expect(events.allSatisfy { $0.source.hasPrefix("notifications/n.jsonl:") }, "\(lookup)")
        }
        // Near miss: a refund that stands is one refund line, as before.
        let (sample, sampleDatabase) = try UserHistoryTests.sampleStore()
        defer { withExtendedLifetime(sample) {} }
        #expect(try UserHistory.load(sampleDatabase, .user("u_1008")).events.filter { $0.event.hasPrefix("refund") }.map(\.event) == ["refund"])
    }

    @Test("the rejected lines that name the customer are listed; a user named only by rejected lines says so; ids match whole")
    func rejectedLinesNamingTheCustomer() throws {
        let (scenario, database) = try UserHistoryTests.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        let rejected = { (user: String) in
            try UserHistory.load(database, .user(user)).headerLines(.utc).filter { $0.hasPrefix("rejected input lines naming this customer or key:") }
        }
        let u1007 = try rejected("u_1007")
        #expect(u1007.count == 1)
        #expect(u1007.first?.contains("server/server-2026-11-28.jsonl:3") == true)
        let missing = try #require(Self.message(database, .user("u_1034")))
        #expect(missing.hasPrefix("no user 'u_1034' in the store; 1 rejected line names it: registrations/signups.jsonl:33 ("))
        // Near misses: u_10 is a prefix of u_1007, not the id; a user no rejected line names has no such line.
        #expect(Self.message(database, .user("u_10")) == "no user 'u_10' in the store")
        #expect(try rejected("u_1001").isEmpty)
        // A key is matched as a whole value: "0" is not in a price of "0,99".
        #expect(Self.message(database, .transaction("0")) == "no transaction '0' in the store")
    }

    @Test("after an ingest without a join the caveat says what is listed and what is as of the last reconciliation")
    func caveatAfterIngest() throws {
        let (scenario, database) = try UserHistoryTests.sampleStore()
        defer { withExtendedLifetime(scenario) {} }
        try database.run("INSERT INTO dirty_keys VALUES ('user', 'u_1005')")
        let caveat = try #require(try UserHistory.load(database, .user("u_1005")).caveat)
        #expect(caveat == """
            input ingested since the last reconciliation is listed but not reconciled yet: its sign-ups, orders, deliveries and \
            revocations are shown, while purchases, matches, installs, findings and the totals are as of the last reconciliation; \
            'iaprecon run' reconciles it
            """)
    }

    @Test("counts read in the singular for one; a consumable looked up as a chain is headed as a transaction")
    func wording() throws {
        let (scenario, database) = try Self.sharedKeysStore()
        defer { withExtendedLifetime(scenario) {} }
        let solo = try UserHistory.load(database, .user("solo"))
        #expect(solo.events.count == 1)
        #expect(solo.headerLines(.utc).first?.hasSuffix("· 1 event") == true)
        let (sample, sampleDatabase) = try UserHistoryTests.sampleStore()
        defer { withExtendedLifetime(sample) {} }
        let orphan = try UserHistory.load(sampleDatabase, .transaction("2000000629928815"))
        #expect(orphan.headerLines(.utc).first?.hasSuffix("· 2 events") == true)
        let finding = try #require(orphan.events.first { $0.event.hasPrefix("FINDING") })
        #expect(finding.shownDetail.contains("delivered 1 time; no receipt"))
        // Scripts read the finding's detail as findings.csv words it.
        #expect(finding.detail.contains("delivered 1 time(s); no receipt"))
        let consumable = try UserHistory.load(sampleDatabase, .originalTransaction("2000000630024936"))
        #expect(consumable.subject == "transaction 2000000630024936")
        #expect(try UserHistory.load(sampleDatabase, .originalTransaction("2000000629430075")).subject == "subscription chain 2000000629430075")
    }
}
