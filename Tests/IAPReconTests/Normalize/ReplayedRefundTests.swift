import Testing
@testable import IAPRecon

/// A receipt lists every refunded purchase of its Apple ID and clients send it again on every
/// launch, so thousands of lines can tell of one refund. The merge keeps each distinct refund once,
/// and what stands of them (`EffectiveRefund`: the refund, its type, share and line, or none after
/// a reversal) is what a merge keeping every line's refund gives.
@Suite("Refunds told by replayed lines")
struct ReplayedRefundTests {
    private typealias Sighting = (transaction: AppleTransaction, source: StoredLine)

    /// A sighting of `t_1` at `line` of `file`; file ids are taken to sort as their paths do.
    private static func sighting(_ origin: TransactionOrigin = .receipt, file: Int64, line: Int64, at ms: Int64 = 1_000,
                                 _ change: (inout AppleTransaction) -> Void = { _ in }) -> Sighting {
        var transaction = AppleTransaction(origin: origin, transactionID: "t_1", productID: "gems", purchaseMs: 500)
        transaction.eventMs = ms
        change(&transaction)
        return (transaction, StoredLine(file: file, line: line))
    }

    private static func refundNotice(file: Int64, line: Int64, at ms: Int64, revocationMs: Int64, type: String? = nil,
                                     percentage: Int64? = nil) -> Sighting {
        sighting(.notification, file: file, line: line, at: ms) {
            $0.notificationUUID = "n_\(file)_\(line)"
            $0.notificationType = "REFUND"
            $0.revocationMs = revocationMs
            $0.revocationType = type
            $0.revocationPercentage = percentage
        }
    }

    private static func reversal(file: Int64, line: Int64, at ms: Int64) -> Sighting {
        sighting(.notification, file: file, line: line, at: ms) {
            $0.notificationUUID = "r_\(file)_\(line)"
            $0.notificationType = "REFUND_REVERSED"
        }
    }

    /// A receipt line listing the refunded purchase, as every replay of it does.
    private static func receiptRefund(file: Int64, line: Int64, revocationMs: Int64) -> Sighting {
        sighting(file: file, line: line) { $0.revocationMs = revocationMs }
    }

    /// The refunds as a merge kept them before replays were collapsed: every line's refund (by
    /// kind, time and line), the first item of a line for each kind and time.
    private static func everyLinesRefunds(_ sightings: [Sighting]) -> [AppleTransactions.Refund] {
        var refunds: [AppleTransactions.Refund] = []
        var notifications = Set<String>()
        for (sighting, source) in sightings {
            if let uuid = sighting.notificationUUID, !notifications.insert(uuid).inserted { continue }
            let refund: AppleTransactions.Refund? = if sighting.notificationType == "REFUND_REVERSED" {
                (sighting.eventMs ?? sighting.revocationMs).map { AppleTransactions.Refund(kind: .reversal, ms: $0, source: source) }
            } else if let ms = sighting.revocationMs {
                AppleTransactions.Refund(kind: .refund, ms: ms, revocationType: sighting.revocationType,
                                         revocationPercentage: sighting.revocationPercentage, source: source)
            } else {
                nil
            }
            guard let refund else { continue }
            let told = refunds.contains {
                $0.kind == refund.kind && $0.ms == refund.ms && $0.source == refund.source
            }
            if !told { refunds.append(refund) }
        }
        return refunds
    }

    private static func standing(_ refunds: [AppleTransactions.Refund]) -> EffectiveRefund? {
        EffectiveRefund.resolve(refunds.map {
            RefundEvent(kind: $0.kind, ms: $0.ms, revocationType: $0.revocationType, revocationPercentage: $0.revocationPercentage,
                        source: SourceLine(file: Int32($0.source.file), line: $0.source.line))
        })
    }

    private static func fact(_ refund: AppleTransactions.Refund) -> String {
        "\(refund.kind.rawValue) \(refund.ms) \(refund.revocationType ?? "-") \(refund.revocationPercentage.map(String.init) ?? "-")"
    }

    private static func merged(_ sightings: [Sighting]) throws -> AppleTransactions.Merged {
        try #require(AppleTransactions.merged(sightings))
    }

    @Test("a refund every replay of a receipt tells of is one refund, told by the last line")
    func replayedReceipt() throws {
        let sightings = (1...2_000).map { Self.receiptRefund(file: 2, line: $0, revocationMs: 2_000) }
        let merge = try Self.merged(sightings)
        #expect(merge.refunds.map { "\(Self.fact($0)) \($0.source.line)" } == ["refund 2000 - - 2000"])
        #expect(Self.standing(merge.refunds) == Self.standing(Self.everyLinesRefunds(sightings)))
        #expect(Self.standing(merge.refunds)?.source == SourceLine(file: 2, line: 2_000))
        #expect(merge.sightings == 2_000)
    }

    @Test("replays beside a prorated refund's notification: the notification's type, share and line stand, as with one receipt line")
    func prorated() throws {
        let notice = Self.refundNotice(file: 1, line: 4, at: 2_500, revocationMs: 2_000, type: "REFUND_PRORATED", percentage: 40_000)
        let replays = (1...500).map { Self.receiptRefund(file: 2, line: $0, revocationMs: 2_000) }
        for receipts in [[replays[0]], replays] {
            let sightings = [notice] + receipts
            let merge = try Self.merged(sightings)
            #expect(merge.refunds.count == 2)
            let standing = try #require(Self.standing(merge.refunds))
            #expect(standing == Self.standing(Self.everyLinesRefunds(sightings)))
            #expect(standing.revocationType == "REFUND_PRORATED")
            #expect(standing.revocationPercentage == 40_000)
            #expect(standing.source == SourceLine(file: 1, line: 4))
            #expect(standing.share == 0.4)
        }
    }

    @Test("a reversal undoes a replayed refund, and a refund replayed after it stands again, as with one line each")
    func reversed() throws {
        let before = (1...300).map { Self.receiptRefund(file: 2, line: $0, revocationMs: 2_000) }
        let reversal = Self.reversal(file: 1, line: 7, at: 3_000)
        let after = (301...600).map { Self.receiptRefund(file: 2, line: $0, revocationMs: 4_000) }
        for (sightings, stands) in [([reversal] + before, nil as Int64?), ([reversal] + before + after, 4_000),
                                    ([reversal, before[0]], nil), ([reversal, before[0], after[0]], 4_000)] {
            let merge = try Self.merged(sightings)
            #expect(merge.refunds.map(Self.fact) == (stands == nil ? ["refund 2000 - -", "reversal 3000 - -"]
                : ["refund 2000 - -", "refund 4000 - -", "reversal 3000 - -"]))
            #expect(Self.standing(merge.refunds) == Self.standing(Self.everyLinesRefunds(sightings)))
            #expect(Self.standing(merge.refunds)?.ms == stands)
        }
    }

    @Test("the first item of a line speaks for it: a typed item after an untyped one of the same refund does not change it")
    func itemsOfOneLine() throws {
        let untypedFirst = [
            Self.sighting(.serverAPI, file: 2, line: 5) { $0.revocationMs = 2_000 },
            Self.sighting(.serverAPI, file: 2, line: 5) { $0.revocationMs = 2_000; $0.revocationType = "REFUND_FULL" },
            Self.receiptRefund(file: 2, line: 6, revocationMs: 2_000),
        ]
        let merge = try Self.merged(untypedFirst)
        #expect(merge.refunds.map { "\(Self.fact($0)) \($0.source.line)" } == ["refund 2000 - - 6"])
        #expect(Self.standing(merge.refunds) == Self.standing(Self.everyLinesRefunds(untypedFirst)))
    }

    /// Random sightings in file order (files, lines, items of a line together) that tell of a few
    /// refunds and reversals, typed or not, many times over.
    private static func randomSightings(_ random: inout SplitMix64) -> [Sighting] {
        var sightings: [Sighting] = []
        let times: [Int64] = [2_000, 3_000, 4_000]
        for file in Int64(1)...Int64.random(in: 1...3, using: &random) {
            for line in Int64(1)...Int64.random(in: 1...60, using: &random) {
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    let ms = times.randomElement(using: &random) ?? 2_000
                    let uuid = "n_\(sightings.count)"
                    switch Int.random(in: 0..<7, using: &random) {
                    case 0: sightings.append(sighting(file: file, line: line))
                    case 1: sightings.append(reversal(file: file, line: line, at: ms))
                    case 2:
                        sightings.append(sighting(.notification, file: file, line: line, at: ms + 1) {
                            $0.notificationUUID = uuid; $0.notificationType = "REFUND"; $0.revocationMs = ms; $0.revocationType = "REFUND_FULL"
                        })
                    case 3:
                        let percentage = [25_000, 50_000].randomElement(using: &random).map(Int64.init)
                        sightings.append(sighting(.serverAPI, file: file, line: line) {
                            $0.revocationMs = ms; $0.revocationType = "REFUND_PRORATED"; $0.revocationPercentage = percentage
                        })
                    case 4:
                        sightings.append(sighting(.serverAPI, file: file, line: line) { $0.revocationMs = ms; $0.revocationType = "FAMILY_REVOKE" })
                    default: sightings.append(receiptRefund(file: file, line: line, revocationMs: ms))
                    }
                }
            }
        }
        return sightings
    }

    @Test("random replays: the same refund stands, with its type, share and line, as when every line's refund is kept; each distinct refund once")
    func againstEveryLine() throws {
        var random = SplitMix64(state: 0x5EED_0F_4EF0)
        for _ in 0..<400 {
            let sightings = Self.randomSightings(&random)
            let every = Self.everyLinesRefunds(sightings)
            guard let merge = AppleTransactions.merged(sightings) else { continue }
            #expect(Self.standing(merge.refunds) == Self.standing(every))
            let facts = merge.refunds.map(Self.fact)
            #expect(facts.count == Set(facts).count)
            #expect(Set(facts) == Set(every.map(Self.fact)))
            // Each kept at the last line that tells of it, and ordered by kind, time and place.
            for refund in merge.refunds {
                let last = every.filter { Self.fact($0) == Self.fact(refund) }.map { ($0.source.file, $0.source.line) }.max { $0 < $1 }
                #expect(last.map { $0 == (refund.source.file, refund.source.line) } ?? false)
            }
            let order = merge.refunds.map { ($0.kind.rawValue, $0.ms, $0.source.file, $0.source.line) }
            #expect(zip(order, order.dropFirst()).allSatisfy { $0 < $1 })
        }
    }
}
