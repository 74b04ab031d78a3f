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
        func line(_ id: String, _ quantity: String) -> String {
            #"{"received_at":"2026-11-28T15:00:05Z","user_id":"u1","transactions":[{"transactionId":"\#(id)","productId":"gems","#
                + #""purchaseDate":1795352425000,"quantity":\#(quantity),"price":990,"currency":"USD","storefront":"USA"}]}"#
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
}
