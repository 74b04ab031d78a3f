import Foundation
import Testing
@testable import IAPRecon
@testable import IAPReconCLI

/// Inputs a mutation fuzz of sample-data's files found to cost more than their own lines: each must be
/// rejected naming its file, line and reason while the run goes on and writes everything.
@Suite("Mutated inputs")
struct MutatedInputTests {
    private func run(_ work: Workspace, input: String) -> (code: Int32, out: String, err: String) {
        work.iaprecon(["run", "--input", input, "--db", work.path("s.sqlite"), "--out", work.path("out"),
                       "--trust-unsigned", "--now", "2026-11-30T00:00:00Z", "--quiet"])
    }

    @Test("an Apple quantity beyond a million units is rejected, not summed until the report overflows; a million is read")
    func appleQuantityBeyondRange() throws {
        let work = try Workspace()
        let input = work.path("in")
        try FileManager.default.createDirectory(atPath: input + "/receipts", withIntermediateDirectories: true)
        // Apple's price is the whole quantity's: a million units at 0.99.
        func line(_ id: String, _ quantity: String) -> String {
            #"{"received_at":"2026-11-28T15:00:05Z","user_id":"u1","transactions":[{"transactionId":"\#(id)","productId":"gems","#
                + #""purchaseDate":1795352425000,"quantity":\#(quantity),"price":990000000,"currency":"USD","storefront":"USA"}]}"#
        }
        try [line("t1", "9223372036854775807"), line("t2", "9223372036854775807"), line("t3", "1000000"), line("t4", "1000000")]
            .joined(separator: "\n").write(toFile: input + "/receipts/r.jsonl", atomically: true, encoding: .utf8)
        let result = run(work, input: input)
        #expect(result.code == 0, "\(result.err)")
        let rejects = try work.read("out/rejects.csv").split(separator: "\r\n").dropFirst().map { $0.split(separator: ",").prefix(3).joined(separator: ",") }
        #expect(rejects == [
            "receipts/r.jsonl,1,bad number in 'transactions[0].quantity': 9223372036854775807",
            "receipts/r.jsonl,2,bad number in 'transactions[0].quantity': 9223372036854775807",
        ])
        let revenue = try work.read("out/revenue_daily.csv").split(separator: "\r\n")
        #expect(revenue.dropFirst().map { $0.split(separator: ",").prefix(7).joined(separator: ",") } == ["2026-11-22,gems,USA,USD,2000000,0,1980000"])
    }

    @Test("a spend file saved with lone-CR line ends is rejected on its one line, not read as empty; the same file with LF is read")
    func loneCarriageReturnCSV() throws {
        let work = try Workspace()
        let input = work.path("in")
        try FileManager.default.createDirectory(atPath: input + "/spend", withIntermediateDirectories: true)
        let rows = ["date,media_source,campaign,spend,currency", "2026-11-20,googleadwords_int,GEMS,180.00,USD", "2026-11-21,googleadwords_int,GEMS,175.50,USD"]
        try rows.joined(separator: "\r").write(toFile: input + "/spend/mac.csv", atomically: true, encoding: .utf8)
        try rows.joined(separator: "\n").write(toFile: input + "/spend/unix.csv", atomically: true, encoding: .utf8)
        let result = run(work, input: input)
        #expect(result.code == 0, "\(result.err)")
        let rejects = try work.read("out/rejects.csv").split(separator: "\r\n").dropFirst().map { $0.split(separator: ",").prefix(3).joined(separator: ",") }
        #expect(rejects == ["spend/mac.csv,1,header has no column 'currency' (its lines end in a lone CR)"])
        let files = try #require((try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: work.path("out/summary.json"))))
            as? [String: Any]).flatMap { ($0["inputs"] as? [String: Any])?["files"] as? [[String: Any]] })
        let counts = files.map { "\($0["file"] ?? "") \($0["read"] ?? "") \($0["accepted"] ?? "") \($0["rejected"] ?? "")" }
        #expect(counts == ["spend/mac.csv 1 0 1", "spend/unix.csv 2 2 0"])
    }

    /// The file, line and reason of every row of `rejects.csv`.
    private func rejects(_ work: Workspace) throws -> [String] {
        try work.read("out/rejects.csv").split(separator: "\r\n").dropFirst().map { record in
            let fields = Array(record.utf8).withUnsafeBufferPointer { CSV.fields($0) } ?? []
            return fields.prefix(3).joined(separator: ",")
        }
    }

    @Test("a currency that is not three capital letters is rejected naming file, line and field wherever it is read, not left to show as no fx rate; USD, JPY, KRW and an order with neither price nor currency are read, one with a price alone is not")
    func badCurrencyForm() throws {
        let work = try Workspace()
        let input = work.path("in")
        for folder in ["server", "receipts", "spend", "attribution"] {
            try FileManager.default.createDirectory(atPath: input + "/" + folder, withIntermediateDirectories: true)
        }
        func order(_ id: String, _ currency: String?, price: String? = "0.99") -> String {
            #"{"ts":"2026-11-20T10:00:00Z","event":"order_created","order_id":"\#(id)","user_id":"u1","product_id":"gems""#
                + (price.map { #","price":"\#($0)""# } ?? "") + (currency.map { #","currency":"\#($0)""# } ?? "") + "}"
        }
        try [order("o1", "usd"), order("o2", "USD"), order("o3", nil, price: nil), order("o4", "US$"), order("o5", nil)]
            .joined(separator: "\n").write(toFile: input + "/server/s.jsonl", atomically: true, encoding: .utf8)
        func receipt(_ id: String, _ currency: String) -> String {
            #"{"received_at":"2026-11-20T10:00:05Z","user_id":"u1","transactions":[{"transactionId":"\#(id)","productId":"gems","#
                + #""purchaseDate":"2026-11-20T10:00:01Z","price":990,"currency":"\#(currency)","storefront":"USA"}]}"#
        }
        try [receipt("t1", " USD"), receipt("t2", "JPY")].joined(separator: "\n").write(toFile: input + "/receipts/r.jsonl", atomically: true, encoding: .utf8)
        try ["date,media_source,campaign,spend,currency", "2026-11-20,Facebook Ads,c,50,usd", "2026-11-20,Facebook Ads,c,7000,KRW"]
            .joined(separator: "\n").write(toFile: input + "/spend/s.csv", atomically: true, encoding: .utf8)
        try ["product_id,type,subscription_group,price,currency", "gems,consumable,,0.99,US", "gems,consumable,,0.99,USD"]
            .joined(separator: "\n").write(toFile: input + "/catalog.csv", atomically: true, encoding: .utf8)
        try ["date,currency,rate", "2026-11-01,USD,1", "2026-11-01,krw,0.0007", "2026-11-01,KRW,0.0007", "2026-11-01,JPY,0.0067"]
            .joined(separator: "\n").write(toFile: input + "/fx.csv", atomically: true, encoding: .utf8)
        try [
            "Event Time,Event Name,Customer User ID,AppsFlyer ID,Media Source,Campaign,Event Revenue,Event Revenue Currency,Event Revenue USD",
            // An install's currency cell is never read: it costs the install nothing.
            "2026-11-20 09:00:00,install,u1,af1,Facebook Ads,c,,usd,",
            "2026-11-20 10:00:00,af_purchase,u1,af1,,,0.99,usd,",
            "2026-11-20 10:00:00,af_purchase,u1,af1,,,0.99,usd,1.00",
        ].joined(separator: "\n").write(toFile: input + "/attribution/a.csv", atomically: true, encoding: .utf8)
        let result = run(work, input: input)
        #expect(result.code == 0, "\(result.err)")
        #expect(try rejects(work) == [
            "attribution/a.csv,3,bad currency in 'Event Revenue Currency': \"usd\"",
            "catalog.csv,2,bad currency in 'currency': \"US\"",
            "fx.csv,3,bad currency in 'currency': \"krw\"",
            "receipts/r.jsonl,1,bad currency in 'transactions[0].currency': \" USD\"",
            "server/s.jsonl,1,bad currency in 'currency': \"usd\"",
            "server/s.jsonl,4,bad currency in 'currency': \"US$\"",
            "server/s.jsonl,5,price without a currency: 'price' is 0.99",
            "spend/s.csv,2,bad currency in 'currency': \"usd\"",
        ])
        let files = try #require((try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: work.path("out/summary.json"))))
            as? [String: Any]).flatMap { ($0["inputs"] as? [String: Any])?["files"] as? [[String: Any]] })
        let counts = files.map { "\($0["file"] ?? "") \($0["read"] ?? "") \($0["accepted"] ?? "") \($0["rejected"] ?? "")" }
        #expect(counts == [
            "attribution/a.csv 3 2 1", "catalog.csv 2 1 1", "fx.csv 4 3 1", "receipts/r.jsonl 2 1 1", "server/s.jsonl 5 2 3", "spend/s.csv 2 1 1",
        ])
        // The install is kept, with the spend in won that names a currency fx.csv converts.
        let attribution = try work.read("out/attribution.csv").split(separator: "\r\n").dropFirst()
            .map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        #expect(attribution.map { [$0[0], $0[1], $0[2], $0[3], $0[11]] } == [["2026-11-20", "Facebook Ads", "c", "1", "4.9"]])
    }

    @Test("a reason quoting a value shows the invisible character that makes it bad (a byte order mark, a zero-width space), so it never reads as a good value; a visible one is quoted as it is")
    func invisibleCharacterInAReason() throws {
        let work = try Workspace()
        let input = work.path("in")
        try FileManager.default.createDirectory(atPath: input + "/spend", withIntermediateDirectories: true)
        // Two exports joined, the second saved with a byte order mark; a currency pasted with a zero-width space.
        try ["date,media_source,campaign,spend,currency", "2026-11-20,Facebook Ads,c,50,USD", "\u{FEFF}2026-11-21,Facebook Ads,c,60,USD",
             "2026-11-22,Facebook Ads,c,70,USD\u{200B}", "2026-11-23,Facebook Ads,c,80,\u{20AC}"]
            .joined(separator: "\n").write(toFile: input + "/spend/s.csv", atomically: true, encoding: .utf8)
        try ["date,currency,rate", "2026-11-01,USD,1"].joined(separator: "\n").write(toFile: input + "/fx.csv", atomically: true, encoding: .utf8)
        let result = run(work, input: input)
        #expect(result.code == 0, "\(result.err)")
        #expect(try rejects(work) == [
            #"spend/s.csv,3,bad date in 'date': "\u{FEFF}2026-11-21""#,
            #"spend/s.csv,4,bad currency in 'currency': "USD\u{200B}""#,
            "spend/s.csv,5,bad currency in 'currency': \"\u{20AC}\"",
        ])
    }

    @Test("spend whose media source is the MMP's spelling of empty (None, N/A, null, NULL) is rejected as an empty one is, not read as organic spend; organic, Organic, restricted are read")
    func spendWithoutMediaSource() throws {
        let work = try Workspace()
        let input = work.path("in")
        try FileManager.default.createDirectory(atPath: input + "/spend", withIntermediateDirectories: true)
        try [
            "date,media_source,campaign,spend,currency",
            "2026-11-20,,,10,USD", "2026-11-20,None,,20,USD", "2026-11-20,N/A,,30,USD", "2026-11-20,null,,40,USD", "2026-11-20,NULL,,50,USD",
            "2026-11-21,organic,,1,USD", "2026-11-21,Organic,,2,USD", "2026-11-21,restricted,,3,USD", "2026-11-21,Facebook Ads,,4,USD",
        ].joined(separator: "\n").write(toFile: input + "/spend/s.csv", atomically: true, encoding: .utf8)
        try ["date,currency,rate", "2026-11-01,USD,1"].joined(separator: "\n").write(toFile: input + "/fx.csv", atomically: true, encoding: .utf8)
        let result = run(work, input: input)
        #expect(result.code == 0, "\(result.err)")
        #expect(try rejects(work) == (2...6).map { "spend/s.csv,\($0),missing required value 'media_source'" })
        let attribution = try work.read("out/attribution.csv").split(separator: "\r\n").dropFirst()
            .map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        #expect(attribution.map { [$0[0], $0[1], $0[11]] } == [
            ["2026-11-21", "Facebook Ads", "4"], ["2026-11-21", "organic", "3"], ["2026-11-21", "restricted", "3"],
        ])
    }

    @Test("a price or a spend given twice with two values is rejected and counted so per file; the same value twice, or an unread key twice, is read")
    func fieldGivenTwice() throws {
        let work = try Workspace()
        let input = work.path("in")
        for folder in ["server", "spend"] {
            try FileManager.default.createDirectory(atPath: input + "/" + folder, withIntermediateDirectories: true)
        }
        func order(_ id: String, _ tail: String) -> String {
            #"{"ts":"2026-11-28T10:15:02Z","event":"order_created","order_id":"\#(id)","user_id":"u1","product_id":"gems60","price":"0.99","currency":"USD""#
                + tail + "}"
        }
        try [order("o1", #","storefront":"USA","price":"99.00""#), order("o2", #","price":"0.99""#), order("o3", #","note":1,"note":2"#)]
            .joined(separator: "\n").write(toFile: input + "/server/s.jsonl", atomically: true, encoding: .utf8)
        try ["date,media_source,campaign,spend,currency,spend", "2026-11-20,googleadwords_int,GEMS,180.00,USD,18000",
             "2026-11-21,googleadwords_int,GEMS,175.50,USD,175.50"]
            .joined(separator: "\n").write(toFile: input + "/spend/s.csv", atomically: true, encoding: .utf8)
        let result = run(work, input: input)
        #expect(result.code == 0, "\(result.err)")
        #expect(try rejects(work) == [
            "server/s.jsonl,1,field 'price' given twice, with different values",
            "spend/s.csv,2,column 'spend' given twice, with different values",
        ])
        let files = try #require((try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: work.path("out/summary.json"))))
            as? [String: Any]).flatMap { ($0["inputs"] as? [String: Any])?["files"] as? [[String: Any]] })
        let counts = files.map { "\($0["file"] ?? "") \($0["read"] ?? "") \($0["accepted"] ?? "") \($0["rejected"] ?? "")" }
        #expect(counts == ["server/s.jsonl 3 2 1", "spend/s.csv 2 1 1"])
    }
}
