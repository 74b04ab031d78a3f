import Foundation
@testable import IAPRecon
import IAPReconGenerator

/// A throwaway input folder and store for one test.
final class Scenario {
    let root: String
    var input: String { root + "/input" }
    var databasePath: String { root + "/store.sqlite" }
    var out: String { root + "/out" }

    init() throws {
        root = FileManager.default.temporaryDirectory.path + "/iaprecon-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: root + "/input", withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// Writes `lines` (joined with newlines) to `relativePath` under the input folder.
    @discardableResult
    func write(_ relativePath: String, _ lines: [String]) throws -> Scenario {
        let path = input + "/" + relativePath
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return self
    }

    /// Writes `lines` as `write` does, compressed by the system's gzip, to `relativePath`.
    func writeGzip(_ relativePath: String, _ lines: [String]) throws {
        let plain = root + "/gzip-" + UUID().uuidString
        try (lines.joined(separator: "\n") + "\n").write(toFile: plain, atomically: true, encoding: .utf8)
        let path = input + "/" + relativePath
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/bin/gzip")
        gzip.arguments = ["-n", plain]
        try gzip.run()
        gzip.waitUntilExit()
        guard gzip.terminationStatus == 0 else { throw CocoaError(.fileWriteUnknown) }
        try FileManager.default.moveItem(atPath: plain + ".gz", toPath: path)
    }

    /// Where `file` (of another input folder) goes in this scenario's input folder; its folder is made.
    func place(_ file: SourceFile) throws -> String {
        let target = input + "/" + file.relativePath
        try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        return target
    }

    /// Puts a copy of `file` (of another input folder) into this scenario's input folder (a symlink
    /// leading out of an input folder is refused).
    func link(_ file: SourceFile) throws {
        try FileManager.default.copyItem(atPath: file.absolutePath, toPath: try place(file))
    }

    /// Generated inputs of `days` days, and a scenario whose input folder links
    /// every file of them but the last day's: the store a night adds that day to.
    static func generatedNights(users: Int, days: Int, seed: UInt64) throws -> (generated: Scenario, nights: Scenario, lastDay: String) {
        let generated = try Scenario()
        let options = GeneratorOptions(users: users, days: days, seed: seed)
        _ = try InputGenerator.write(options, to: generated.input)
        let lastDay = Timestamp.day((Timestamp.startOfDay(options.startDay) ?? 0) + Int64(days - 1) * 86_400_000)
        let files = try SourceFile.list(in: generated.input)
        let nights = try Scenario()
        for file in files where !file.relativePath.contains(lastDay) { try nights.link(file) }
        return (generated, nights, lastDay)
    }

    /// The standard catalog used by the finding tests.
    func catalog() throws {
        try write("catalog.csv", [
            "product_id,type,subscription_group,price,currency",
            "gems60,consumable,,0.99,USD",
            "gems300,consumable,,4.99,USD",
            "pro.monthly,auto_renewable,premium,9.99,USD",
            "pro.yearly,auto_renewable,premium,79.99,USD",
        ])
    }

    func open() throws -> Database { try Store.open(path: databasePath) }

    /// Gives the store a fixed device-id key, so its pseudonyms compare with another store's that has it too.
    func fixDeviceIDKey() throws {
        let database = try open()
        try database.execute(Tables.deviceIDKey)
        try database.run("INSERT INTO device_id_key (key) VALUES (?)", [.text(String(repeating: "5a", count: 32))])
    }

    /// Runs ingest, normalize and join; returns the findings.
    func reconcile(asOf: String? = nil, graceHours: Int64 = 24, jobs: Int = 1, appSKUs: Set<String> = []) throws -> [StoredFinding] {
        let database = try open()
        var rules = Self.rules(asOf: asOf)
        rules.appSKUs = appSKUs
        _ = try Pipeline.ingest(input: input, database: database, jobs: jobs, rules: rules, progress: nil)
        try Pipeline.normalize(database: database)
        let settings = ReconcileSettings(asOfMs: asOf.flatMap { Timestamp.parse($0) }, graceMs: graceHours * 3_600_000)
        _ = try Pipeline.join(database: database, settings: settings)
        return try Self.findings(database)
    }

    /// A row of `fct_findings` as the report reads it: its sources as the `path:line` texts a user sees.
    struct StoredFinding {
        var kind: FindingKind
        var transactionID: String?
        var userID: String?
        var originalTransactionID: String?
        var amount: Decimal?
        var currency: String?
        var detail: String
        var eventMs: Int64
        var orderID: String?
        var sources: [String]
    }

    static func findings(_ database: Database) throws -> [StoredFinding] {
        var findings: [StoredFinding] = []
        try database.forEach("""
            SELECT kind, transaction_id, user_id, original_transaction_id, amount, currency, detail, event_ms, order_id, sources
            FROM fct_findings ORDER BY kind, transaction_id, user_id
            """) { row in
            findings.append(StoredFinding(
                kind: FindingKind(rawValue: row.string(0)) ?? .lostDelivery, transactionID: row.optionalString(1), userID: row.optionalString(2),
                originalTransactionID: row.optionalString(3), amount: row.optionalString(4).flatMap(Money.parse), currency: row.optionalString(5),
                detail: row.string(6), eventMs: row.int(7), orderID: row.optionalString(8), sources: row.string(9).split(separator: ";").map(String.init)))
        }
        return findings
    }

    /// Runs the whole pipeline into `out`; with `now` and no `asOf`, by that clock and the default as-of.
    /// `announce` is the caller's saying of the findings (`Pipeline.run`'s); `nightReportedBefore` as a night reported again.
    func run(asOf: String? = nil, now: String? = nil, jobs: Int = 1, zone: String = "UTC", currency: String = "USD",
             nightReportedBefore: Bool = false, appSKUs: Set<String> = [], announce: (RunResult) throws -> Void = { _ in }) throws -> RunResult {
        var options = RunOptions(
            input: input, databasePath: databasePath, outFolder: out, jobs: jobs,
            reconcile: ReconcileSettings(asOfMs: asOf.flatMap { Timestamp.parse($0) }),
            report: ReportSettings(outFolder: out, zone: Zone(zone) ?? .utc, currency: currency))
        options.lineRules = Self.rules(asOf: asOf ?? now)
        options.lineRules.appSKUs = appSKUs
        options.report.signatures = .testChain
        options.report.nightReportedBefore = nightReportedBefore
        return try Pipeline.run(options, progress: nil, announce: announce)
    }

    /// A test judging as of a moment runs with that moment as its clock, so its inputs are never "in the future";
    /// it trusts the generator's test chain, which signs the JWS of generated and hand-built lines.
    static func rules(asOf: String?) -> LineRules {
        var rules = LineRules(signatures: .testChain)
        if let ms = asOf.flatMap({ Timestamp.parse($0) }) { rules.nowMs = ms }
        return rules
    }

    func output(_ name: String) throws -> String {
        try String(contentsOfFile: out + "/" + name, encoding: .utf8)
    }
}

extension Scenario {
    /// u1's two chains of one subscription group, each delivered and sent in a receipt: `a1`
    /// (pro.monthly, bought 2026-11-01, expiring 2026-11-08 unless Apple extends it) and `b1`
    /// (pro.yearly, bought 2026-11-10). Apart, they do not overlap.
    func writeTwoChainsOfOneGroup() throws {
        try catalog()
        try write("server/s.jsonl", [
            Line.delivered("2026-11-01T10:00:09Z", "u1", "a1", "pro.monthly"),
            Line.delivered("2026-11-10T10:00:09Z", "u1", "b1", "pro.yearly"),
        ])
        try write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-01T10:00:05Z", "u1", transaction: Self.chainA1(expires: "2026-11-08T10:00:00Z")),
            Line.v2Receipt("2026-11-10T10:00:05Z", "u1", transaction: Line.v2("b1", "pro.yearly", purchase: "2026-11-10T10:00:00Z", expires: "2027-11-10T10:00:00Z", price: 79990)),
        ])
    }

    /// `writeTwoChainsOfOneGroup`'s `a1`, as a payload giving `expires`.
    static func chainA1(expires: String) -> String {
        Line.v2("a1", "pro.monthly", purchase: "2026-11-01T10:00:00Z", expires: expires, price: 9990)
    }
}

/// JSON Lines builders for the contract's input formats, so tests read like stories.
enum Line {
    static func order(_ ts: String, _ orderID: String, _ userID: String, _ productID: String, price: String? = "0.99", currency: String = "USD") -> String {
        var fields = "\"ts\":\"\(ts)\",\"event\":\"order_created\",\"order_id\":\"\(orderID)\",\"user_id\":\"\(userID)\",\"product_id\":\"\(productID)\""
        if let price { fields += ",\"price\":\"\(price)\",\"currency\":\"\(currency)\"" }
        return "{\(fields)}"
    }

    static func delivered(_ ts: String, _ userID: String, _ transactionID: String, _ productID: String, orderID: String? = nil,
                          deliveryID: String? = nil, quantity: Int = 1) -> String {
        var fields = "\"ts\":\"\(ts)\",\"event\":\"delivered\",\"user_id\":\"\(userID)\",\"transaction_id\":\"\(transactionID)\",\"product_id\":\"\(productID)\",\"quantity\":\(quantity)"
        if let orderID { fields += ",\"order_id\":\"\(orderID)\"" }
        if let deliveryID { fields += ",\"delivery_id\":\"\(deliveryID)\"" }
        return "{\(fields)}"
    }

    static func revoked(_ ts: String, _ userID: String, _ transactionID: String) -> String {
        "{\"ts\":\"\(ts)\",\"event\":\"delivery_revoked\",\"user_id\":\"\(userID)\",\"transaction_id\":\"\(transactionID)\",\"reason\":\"refund\"}"
    }

    /// A receipts line with one decoded V2 transaction.
    static func v2Receipt(_ receivedAt: String, _ userID: String, orderID: String? = nil, transaction: String) -> String {
        let order = orderID.map { ",\"order_id\":\"\($0)\"" } ?? ""
        return "{\"received_at\":\"\(receivedAt)\",\"user_id\":\"\(userID)\"\(order),\"transactions\":[\(transaction)]}"
    }

    /// A decoded V2 transaction object.
    static func v2(_ transactionID: String, _ productID: String, purchase: String, original: String? = nil, expires: String? = nil,
                   price: Int? = 990, environment: String = "Production", ownership: String = "PURCHASED", token: String? = nil,
                   revocation: String? = nil, revocationType: String? = nil, percentage: Int? = nil) -> String {
        var fields = "\"transactionId\":\"\(transactionID)\",\"originalTransactionId\":\"\(original ?? transactionID)\",\"productId\":\"\(productID)\",\"purchaseDate\":\(ms(purchase)),\"quantity\":1,\"environment\":\"\(environment)\",\"inAppOwnershipType\":\"\(ownership)\""
        if let expires { fields += ",\"expiresDate\":\(ms(expires))" }
        if let price { fields += ",\"price\":\(price),\"currency\":\"USD\",\"storefront\":\"USA\"" }
        if let token { fields += ",\"appAccountToken\":\"\(token)\"" }
        if let revocation { fields += ",\"revocationDate\":\(ms(revocation)),\"revocationReason\":0" }
        if let revocationType { fields += ",\"revocationType\":\"\(revocationType)\"" }
        if let percentage { fields += ",\"revocationPercentage\":\(percentage)" }
        return "{\(fields)}"
    }

    /// A decoded V2 notification carrying `transaction` as `transactionInfo`.
    /// A V2 notification of `type` signed 2026-11-20T08:00:00Z, carrying a purchase of gems300 at 4.99 made a minute
    /// before; `number` makes its uuid, one per notification of a test.
    static func purchaseNotification(_ type: String, _ transactionID: String, number: Int) -> String {
        notification(type, uuid: "1b2c3d4e-0000-4000-8000-" + String(repeating: "0", count: 12 - String(number).count) + String(number),
                     signed: "2026-11-20T08:00:00Z", transaction: v2(transactionID, "gems300", purchase: "2026-11-20T07:59:00Z", price: 4990))
    }

    static func notification(_ type: String, uuid: String, signed: String, transaction: String, subtype: String? = nil) -> String {
        let sub = subtype.map { ",\"subtype\":\"\($0)\"" } ?? ""
        return "{\"notificationType\":\"\(type)\"\(sub),\"notificationUUID\":\"\(uuid)\",\"signedDate\":\(ms(signed)),\"data\":{\"environment\":\"Production\",\"transactionInfo\":\(transaction)}}"
    }

    static func ms(_ iso: String) -> Int64 { Timestamp.parse(iso) ?? 0 }
}
