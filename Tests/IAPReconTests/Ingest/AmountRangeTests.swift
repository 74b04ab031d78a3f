import Testing
@testable import IAPRecon

/// The amount checks at their edges: what is stored, and the exact reason of what is not.
/// Range and sign are decided on integer units and milliunits; these lines pin every boundary
/// and every shape that is not a plain decimal.
@Suite("Amount range edges")
struct AmountRangeTests {
    /// The run's clock of these tests: 2026-11-29T00:00:00Z.
    static let rules = LineRules(nowMs: 1_795_910_400_000, signatures: .trustUnsigned)

    /// A server `order_created` line whose `price` is `price`, written as is (quote a string yourself).
    static func order(price: String) -> String {
        #"{"ts":"2026-11-28T10:15:02Z","event":"order_created","order_id":"o1","user_id":"u_1001","product_id":"com.example.gems60","price":\#(price),"currency":"KRW"}"#
    }

    /// A receipts line carrying one decoded V2 transaction priced `milliunits`.
    static func v2Receipt(milliunits: String) -> String {
        #"{"received_at":"2026-11-28T10:15:08Z","user_id":"u_1001","transactions":[{"transactionId":"2000000812345678","productId":"com.example.gems60","purchaseDate":1795860905000,"price":\#(milliunits),"currency":"KRW"}]}"#
    }

    @Test("order prices at the edges of the range are stored as exact plain decimals", arguments: [
        (#""1000000000000""#, "1000000000000"),
        (#""-0""#, "0"),
        (#""-0.00""#, "0"),
        (#""+12.50""#, "12.5"),
        (#""999999999999.999999""#, "999999999999.999999"),
        (#""0.123456789012345678""#, "0.123456789012345678"),
        (#""000000000000000000000001.5""#, "1.5"),
        (#""0.0000000000000000001""#, "0.0000000000000000001"),
        ("1000000000000.000", "1000000000000"),
        ("0.99", "0.99"),
    ])
    func storedPrices(price: String, stored: String) throws {
        let rows = try #require(IngestLine.rows(Self.order(price: price), .server, rules: Self.rules), "price \(price)")
        #expect(rows[0].byColumn["price"] == .text(stored))
    }

    @Test("order prices beyond the range, negative or not decimals are rejected with their exact reason", arguments: [
        (#""1000000000000.000000000000000001""#, "amount out of range: 'price' has more than 18 significant digits"),
        (#""1000000000000.01""#, "amount out of range: 'price' is above 10^12"),
        (#""1000000000001""#, "amount out of range: 'price' is above 10^12"),
        (#""999999999999999999""#, "amount out of range: 'price' is above 10^12"),
        (#""1234567890123456789""#, "amount out of range: 'price' has more than 18 significant digits"),
        (#""0.1234567890123456789""#, "amount out of range: 'price' has more than 18 significant digits"),
        (#""-0.50""#, "negative amount: 'price' is -0.5"),
        (#""-1000000000001""#, "negative amount: 'price' is -1000000000001"),
        (#""-0.0000000000000000001""#, "negative amount: 'price' is -0.0000000000000000001"),
        ("-120", "negative amount: 'price' is -120"),
        ("1e3", "bad amount in 'price': 1e3"),
        (#""1e3""#, #"bad amount in 'price': "1e3""#),
        (#"".5""#, #"bad amount in 'price': ".5""#),
        (#""5.""#, #"bad amount in 'price': "5.""#),
        (#""0,99""#, #"bad amount in 'price': "0,99""#),
        ("true", "bad amount in 'price': true"),
    ])
    func rejectedPrices(price: String, reason: String) {
        #expect(IngestLine.reason(Self.order(price: price), .server, rules: Self.rules) == reason, "price \(price)")
    }

    @Test("Apple's milliunit prices: 10^15 is the last in range, below zero is negative", arguments: [
        ("1000000000000000", nil),
        ("0", nil),
        ("990", nil),
        ("1000000000000001", "amount out of range: 'transactions[0].price' is above 10^12"),
        ("9223372036854775807", "amount out of range: 'transactions[0].price' is above 10^12"),
        ("-1", "negative amount: 'transactions[0].price' is -0.001"),
        ("-990", "negative amount: 'transactions[0].price' is -0.99"),
        ("-1000000000000001", "negative amount: 'transactions[0].price' is -1000000000000.001"),
        ("-9223372036854775808", "negative amount: 'transactions[0].price' is -9223372036854775.808"),
    ] as [(String, String?)])
    func milliunitPrices(milliunits: String, reason: String?) throws {
        let line = Self.v2Receipt(milliunits: milliunits)
        #expect(IngestLine.reason(line, .receipts, rules: Self.rules) == reason, "price \(milliunits)")
        if reason == nil {
            let rows = try #require(IngestLine.rows(line, .receipts, rules: Self.rules))
            #expect(rows[1].byColumn["price_milli_n"] == .integer(Int64(milliunits) ?? -1))
        }
    }

    @Test("MMP revenue may be negative but not beyond 10^12 either way")
    func mmpRevenueEdges() throws {
        let header = "Event Time,Event Name,AppsFlyer ID,Event Revenue"
        let parsed = IngestLine.csv(.attribution, [
            header,
            "2026-11-28 10:00:00,af_purchase,1700000000000-1234567,-1000000000000",
            "2026-11-28 10:00:00,af_purchase,1700000000000-1234567,-1000000000000.5",
            "2026-11-28 10:00:00,af_purchase,1700000000000-1234567,1000000000000.5",
            "2026-11-28 10:00:00,af_purchase,1700000000000-1234567,-5.50",
        ], rules: Self.rules)
        let outcomes = parsed.map(\.outcome)
        try #require(outcomes.count == 4)
        if case .accepted(let rows) = outcomes[0] { #expect(rows[0].byColumn["revenue"] == .text("-1000000000000")) } else { Issue.record("rejected -10^12") }
        #expect(outcomes[1] == .rejected("amount out of range: 'Event Revenue' is above 10^12"))
        #expect(outcomes[2] == .rejected("amount out of range: 'Event Revenue' is above 10^12"))
        if case .accepted(let rows) = outcomes[3] { #expect(rows[0].byColumn["revenue"] == .text("-5.5")) } else { Issue.record("rejected -5.50") }
    }
    @Test("a prorated refund's revocationPercentage outside 0...100000 is rejected; 0, 50000 and 100000 are refunded")
    func revocationPercentageRange() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        func prorated(_ id: String, _ percentage: Int) -> String {
            Line.v2Receipt("2026-11-28T10:15:08Z", "u_1001", transaction: Line.v2(
                id, "gems60", purchase: "2026-11-28T10:15:05Z", revocation: "2026-11-28T11:00:00Z",
                revocationType: "REFUND_PRORATED", percentage: percentage))
        }
        try scenario.write("receipts/r.jsonl", [
            prorated("2000000000000001", 200_000),
            prorated("2000000000000002", -5),
            prorated("2000000000000003", 100_001),
            prorated("2000000000000004", 0),
            prorated("2000000000000005", 50_000),
            prorated("2000000000000006", 100_000),
        ])
        let result = try scenario.run(asOf: "2026-11-29T00:00:00Z")
        #expect(result.ingest.files.filter { $0.kind == .receipts }.map(\.counts) == [LineCounts(read: 6, accepted: 3, rejected: 3)])
        let rejects = try scenario.output("rejects.csv").split(separator: "\r\n").dropFirst().map { $0.split(separator: ",").prefix(3).joined(separator: ",") }
        #expect(rejects == [
            "receipts/r.jsonl,1,bad number in 'transactions[0].revocationPercentage' (0 to 100000): 200000",
            "receipts/r.jsonl,2,bad number in 'transactions[0].revocationPercentage' (0 to 100000): -5",
            "receipts/r.jsonl,3,bad number in 'transactions[0].revocationPercentage' (0 to 100000): 100001",
        ])
        let refunds = try scenario.output("revenue_daily.csv").split(separator: "\r\n").dropFirst().map { $0.split(separator: ",")[7] }
        #expect(refunds == ["1.485"])
    }
}
