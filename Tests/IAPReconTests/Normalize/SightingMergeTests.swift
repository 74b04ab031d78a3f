import Testing
@testable import IAPRecon

/// A transaction's sightings merge by CONTRACT.md §1.3's rules, as plain values: the tests build
/// sightings by hand, in file order, and read the merge, with no store in between.
@Suite("Apple sightings merged as values")
struct SightingMergeTests {
    /// A receipt item of `t_1` at line `line` of file 1.
    private typealias Sighting = (transaction: AppleTransaction, source: StoredLine)

    private func sighting(_ origin: TransactionOrigin = .receipt, line: Int64, file: Int64 = 1, at ms: Int64? = 1_000,
                          _ change: (inout AppleTransaction) -> Void = { _ in }) -> Sighting {
        var transaction = AppleTransaction(origin: origin, transactionID: "t_1", productID: "gems", purchaseMs: 500)
        transaction.eventMs = ms
        change(&transaction)
        return (transaction, StoredLine(file: file, line: line))
    }

    private func merged(_ sightings: [Sighting]) throws -> AppleTransactions.Merged {
        try #require(AppleTransactions.merged(sightings))
    }

    @Test("the first sighting with a field gives it; a later one fills only what earlier ones lacked")
    func firstFieldWins() throws {
        let merge = try merged([
            sighting(line: 1) { $0.currency = "USD"; $0.quantity = 2 },
            sighting(line: 2) { $0.currency = "EUR"; $0.storefront = "FRA"; $0.originalTransactionID = "t_0"; $0.quantity = 3 },
            sighting(line: 3) { $0.storefront = "USA"; $0.originalTransactionID = "t_9"; $0.quantity = 5 },
        ])
        #expect(merge.currency == "USD")
        #expect(merge.storefront == "FRA")
        #expect(merge.originalTransactionID == "t_0")
        #expect(merge.quantity == 2)
        #expect(merge.sightings == 3)
    }

    @Test("the latest expiry any sighting gives holds, in either file order; a sighting without one changes nothing")
    func latestExpiryHolds() throws {
        let original = sighting(line: 1) { $0.expiresMs = 5_000 }
        let extended = sighting(.notification, line: 2, file: 2, at: 4_000) { $0.notificationType = "RENEWAL_EXTENDED"; $0.expiresMs = 9_000 }
        #expect(try merged([original, extended]).expiresMs == 9_000)
        #expect(try merged([extended, original]).expiresMs == 9_000)
        #expect(try merged([sighting(line: 3), original, sighting(line: 4)]).expiresMs == 5_000)
        #expect(try merged([sighting(line: 3)]).expiresMs == nil)
    }

    @Test("the original id defaults to the transaction's own; a quantity Apple leaves out is 1")
    func defaults() throws {
        #expect(try merged([sighting(line: 1)]).originalTransactionID == "t_1")
        #expect(try merged([sighting(line: 1), sighting(line: 2) { $0.quantity = 2 }]).quantity == 1)
    }

    @Test("any Production sighting makes it Production, V1's PROD included; otherwise the first environment holds")
    func productionWins() throws {
        #expect(try merged([sighting(line: 1) { $0.environment = "Sandbox" }, sighting(line: 2) { $0.environment = "PROD" }]).environment
            == "Production")
        #expect(try merged([sighting(line: 1) { $0.environment = "Sandbox" }, sighting(line: 2) { $0.environment = "Xcode" }]).environment
            == "Sandbox")
        #expect(try merged([sighting(line: 1), sighting(line: 2) { $0.environment = "Xcode" }]).environment == "Xcode")
    }

    @Test("a notification received twice is one sighting: its refund counts once, its second copy is no source")
    func repeatedNotification() throws {
        func refund(_ line: Int64) -> Sighting {
            sighting(.notification, line: line, file: 2, at: 9_000) {
                $0.notificationUUID = "n_1"
                $0.notificationType = "REFUND"
                $0.revocationMs = 8_000
            }
        }
        let merge = try merged([sighting(line: 1), refund(4), refund(7)])
        #expect(merge.sightings == 2)
        #expect(merge.sources == [.init(file: 1, line: 1), .init(file: 2, line: 4)])
        #expect(merge.refunds.map(\.ms) == [8_000])
        #expect(merge.firstSeenMs == 1_000)
    }

    @Test("refunds are ordered by kind, time and place, each once; a reversal takes its notification's time")
    func refundEvents() throws {
        let merge = try merged([
            sighting(.notification, line: 9, at: 7_000) { $0.notificationUUID = "n_3"; $0.notificationType = "REFUND"; $0.revocationMs = 6_000 },
            sighting(.notification, line: 3, at: 5_000) { $0.notificationUUID = "n_2"; $0.notificationType = "REFUND_REVERSED"; $0.revocationMs = 2_000 },
            sighting(line: 2) { $0.revocationMs = 2_000; $0.revocationType = "REFUND_PRORATED"; $0.revocationPercentage = 50_000 },
            // Another item of line 2 telling of the same refund.
            sighting(line: 2) { $0.revocationMs = 2_000 },
        ])
        #expect(merge.refunds.map { "\($0.kind.rawValue) \($0.ms) \($0.source.line)" } == ["refund 2000 2", "refund 6000 9", "reversal 5000 3"])
        #expect(merge.refunds.first?.revocationPercentage == 50_000)
    }

    @Test("senders are the users of receipt and V2 sightings, each at their earliest time, in user id order")
    func senders() throws {
        let merge = try merged([
            sighting(line: 1, at: 3_000) { $0.userID = "u_b" },
            sighting(.serverAPI, line: 2, at: 2_000) { $0.userID = "u_a" },
            sighting(line: 3, at: 1_000) { $0.userID = "u_b" },
            sighting(line: 4, at: 1_000) { $0.userID = "u_a" },
            // A notification names no sender, whatever user it carries.
            sighting(.notification, line: 5, at: 500) { $0.userID = "u_c"; $0.notificationUUID = "n_1" },
        ])
        #expect(merge.senders.map { "\($0.userID) \($0.firstMs) \($0.source.line)" } == ["u_a 1000 4", "u_b 1000 3"])
    }

    @Test("user ids are equal when their bytes are: José spelled precomposed and decomposed are two senders")
    func sendersByBytes() throws {
        let merge = try merged([
            sighting(line: 1) { $0.userID = "jos\u{E9}" },
            sighting(line: 2) { $0.userID = "jose\u{301}" },
        ])
        #expect(merge.senders.map { Array($0.userID.utf8) } == [Array("jose\u{301}".utf8), Array("jos\u{E9}".utf8)])
    }

    @Test("one Apple ID restored by many users: each user is one sender, at their earliest time, in user id order")
    func manySenders() throws {
        // Three rounds over 600 users, in file order: round 1 at 5_000, round 2 earlier for every
        // third user, round 3 later for everyone (it wins for no one).
        let users = (0..<600).map { "u_\($0)" }
        var sightings: [Sighting] = []
        for user in users { sightings.append(sighting(line: Int64(sightings.count + 1), at: 5_000) { $0.userID = user }) }
        for (index, user) in users.enumerated() where index % 3 == 0 {
            sightings.append(sighting(.serverAPI, line: Int64(sightings.count + 1), at: 4_000) { $0.userID = user })
        }
        for user in users { sightings.append(sighting(line: Int64(sightings.count + 1), at: 6_000) { $0.userID = user }) }
        let merge = try merged(sightings)
        #expect(merge.sightings == 1_400)
        let expected = users.enumerated().map { index, user in
            index % 3 == 0 ? "\(user) 4000 \(601 + index / 3)" : "\(user) 5000 \(index + 1)"
        }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        #expect(merge.senders.map { "\($0.userID) \($0.firstMs) \($0.source.line)" } == expected)
    }

    @Test("a free trial seen anywhere outranks an intro offer seen first")
    func strongestOffer() throws {
        #expect(try merged([sighting(line: 1) { $0.offer = .introOffer }, sighting(line: 2) { $0.offer = .freeTrial },
                            sighting(line: 3) { $0.offer = .introOffer }]).offer == .freeTrial)
        #expect(try merged([sighting(line: 1), sighting(line: 2) { $0.offer = .introOffer }]).offer == .introOffer)
        #expect(try merged([sighting(line: 1)]).offer == nil)
    }

    @Test("the first three sightings are the sources, and the earliest time is when it was first seen")
    func sourcesAndFirstSeen() throws {
        let merge = try merged((1...5).map { sighting(line: $0, at: 10_000 - $0) })
        #expect(merge.sources.map(\.line) == [1, 2, 3])
        #expect(merge.firstSeenMs == 9_995)
        #expect(AppleTransactions.merged([Sighting]()) == nil)
    }
}
