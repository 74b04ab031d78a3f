import Foundation
import Testing
@testable import IAPReconGenerator

/// One small folder shared by the suite (generated once).
enum Fixture {
    /// 700 users over 12 days; `IAPRECON_GENERATOR_FIXTURE=users,days,seed` runs the suite on a bigger folder.
    static let options: GeneratorOptions = {
        let parts = (ProcessInfo.processInfo.environment["IAPRECON_GENERATOR_FIXTURE"] ?? "")
            .split(separator: ",").compactMap { UInt64($0) }
        guard parts.count == 3 else { return GeneratorOptions(users: 700, days: 12, seed: 42) }
        return GeneratorOptions(users: Int(parts[0]), days: Int(parts[1]), seed: parts[2])
    }()

    static let directory = temporaryDirectory("fixture")

    static let generated: Result<(directory: String, report: GeneratorReport), any Error> = Result {
        atexit { try? FileManager.default.removeItem(atPath: Fixture.directory) }
        return (directory, try InputGenerator.write(options, to: directory))
    }

    static func folder() throws -> (directory: String, report: GeneratorReport) { try generated.get() }

    static func truth() throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: try folder().directory + "/truth.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static let reconciled: Result<ReferenceReconciler, any Error> = Result {
        var reconciler = ReferenceReconciler()
        try reconciler.read(InputFolderReader(directory: try folder().directory))
        return reconciler
    }
}

func temporaryDirectory(_ name: String) -> String {
    NSTemporaryDirectory() + "iaprecon-generator-tests-\(getpid())-\(name)"
}

/// Every file of a folder, relative path → bytes.
func snapshot(_ directory: String) throws -> [String: Data] {
    var files: [String: Data] = [:]
    let enumerator = FileManager.default.enumerator(atPath: directory)
    while let path = enumerator?.nextObject() as? String {
        var isDirectory: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: directory + "/" + path, isDirectory: &isDirectory)
        if !isDirectory.boolValue { files[path] = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + path)) }
    }
    return files
}

@Suite("InputGenerator")
struct InputGeneratorTests {
    /// The digest of the small folder `pinnedBytes` writes, by `InputGenerator.dataVersion`.
    static let pinnedDigests = [2: "8b655eaf49e12705"]

    @Test("the bytes a data version writes are pinned: a generator that writes other bytes raises its version, so benchmarks generate their folders again")
    func pinnedBytes() throws {
        let directory = temporaryDirectory("pinned")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try InputGenerator.write(GeneratorOptions(users: 150, days: 5, seed: 7), to: directory)
        // FNV-1a over every file's path and bytes, in path order.
        var digest: UInt64 = 0xCBF2_9CE4_8422_2325
        for (path, data) in try snapshot(directory).sorted(by: { $0.key < $1.key }) {
            for byte in Array(path.utf8) + [0] + Array(data) + [0] { digest = (digest ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        }
        let hex = String(digest, radix: 16)
        #expect(Self.pinnedDigests[InputGenerator.dataVersion] == hex,
                "the generator writes other bytes than data version \(InputGenerator.dataVersion) did (\(hex)): raise InputGenerator.dataVersion and pin the new digest")
    }

    @Test("the same options write byte-identical folders")
    func deterministic() throws {
        let options = GeneratorOptions(users: 150, days: 5, seed: 7)
        let first = temporaryDirectory("same-a")
        let second = temporaryDirectory("same-b")
        defer {
            try? FileManager.default.removeItem(atPath: first)
            try? FileManager.default.removeItem(atPath: second)
        }
        let reportA = try InputGenerator.write(options, to: first)
        let reportB = try InputGenerator.write(options, to: second)
        let filesA = try snapshot(first)
        let filesB = try snapshot(second)
        #expect(filesA.count == reportA.files.count + 2)  // truth.json and trust/test-root.pem
        #expect(filesA.keys.sorted() == filesB.keys.sorted())
        for (path, bytes) in filesA { #expect(filesB[path] == bytes, "\(path) differs") }
        #expect(reportA.lines == reportB.lines && reportA.bytes == reportB.bytes)
    }

    @Test("a different seed writes a different folder")
    func seedMatters() throws {
        let first = temporaryDirectory("seed-a")
        let second = temporaryDirectory("seed-b")
        defer {
            try? FileManager.default.removeItem(atPath: first)
            try? FileManager.default.removeItem(atPath: second)
        }
        _ = try InputGenerator.write(GeneratorOptions(users: 150, days: 5, seed: 1), to: first)
        _ = try InputGenerator.write(GeneratorOptions(users: 150, days: 5, seed: 2), to: second)
        let filesA = try snapshot(first)
        let filesB = try snapshot(second)
        #expect(filesA["receipts/receipts-2026-09-03.jsonl"] != filesB["receipts/receipts-2026-09-03.jsonl"])
        #expect(filesA["truth.json"] != filesB["truth.json"])
        #expect(filesA["catalog.csv"] == filesB["catalog.csv"])
    }

    @Test("the folder has the contract layout, one file per source and day, the first server day gzipped")
    func layout() throws {
        let (directory, report) = try Fixture.folder()
        let days = Fixture.options.days
        let lastDay = String(format: "2026-%02d-%02d", days > 30 ? 10 : 9, days > 30 ? days - 30 : days)
        #expect(report.files.contains("server/server-2026-09-01.jsonl.gz"))
        #expect(report.files.contains("server/server-\(lastDay).jsonl"))
        #expect(report.files.contains("attribution/appsflyer-\(lastDay).csv"))
        #expect(report.files.contains("notifications/notifications-\(lastDay).jsonl"))
        #expect(report.files.contains("registrations/registrations-\(lastDay).jsonl"))
        #expect(report.files.contains("receipts/receipts-2026-09-01.jsonl"))
        #expect(report.files.contains("catalog.csv") && report.files.contains("fx.csv") && report.files.contains("spend/spend.csv"))
        // One Sales Report per Pacific day the run covers whole: the last UTC day ends at 17:00 Pacific.
        #expect(report.files.contains("apple/S_D_85012345_20260901.txt"))
        #expect(report.files.filter { $0.hasPrefix("apple/") }.count == days - 1)
        #expect(report.files.count == 5 * days + 3 + days - 1)
        #expect(!FileManager.default.fileExists(atPath: directory + "/server/server-2026-09-01.jsonl"))
        let hidden = try FileManager.default.contentsOfDirectory(atPath: directory + "/server").filter { $0.hasPrefix(".") }
        #expect(hidden.isEmpty)
    }

    @Test("the gzipped server day gunzips to JSON lines")
    func gzip() throws {
        let (directory, _) = try Fixture.folder()
        let raw = try Data(contentsOf: URL(fileURLWithPath: directory + "/server/server-2026-09-01.jsonl.gz"))
        #expect(raw.prefix(2) == Data([0x1F, 0x8B]))
        let lines = try InputFolderReader(directory: directory).lines(of: "server/server-2026-09-01.jsonl.gz")
        #expect(!lines.isEmpty)
        let parsed = lines.filter { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) != nil }
        #expect(parsed.count >= lines.count - 5)
    }

    @Test("lines are in time order within a day file, and each belongs to its own UTC day")
    func timeOrder() throws {
        let (directory, _) = try Fixture.folder()
        let reader = InputFolderReader(directory: directory)
        for file in try reader.inputFiles(in: "registrations") {
            let day = String(file.dropFirst("registrations/registrations-".count).prefix(10))
            var previous = Int64.min
            for line in try reader.lines(of: file) {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      let ts = ContractTime.parse(object["ts"]) else { continue }
                #expect(ts >= previous, "\(file) not sorted")
                previous = ts
                let date = Date(timeIntervalSince1970: Double(ts) / 1000)
                let formatter = ISO8601DateFormatter()
                formatter.formatOptions = [.withFullDate]
                #expect(formatter.string(from: date) == day, "\(line) in \(file)")
            }
        }
    }

    @Test("truth.json parses and has at least one finding of every kind")
    func truthCoversEveryKind() throws {
        let truth = try Fixture.truth()
        let findings = try #require(truth["findings"] as? [[String: Any]])
        let kinds = Set(findings.compactMap { $0["kind"] as? String })
        for kind in ["lost_delivery", "duplicate_delivery", "refunded_not_revoked", "orphan_delivery", "product_mismatch",
                     "wrong_user_delivery", "multi_apple_id_subscription", "shared_apple_id_subscription",
                     "sandbox_delivery", "late_delivery", "unverified_apple_sales"] {
            #expect(kinds.contains(kind), "no \(kind)")
        }
        let details = Set(findings.filter { $0["kind"] as? String == "duplicate_delivery" }.compactMap { $0["detail"] as? String })
        #expect(details == ["same_user", "cross_user"])
        #expect(truth["as_of"] as? String == (try Fixture.folder().report.asOf))
        let nearMisses = try #require(truth["near_misses"] as? [String: Int])
        for name in ["refund_reversed", "refund_then_revoked", "delivery_inside_grace", "purchase_younger_than_grace",
                     "refund_before_due", "sequential_apple_ids", "extended_then_sequential_apple_ids", "sandbox_undelivered",
                     "family_shared_delivered_once",
                     "renewal_chain_one_apple_id", "receipt_replay_not_wrong_user", "apple_storefrontless_purchase",
                     "apple_purchase_2330_pacific_next_utc_day", "apple_refund_on_later_pacific_day"] {
            #expect((nearMisses[name] ?? 0) >= 1, "no near miss \(name)")
        }
        let keys: [[String]] = findings.map { finding in
            let kind = finding["kind"] as? String ?? ""
            switch kind {
            case "multi_apple_id_subscription":
                return [kind, (finding["user_id"] as? String ?? "") + "\u{1F}" + (finding["subscription_group"] as? String ?? "")]
            case "shared_apple_id_subscription": return [kind, finding["original_transaction_id"] as? String ?? ""]
            default: return [kind, finding["transaction_id"] as? String ?? ""]
            }
        }
        #expect(keys == keys.sorted { $0.lexicographicallyPrecedes($1) }, "findings sorted by kind, then key")
    }

    @Test("every JSON line that is not a planted bad line parses with JSONSerialization")
    func jsonLinesParse() throws {
        let reconciler = try Fixture.reconciled.get()
        let truth = try Fixture.truth()
        let reasons = try #require(truth["rejects_by_reason"] as? [String: Int])
        #expect(reconciler.notJSON == reasons["not_json"])
        #expect((reasons["not_json"] ?? 0) >= 4)
    }

    @Test("planted rejects, blank lines and ignored events are exactly what a reader finds")
    func rejectAccounting() throws {
        let reconciler = try Fixture.reconciled.get()
        let truth = try Fixture.truth()
        let byFile = try #require(truth["rejects_by_file"] as? [String: Int])
        #expect(reconciler.rejectsByFile == byFile)
        #expect(truth["rejects"] as? Int == (try Fixture.folder().report.plantedRejects))
        #expect((truth["rejects"] as? Int ?? 0) >= BadLine.allCases.count)
        #expect(reconciler.blankByFile == (truth["blank_lines_by_file"] as? [String: Int] ?? [:]))
        #expect(reconciler.ignoredUnknown == truth["ignored_unknown_events"] as? Int)
        #expect(reconciler.ignoredUnknown > 0)
    }

    @Test("the latest event time of the inputs is the reported as-of")
    func asOf() throws {
        let reconciler = try Fixture.reconciled.get()
        let formatter = ISO8601DateFormatter()
        let expected = try #require(formatter.date(from: try Fixture.folder().report.asOf))
        #expect(reconciler.asOf == Int64(expected.timeIntervalSince1970 * 1000))
    }

    @Test("an independent reading of RULES.md finds exactly the planted findings")
    func findingsMatchTruth() throws {
        let reconciler = try Fixture.reconciled.get()
        let truth = try Fixture.truth()
        let planted = try #require(truth["findings"] as? [[String: Any]])
        var expected: Set<ReferenceReconciler.Finding> = []
        // The tie-out with Apple's Sales Report is not part of this reading (GeneratedTruthTests checks it).
        for finding in planted where finding["kind"] as? String != "unverified_apple_sales" {
            let kind = finding["kind"] as? String ?? ""
            let key: String
            switch kind {
            case "multi_apple_id_subscription":
                key = (finding["user_id"] as? String ?? "") + "|" + (finding["subscription_group"] as? String ?? "")
            case "shared_apple_id_subscription": key = finding["original_transaction_id"] as? String ?? ""
            default: key = finding["transaction_id"] as? String ?? ""
            }
            expected.insert(.init(kind: kind, key: key, userId: finding["user_id"] as? String ?? "",
                                  detail: finding["detail"] as? String ?? "", amount: finding["amount"] as? String ?? ""))
        }
        let found = Set(reconciler.findings())
        #expect(expected.count >= 30)
        #expect(reconciler.transactions.count >= 100)
        #expect(reconciler.orders.count >= 100)
        print("reference: \(reconciler.transactions.count) transactions, \(reconciler.orders.count) orders, \(reconciler.deliveries().count) deliveries, \(found.count) findings; truth: \(expected.count)")
        let missing = expected.subtracting(found).sorted { $0.description < $1.description }
        let extra = found.subtracting(expected).sorted { $0.description < $1.description }
        #expect(missing.isEmpty, "planted but not found: \(missing.prefix(10))")
        #expect(extra.isEmpty, "found but not planted: \(extra.prefix(10))")
    }

    @Test("Apple's renewal extensions change exactly the planted extension findings: with every expiry as first given, only those are gone")
    func renewalExtensions() throws {
        let reconciler = try Fixture.reconciled.get()
        let truth = try Fixture.truth()
        let planted = try #require(truth["findings"] as? [[String: Any]])
        let byExtension = Set(planted.filter { $0["scenario"] as? String == "multi_apple_id_extended" }.map {
            ReferenceReconciler.Finding(kind: "multi_apple_id_subscription",
                                        key: ($0["user_id"] as? String ?? "") + "|" + ($0["subscription_group"] as? String ?? ""),
                                        userId: $0["user_id"] as? String ?? "", detail: "", amount: "")
        })
        #expect(!byExtension.isEmpty, "no multi_apple_id_subscription planted through an extension")
        let nearMisses = try #require(truth["near_misses"] as? [String: Int])
        #expect((nearMisses["extended_then_sequential_apple_ids"] ?? 0) >= 1, "no near miss extended_then_sequential_apple_ids")
        let extended = reconciler.transactions.values.filter { $0.expires != $0.earliestExpires }
        #expect(extended.count >= byExtension.count + (nearMisses["extended_then_sequential_apple_ids"] ?? 0))
        #expect(extended.allSatisfy { ($0.expires ?? 0) > ($0.earliestExpires ?? 0) })

        var unextended = reconciler
        for (id, tx) in unextended.transactions { unextended.transactions[id]?.expires = tx.earliestExpires }
        let found = Set(reconciler.findings())
        #expect(byExtension.isSubset(of: found))
        #expect(Set(unextended.findings()) == found.subtracting(byExtension))
    }

    @Test("MMP rows have the header's 81 columns and the real AppsFlyer names")
    func attributionColumns() throws {
        let (directory, _) = try Fixture.folder()
        let reader = InputFolderReader(directory: directory)
        let lines = try reader.lines(of: "attribution/appsflyer-2026-09-0\(min(Fixture.options.days, 6)).csv")
        let header = try #require(ReferenceReconciler.csvFields(lines[0]))
        #expect(header.count == 81)
        for name in ["Attributed Touch Type", "Attributed Touch Time", "Install Time", "Event Time", "Event Name",
                     "Event Value", "Event Revenue", "Event Revenue Currency", "Event Revenue USD", "Media Source",
                     "Channel", "Campaign", "Campaign ID", "Adset", "Ad", "Country Code", "AppsFlyer ID", "IDFA", "IDFV",
                     "Customer User ID", "Platform", "Is Retargeting"] {
            #expect(header.contains(name), "no column \(name)")
        }
        var complete = 0
        for line in lines.dropFirst() {
            if let cells = ReferenceReconciler.csvFields(line), cells.count == 81 { complete += 1 }
        }
        #expect(complete >= lines.count - 4)
    }

    @Test("catalog, fx and spend are well formed")
    func smallFiles() throws {
        let (directory, _) = try Fixture.folder()
        let reader = InputFolderReader(directory: directory)
        let catalog = try reader.lines(of: "catalog.csv")
        #expect(catalog[0] == "product_id,type,subscription_group,price,currency")
        let types = Set(catalog.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false)[1] })
        #expect(types == ["consumable", "non_consumable", "auto_renewable", "non_renewing"])
        let fx = try reader.lines(of: "fx.csv")
        #expect(fx[0] == "date,currency,rate")
        #expect(fx.contains("2026-09-01,USD,1"))
        #expect(fx.count == 1 + Fixture.options.days * 5)
        let spend = try reader.lines(of: "spend/spend.csv")
        #expect(spend[0] == "date,media_source,campaign,spend,currency")
        #expect(spend.contains { $0.contains("KR_Brand_Awareness_Oct") })
    }

    @Test("users(forLines:days:) grows with lines and shrinks with days")
    func sizing() {
        #expect(InputGenerator.users(forLines: 1_000_000, days: 60) > InputGenerator.users(forLines: 100_000, days: 60))
        #expect(InputGenerator.users(forLines: 1_000_000, days: 90) < InputGenerator.users(forLines: 1_000_000, days: 30))
        #expect(InputGenerator.users(forLines: 1, days: 60) == 1)
    }
}
