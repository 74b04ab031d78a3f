import Foundation
import Testing
@testable import IAPRecon

/// CSV records as RFC 4180 writes them (CONTRACT.md §1, §3): a quoted cell may hold a line break, and
/// a stray quote still costs only its own line.
@Suite("CSV records over several lines")
struct CSVRecordTests {
    static let catalogHeader = "product_id,type,subscription_group,price,currency"

    /// What ingest makes of a file of `kind` at `path` holding exactly `text`, read from disk as ingest reads it.
    private func parse(_ kind: SourceKind, _ path: String, _ text: String) throws -> [ParsedLine] {
        let scenario = try Scenario()
        let absolute = scenario.input + "/" + path
        try FileManager.default.createDirectory(atPath: (absolute as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: absolute))
        var parsed: [ParsedLine] = []
        try SourceFileParser.parse(SourceFile(relativePath: path, absolutePath: absolute, kind: kind), rules: IngestLine.unsigned) { parsed += $0 }
        return parsed
    }

    private func catalog(_ lines: [String], ending: String = "\n", last: String? = nil) throws -> [ParsedLine] {
        try parse(.catalog, "catalog.csv", ([Self.catalogHeader] + lines).joined(separator: ending) + (last ?? ending))
    }

    private func row(_ parsed: ParsedLine) -> [String: SQLValue]? {
        if case .accepted(let rows) = parsed.outcome, rows.count == 1 { return rows[0].byColumn }
        return nil
    }

    @Test("a quoted cell holding a line break is one record, numbered by its first line, its break kept; the lines after it keep their numbers",
          arguments: [("\n", "\n"), ("\n", "\r\n"), ("\r\n", "\n"), ("\r\n", "\r\n")])
    func quotedLineBreak(fileBreak: String, cellBreak: String) throws {
        let parsed = try catalog(["gems60,consumable,\"group\(cellBreak)one\",0.99,USD", "gems300,consumable,,4.99,USD"], ending: fileBreak)
        #expect(IngestLine.outcomes(parsed) == ["2 accepted", "4 accepted"])
        #expect(row(parsed[0])?["subscription_group"] == .text("group\(cellBreak)one"))
        #expect(row(parsed[0])?["price"] == .text("0.99"))
        #expect(row(parsed[1])?["product_id"] == .text("gems300"))
    }

    @Test("a quoted cell may span several lines, blank ones too, and a record may hold several such cells")
    func severalLines() throws {
        let parsed = try catalog(["\"gems\n60\",consumable,\"a\n\n,b\",0.99,USD", "gems300,consumable,,4.99,USD"])
        #expect(IngestLine.outcomes(parsed) == ["2 accepted", "6 accepted"])
        #expect(row(parsed[0])?["product_id"] == .text("gems\n60"))
        #expect(row(parsed[0])?["subscription_group"] == .text("a\n\n,b"))
    }

    @Test("an MMP install whose unread User Agent cell holds a CRLF is kept, and the install after it keeps its line")
    func mmpUserAgent() throws {
        let text = "Media Source,Campaign,Customer User ID,Event Name,Event Time,User Agent\r\n"
            + "SrcA,c,u1,install,2026-11-10 09:00:00,\"Mozilla/5.0\r\n(iPhone)\"\r\n"
            + "SrcA,c,u2,install,2026-11-10 09:05:00,ok\r\n"
        let parsed = try parse(.attribution, "attribution/af.csv", text)
        #expect(IngestLine.outcomes(parsed) == ["2 accepted", "4 accepted"])
        #expect(row(parsed[0])?["customer_user_id"] == .text("u1"))
        #expect(row(parsed[1])?["customer_user_id"] == .text("u2"))
    }

    @Test("near miss: a quoted cell with commas and doubled quotes on one line of a CRLF file is one line, as before")
    func quotedCellOnOneLine() throws {
        let parsed = try catalog([#""gems, ""big"" pack",consumable,"",0.99,USD"#, "gems300,consumable,,4.99,USD"], ending: "\r\n")
        #expect(IngestLine.outcomes(parsed) == ["2 accepted", "3 accepted"])
        #expect(row(parsed[0])?["product_id"] == .text(#"gems, "big" pack"#))
        #expect(row(parsed[0])?["currency"] == .text("USD"))
    }

    @Test("near miss: a lone CR inside a quoted cell ends no line, so the record is one line")
    func loneCRInCell() throws {
        let parsed = try catalog(["gems60,consumable,\"a\rb\",0.99,USD", "gems300,consumable,,4.99,USD"])
        #expect(IngestLine.outcomes(parsed) == ["2 accepted", "3 accepted"])
        #expect(row(parsed[0])?["subscription_group"] == .text("a\rb"))
    }

    @Test("a quoted line break in the last record of a file without a trailing line break", arguments: ["\n", "\r\n"])
    func lastRecordWithoutTrailingBreak(ending: String) throws {
        let parsed = try catalog(["gems60,consumable,,0.99,USD", "\"gems\(ending)300\",consumable,,4.99,USD"], ending: ending, last: "")
        #expect(IngestLine.outcomes(parsed) == ["2 accepted", "3 accepted"])
        #expect(row(parsed[1])?["product_id"] == .text("gems\(ending)300"))
    }

    @Test("a quote never closed is rejected on the line it opens, naming why; the good records after it are read")
    func unclosedQuoteThenGoodRecords() throws {
        let parsed = try catalog(["gems60,consumable,,0.99,USD", #"gems300,"consumable,,4.99,USD"#, "gems900,consumable,,9.99,USD",
                                  "gems2000,consumable,,19.99,USD"], ending: "\r\n")
        #expect(IngestLine.outcomes(parsed) == [
            "2 accepted", "3 rejected: unbalanced quotes", "4 accepted", "5 accepted",
        ])
        // The reject shows its own line, not the lines read after it looking for the closing quote.
        #expect(parsed[1].rejectedText == #"gems300,"consumable,,4.99,USD"#)
        #expect(row(parsed[3])?["price"] == .text("19.99"))
    }

    @Test("a stray quote closed by another one lines later, making a row of another width, costs its own line; the lines between are read")
    func strayQuotesLinesApart() throws {
        let parsed = try catalog([#"gems60,"consumable,,0.99,USD"#, "gems300,consumable,,4.99,USD", #"gems900",consumable,,9.99,USD"#,
                                  "gems2000,consumable,,19.99,USD"])
        #expect(IngestLine.outcomes(parsed) == [
            "2 rejected: unbalanced quotes (closing its quoted cell on line 4 makes a row of 6 fields, the header has 5)",
            "3 accepted", "4 accepted", "5 accepted",
        ])
        // A quote inside an unquoted cell is text.
        #expect(row(parsed[2])?["product_id"] == .text(#"gems900""#))
    }

    @Test("a quote still open after the most lines a record may span is given up there: every line after it is read")
    func quoteOpenTooLong() throws {
        let good = (0..<(CSVRecordAssembler.maximumRecordLines + 200)).map { "gems\($0),consumable,,0.99,USD" }
        let parsed = try catalog([#"gems60,"consumable,,0.99,USD"#] + good)
        #expect(parsed.count == good.count + 1)
        #expect(IngestLine.outcomes([parsed[0]]) == ["2 rejected: unbalanced quotes (a quoted cell still open after \(CSVRecordAssembler.maximumRecordLines) lines)"])
        #expect(parsed.dropFirst().map(\.line) == Array(3..<(good.count + 3)))
        #expect(parsed.dropFirst().allSatisfy { row($0) != nil })
    }

    @Test("a header whose quoted name holds a line break is the header; one never closed leaves the file's columns missing")
    func headerOverLines() throws {
        let parsed = try parse(.catalog, "catalog.csv", "product_id,\"type\",\"subscription\n_group\",price,currency\ngems60,consumable,premium,0.99,USD\n")
        #expect(IngestLine.outcomes(parsed) == ["3 accepted"])
        let broken = try parse(.catalog, "catalog.csv", "product_id,\"type,subscription_group,price,currency\ngems60,consumable,,0.99,USD\n")
        #expect(IngestLine.outcomes(broken) == ["2 rejected: header has no column 'product_id'"])
    }

    // MARK: - Stored

    /// A spend file of a CRLF export whose campaign cell holds an LF, and one that does not close its quote.
    static let spendLines = "date,media_source,campaign,spend,currency\r\n"
        + "2026-11-10,SrcA,\"multi\nline\",10,USD\r\n"
        + "2026-11-10,SrcB,plain,20,USD\r\n"
        + "2026-11-10,SrcC,\"open,30,USD\r\n"
        + "2026-11-10,SrcD,after,40,USD\r\n"

    private func ingest(_ scenario: Scenario, jobs: Int, chunkBytes: Int = IngestStage.chunkBytes) throws -> IngestReport {
        try IngestStage.run(files: try SourceFile.list(in: scenario.input), store: SQLiteIngestStore(try scenario.open()), jobs: jobs,
                            chunkBytes: chunkBytes, rules: LineRules(signatures: .testChain))
    }

    private func stored(_ scenario: Scenario) throws -> [String] {
        var rows: [String] = []
        try scenario.open().forEach("SELECT line, media_source, campaign FROM raw_spend__days ORDER BY line") {
            rows.append("\($0.string(0)) \($0.string(1)) \($0.string(2))")
        }
        try scenario.open().forEach("SELECT line, reason FROM rejects ORDER BY line") { rows.append("\($0.string(0)) \($0.string(1))") }
        return rows
    }

    @Test("stored: each record keeps the line it starts on, the accounting counts records, and --jobs 1 and --jobs 3 with small chunks store the same")
    func storedRecords() throws {
        var dumps: [[String]] = []
        for (jobs, chunkBytes) in [(1, IngestStage.chunkBytes), (3, 16)] {
            let scenario = try Scenario()
            try FileManager.default.createDirectory(atPath: scenario.input + "/spend", withIntermediateDirectories: true)
            try Data(Self.spendLines.utf8).write(to: URL(fileURLWithPath: scenario.input + "/spend/s.csv"))
            // A JSON Lines file beside it, parsed in chunks.
            try scenario.write("server/s.jsonl", (0..<20).map { Line.order("2026-11-10T10:00:00Z", "o\($0)", "u1", "gems60") })
            let report = try ingest(scenario, jobs: jobs, chunkBytes: chunkBytes)
            #expect(report.files.first { $0.path == "spend/s.csv" }?.counts == LineCounts(read: 4, accepted: 3, rejected: 1))
            #expect(try stored(scenario) == [
                "2 SrcA multi\nline", "4 SrcB plain", "6 SrcD after", "5 unbalanced quotes",
            ])
            dumps.append(try IngestStageTests.dump(scenario.open()))
        }
        #expect(dumps[0] == dumps[1])
    }

    @Test("a CSV file that grew by records, one over two lines, is read again whole: every record on its own first line")
    func grownFile() throws {
        let scenario = try Scenario()
        let path = scenario.input + "/spend/s.csv"
        try FileManager.default.createDirectory(atPath: scenario.input + "/spend", withIntermediateDirectories: true)
        let first = "date,media_source,campaign,spend,currency\n2026-11-10,SrcA,\"multi\nline\",10,USD\n"
        try Data(first.utf8).write(to: URL(fileURLWithPath: path))
        _ = try ingest(scenario, jobs: 2)
        #expect(try stored(scenario) == ["2 SrcA multi\nline"])
        let grown = first + "2026-11-11,SrcB,\"two\r\nlines\",20,USD\n2026-11-11,SrcC,plain,30,USD\n"
        try Data(grown.utf8).write(to: URL(fileURLWithPath: path))
        let report = try ingest(scenario, jobs: 2)
        #expect(report.files.map(\.status) == [.replaced])
        #expect(report.files.first?.counts == LineCounts(read: 3, accepted: 3))
        #expect(try stored(scenario) == ["2 SrcA multi\nline", "4 SrcB two\r\nlines", "6 SrcC plain"])
    }
}
