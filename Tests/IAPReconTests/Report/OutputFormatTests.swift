import Foundation
import Synchronization
import Testing
@testable import IAPRecon

/// How output files are written (CONTRACT.md §3): RFC 4180 UTF-8 CSV with
/// CRLF record ends, the formula-injection guard on text cells only, findings.json
/// with the contract's columns, and one complete output set switched in atomically.
@Suite("output files")
struct OutputFormatTests {
    static let outputs = [
        "attribution.csv", "consumption_requests.jsonl", "findings.csv", "findings.json", "rejects.csv", "report.html", "revenue_daily.csv", "revenue_monthly.csv", "summary.json",
        "transactions.csv",
    ]
    static let findingColumns = [
        "finding_id", "kind", "severity", "user_id", "order_id", "transaction_id", "original_transaction_id", "product_id",
        "amount", "currency", "event_time", "detail", "sources", "amount_usd", "first_seen", "new",
    ]
    let asOf = "2026-11-30T00:00:00Z"

    // MARK: - Formula-injection guard

    @Test("a text cell starting with =, +, -, @, tab or CR is prefixed with ' (a tab or CR then shown escaped) in findings.csv and revenue_daily.csv; numbers never are",
          arguments: ["=", "+", "-", "@", "\t", "\r"])
    func formulaGuard(prefix: String) throws {
        let scenario = try Scenario()
        try scenario.catalog()
        let user = prefix + "cmd"
        let product = prefix + "gems"
        // An orphan delivery to `user` (priced from the catalog), and a refunded purchase of `product`.
        try scenario.write("server/s.jsonl", [
            "{\"ts\":\"2026-11-10T10:00:09Z\",\"event\":\"delivered\",\"user_id\":\"\(Self.json(user))\",\"transaction_id\":\"t404\",\"product_id\":\"gems60\",\"quantity\":1}",
        ])
        let purchase = RevenueReportTests.Fixture.v2("t1", Self.json(product), purchase: "2026-11-10T10:00:00Z", price: 4990)
        try scenario.write("receipts/r.jsonl", [Line.v2Receipt("2026-11-10T10:00:05Z", "u1", transaction: purchase)])
        try scenario.write("notifications/n.jsonl", [
            Line.notification("REFUND", uuid: "n1", signed: "2026-11-12T10:00:01Z",
                              transaction: RevenueReportTests.Fixture.v2("t1", Self.json(product), purchase: "2026-11-10T10:00:00Z", price: 4990,
                                                                         revocation: "2026-11-12T10:00:00Z")),
        ])
        _ = try scenario.run(asOf: asOf)

        // The raw bytes: a tab or CR is guarded, then shown escaped, so the cell needs no quotes.
        let cell = "'" + CSVTests.escapingControls(prefix) + "gems"
        #expect(try scenario.output("revenue_daily.csv") == [
            RevenueReportTests.header,
            "2026-11-10,\(cell),USA,USD,1,0,4.99,0,4.99,4.99,0,4.99",
            "2026-11-12,\(cell),USA,USD,0,1,0,4.99,-4.99,0,4.99,-4.99",
        ].map { $0 + "\r\n" }.joined())

        let findings = try #require(Self.records(try scenario.output("findings.csv")))
        #expect(findings.first == Self.findingColumns)
        let orphan = try #require(findings.dropFirst().first { $0[1] == "orphan_delivery" })
        let row = Dictionary(uniqueKeysWithValues: zip(Self.findingColumns, orphan))
        #expect(row["user_id"] == "'" + CSVTests.escapingControls(user))
        #expect(row["amount"] == "0.99")
        #expect(row["currency"] == "USD")
        #expect(row["product_id"] == "gems60")
        // findings.json holds the value itself: the guard is for spreadsheets.
        let json = try #require(try JSONSerialization.jsonObject(with: Data(scenario.output("findings.json").utf8)) as? [[String: Any]])
        #expect(json.contains { $0["user_id"] as? String == user })
    }

    @Test("attribution.csv and rejects.csv guard their text cells too, and leave numbers alone")
    func formulaGuardElsewhere() throws {
        let scenario = try Scenario()
        try AttributionReportTests.Fixture.mmp(scenario, [
            AttributionReportTests.Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "=HYPERLINK(\"http://x\")", campaign: "@SUM(1+1)",
                                                  appsflyerID: "af1", cuid: "u1"),
        ])
        try scenario.write("registrations/r.jsonl", [AttributionReportTests.Fixture.signup("2026-11-10T09:00:00Z", "u1")])
        try scenario.write("spend/s.csv", ["date,media_source,campaign,spend,currency", "2026-11-11,-2+3,+cmd,10,USD"])
        try scenario.write("server/s.jsonl", ["=1+1"])
        _ = try scenario.run(asOf: "2026-12-31T00:00:00Z")
        #expect(try RevenueReportTests.Fixture.lines(scenario.output("attribution.csv")) == [
            AttributionReportTests.header,
            "2026-11-10,\"'=HYPERLINK(\"\"http://x\"\")\",'@SUM(1+1),1,1,0,0,0,0,0,0,,,,0,,,",
            "2026-11-11,'-2+3,'+cmd,0,0,0,0,0,0,0,0,10,0,0,0,,,",
        ])
        let rejects = try #require(Self.records(try scenario.output("rejects.csv")))
        #expect(rejects.count == 2)
        #expect(rejects.last?[0] == "server/s.jsonl")
        #expect(rejects.last?[1] == "1")
        #expect(rejects.last?[3] == "'=1+1")
    }

    @Test("control characters from input lines reach findings.csv and rejects.csv only as visible escapes")
    func controlCharactersEscaped() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        // A user id carrying a terminal escape sequence (JSON-escaped, so the line is accepted: an orphan
        // delivery), and a line with a raw ESC, BEL and C1 CSI in it (not JSON: a reject showing its text).
        try scenario.write("server/s.jsonl", [
            #"{"ts":"2026-11-10T10:00:09Z","event":"delivered","user_id":"u\u001b[2J\u0007x","transaction_id":"t404","product_id":"gems60","quantity":1}"#,
            "{\"ts\":\"2026-11-10T10:00:09Z\",\"event\":\"delivered\",\"user_id\":\"u\u{1B}]0;owned\u{07}\u{9B}31m\"}",
        ])
        _ = try scenario.run(asOf: asOf)
        for name in ["findings.csv", "rejects.csv"] {
            let text = try scenario.output(name)
            let controls = text.unicodeScalars.filter { CSVTests.isControl($0) && $0 != "\r" && $0 != "\n" }
            #expect(controls.isEmpty, "\(name) holds control characters \(controls.map(\.value))")
            #expect(!text.contains("\r\r") && text.components(separatedBy: "\r\n").dropLast().allSatisfy { !$0.contains("\n") })
        }
        let findings = try #require(Self.records(try scenario.output("findings.csv")))
        let orphan = try #require(findings.first { $0[1] == "orphan_delivery" })
        #expect(orphan[3] == #"u\u001B[2J\u0007x"#)
        let rejects = try #require(Self.records(try scenario.output("rejects.csv")))
        #expect(rejects.count == 2)
        #expect(rejects[1][1] == "2")
        #expect(rejects[1][3] == #"{"ts":"2026-11-10T10:00:09Z","event":"delivered","user_id":"u\u001B]0;owned\u0007\u009B31m"}"#)
    }

    // MARK: - RFC 4180, UTF-8, CRLF

    @Test("cells with commas and quotes are quoted per RFC 4180, line breaks shown as \\n, UTF-8 text is written as is, records end in CRLF")
    func rfc4180Quoting() throws {
        let scenario = try Scenario()
        let products = ["gems,300", "say \"hi\"", "two\nlines", "宝石パック"]
        try scenario.write("receipts/r.jsonl", products.enumerated().map { index, product in
            Line.v2Receipt("2026-11-10T10:00:05Z", "u1", transaction: RevenueReportTests.Fixture.v2(
                "t\(index)", Self.json(product), purchase: "2026-11-10T10:00:00Z", price: 990))
        })
        _ = try scenario.run(asOf: asOf)
        let data = try Data(contentsOf: URL(fileURLWithPath: scenario.out + "/revenue_daily.csv"))
        let text = try #require(String(data: data, encoding: .utf8))
        #expect(!data.starts(with: [0xEF, 0xBB, 0xBF]), "no byte order mark")
        #expect(text == [
            RevenueReportTests.header,
            "2026-11-10,\"gems,300\",USA,USD,1,0,0.99,0,0.99,0.99,0,0.99",
            "2026-11-10,\"say \"\"hi\"\"\",USA,USD,1,0,0.99,0,0.99,0.99,0,0.99",
            "2026-11-10,two\\nlines,USA,USD,1,0,0.99,0,0.99,0.99,0,0.99",
            "2026-11-10,宝石パック,USA,USD,1,0,0.99,0,0.99,0.99,0,0.99",
        ].map { $0 + "\r\n" }.joined())
        let records = try #require(Self.records(text))
        #expect(records.dropFirst().map { $0[1] } == products.map { $0.replacingOccurrences(of: "\n", with: "\\n") })
        #expect(records.allSatisfy { $0.count == 12 })
    }

    @Test("every CSV output of sample-data is strict RFC 4180 with CRLF record ends and a constant column count")
    func sampleDataCSVShape() throws {
        let scenario = try Scenario()
        _ = try Pipeline.run(RunOptions(
            input: SampleDataTests.sampleData, databasePath: scenario.databasePath, outFolder: scenario.out, jobs: 1,
            lineRules: LineRules(signatures: .testChain), reconcile: ReconcileSettings(), report: ReportSettings(outFolder: scenario.out)), progress: nil)
        for name in Self.outputs where name.hasSuffix(".csv") {
            let text = try scenario.output(name)
            let records = try #require(Self.records(text), "\(name) is not strict RFC 4180 with CRLF record ends")
            let width = try #require(records.first?.count)
            #expect(records.count > 1, "\(name)")
            #expect(records.allSatisfy { $0.count == width }, "\(name)")
        }
        // findings.csv on sample-data: details such as "delivered 2 times to u_1005, u_1006" hold commas.
        let findings = try #require(Self.records(try scenario.output("findings.csv")))
        #expect(findings.count == 16)
        #expect(findings.contains { $0[11] == "cross_user: delivered 2 times to u_1005, u_1006" })
    }

    // MARK: - findings.json

    @Test("findings.json parses as JSON: one object per findings.csv row with the contract's 16 keys in order")
    func findingsJSON() throws {
        let scenario = try Scenario()
        _ = try Pipeline.run(RunOptions(
            input: SampleDataTests.sampleData, databasePath: scenario.databasePath, outFolder: scenario.out, jobs: 1,
            lineRules: LineRules(signatures: .testChain), reconcile: ReconcileSettings(), report: ReportSettings(outFolder: scenario.out)), progress: nil)
        let text = try scenario.output("findings.json")
        let objects = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]])
        let csv = try #require(Self.records(try scenario.output("findings.csv")))
        #expect(objects.count == csv.count - 1)
        #expect(objects.count == 15)
        for object in objects { #expect(Set(object.keys) == Set(Self.findingColumns)) }
        // Key order, as written: the keys of each object appear in the contract's order.
        let keysInText = text.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("    \"") else { return nil }
            return line.dropFirst(5).split(separator: "\"", maxSplits: 1).first.map(String.init)
        }
        let width = Self.findingColumns.count
        #expect(keysInText.count == width * objects.count)
        for start in stride(from: 0, to: keysInText.count, by: width) {
            #expect(Array(keysInText[start..<min(start + width, keysInText.count)]) == Self.findingColumns)
        }
        // The same values as findings.csv, in the same order, with JSON null for an empty cell.
        for (object, record) in zip(objects, csv.dropFirst()) {
            #expect(object["finding_id"] as? String == record[0])
            #expect(object["kind"] as? String == record[1])
            #expect((object["order_id"] as? String ?? "") == record[4])
            if record[4].isEmpty { #expect(object["order_id"] is NSNull) }
            #expect((object["event_time"] as? String).map { $0.hasSuffix("Z") } == true)
        }
        // Written a finding at a time, laid out as the whole array would be.
        #expect(text == JSONWriter.pretty(try JSONParser.parse(Array(text.utf8))))
    }

    @Test("findings.json of a run without findings is an empty array")
    func findingsJSONEmpty() throws {
        let scenario = try Scenario()
        try scenario.write("server/s.jsonl", [Line.order("2026-11-28T10:00:00Z", "o1", "u1", "gems60")])
        _ = try scenario.run(asOf: "2026-11-28T10:30:00Z")
        #expect(try scenario.output("findings.csv").split(separator: "\n").count == 1)
        #expect(try scenario.output("findings.json") == "[]\n")
    }

    // MARK: - The output folder

    @Test("each output is a symlink into .current/; a second run switches in a new set and leaves exactly one set under .sets/")
    func outputSet() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-10T10:00:05Z", "u1", transaction: RevenueReportTests.Fixture.v2("t1", "gems60", purchase: "2026-11-10T10:00:00Z", price: 990)),
        ])
        _ = try scenario.run(asOf: asOf)
        let first = try Self.checkOutputFolder(scenario.out)
        #expect(try RevenueReportTests.Fixture.lines(scenario.output("revenue_daily.csv")).count == 2)

        try scenario.write("receipts/r.jsonl", [
            Line.v2Receipt("2026-11-10T10:00:05Z", "u1", transaction: RevenueReportTests.Fixture.v2("t1", "gems60", purchase: "2026-11-10T10:00:00Z", price: 990)),
            Line.v2Receipt("2026-11-11T10:00:05Z", "u1", transaction: RevenueReportTests.Fixture.v2("t2", "gems60", purchase: "2026-11-11T10:00:00Z", price: 990)),
        ])
        _ = try scenario.run(asOf: asOf)
        let second = try Self.checkOutputFolder(scenario.out)
        #expect(second != first)
        #expect(!FileManager.default.fileExists(atPath: scenario.out + "/.sets/" + first))
        #expect(try RevenueReportTests.Fixture.lines(scenario.output("revenue_daily.csv")) == [
            RevenueReportTests.header,
            "2026-11-10,gems60,USA,USD,1,0,0.99,0,0.99,0.99,0,0.99",
            "2026-11-11,gems60,USA,USD,1,0,0.99,0,0.99,0.99,0,0.99",
        ])
    }

    @Test("files of one set written from several threads at once each land whole, and the commit links every one of them")
    func concurrentWrites() throws {
        let scenario = try Scenario()
        let names = (0..<8).map { "part\($0).csv" }
        let lines = names.indices.map { index in (0..<(20_000 + index)).map { "\(index),\($0)\r\n" } }
        let set = try OutputSet(folder: scenario.out)
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: names.count) { index in
            do {
                try set.write(names[index]) { sink in
                    for line in lines[index] { try sink.write(line) }
                }
            } catch {
                failures.withLock { $0 += 1 }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        try set.commit()
        #expect(try FileManager.default.contentsOfDirectory(atPath: scenario.out).sorted() == [".current", ".iaprecon-out", ".sets"] + names)
        for (name, lines) in zip(names, lines) {
            #expect(try String(contentsOfFile: scenario.out + "/" + name, encoding: .utf8) == lines.joined(), "\(name) whole and unmixed")
        }
    }

    @Test("a file the new set does not write (apple_tieout.csv once no report is left) loses its link; nobody else's file is touched")
    func unwrittenOutputLosesItsLink() throws {
        let scenario = try Scenario()
        let first = try OutputSet(folder: scenario.out)
        for name in ["findings.csv", "apple_tieout.csv"] { try first.write(name) { try $0.write("x\r\n") } }
        try first.commit()
        // Someone's own file beside the outputs, and a link of theirs into the set: not iaprecon's to remove.
        try "mine\n".write(toFile: scenario.out + "/notes.txt", atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: scenario.out + "/theirs.csv", withDestinationPath: ".current/findings.csv")
        #expect(FileManager.default.fileExists(atPath: scenario.out + "/apple_tieout.csv"))

        let second = try OutputSet(folder: scenario.out)
        try second.write("findings.csv") { try $0.write("y\r\n") }
        try second.commit()
        let names = try FileManager.default.contentsOfDirectory(atPath: scenario.out).filter { !$0.hasPrefix(".") }.sorted()
        // A loader that lists the folder would find a link to nothing and fail to open it.
        #expect(names == ["findings.csv", "notes.txt", "theirs.csv"])
        #expect(try String(contentsOfFile: scenario.out + "/findings.csv", encoding: .utf8) == "y\r\n")
    }

    @Test("an output file is handed to the kernel a megabyte at a time, not in stdio's 4 KiB pieces")
    func sinkWritesInMegabytes() throws {
        let scenario = try Scenario()
        let path = scenario.root + "/sink.csv"
        func size() throws -> Int { try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) }
        var sink = try TextSink(path: path)
        let half = TextSink.bufferBytes / 2
        try sink.write(String(repeating: "x", count: half))
        #expect(try size() == 0, "half a buffer is held, not written")
        try sink.write(String(repeating: "y", count: half + 10))
        #expect(try size() >= TextSink.bufferBytes, "a full buffer goes out at once")
        try sink.close()
        #expect(try size() == 2 * half + 10)
    }

    @Test("integer and time cells written in place are String's and Timestamp.iso8601's bytes, at the ends of their ranges too")
    func integerAndTimeCells() throws {
        let scenario = try Scenario()
        let set = try OutputSet(folder: scenario.out)
        let integers: [Int64] = [0, 7, -1, 10, 99, -100, 1_000_000_007, .max, .min]
        // 0000-01-01, 9999-12-31 23:59:59.999 and the milliseconds past them: outside 0...9999 `iso8601` spells a year its own way.
        let times: [Int64?] = [0, -1, 1, 1_790_000_000_123, -62_167_219_200_000, -62_167_219_200_001, 253_402_300_799_999,
                               253_402_300_800_000, nil]
        try set.write("cells.csv") { sink in
            try sink.csvRecord { cells in for value in integers { cells.integer(value) } }
            try sink.csvRecord { cells in for ms in times { cells.time(ms) } }
        }
        try set.commit()
        let written = try #require(FileManager.default.contents(atPath: scenario.out + "/cells.csv"))
        let expected = integers.map { String($0) }.joined(separator: ",") + "\r\n"
            + times.map { $0.map(Timestamp.iso8601) ?? "" }.joined(separator: ",") + "\r\n"
        #expect(String(decoding: written, as: UTF8.self) == expected)
        #expect(Timestamp.iso8601(253_402_300_799_999) == "9999-12-31T23:59:59.999Z" && Timestamp.iso8601(-1) == "1969-12-31T23:59:59.999Z")
    }

    @Test("a file several times larger than what is handed to the kernel at once lands whole, byte for byte")
    func largeFile() throws {
        let scenario = try Scenario()
        let set = try OutputSet(folder: scenario.out)
        // Texts, records and cells in turn, past three writeback chunks, with a multi-byte character in each.
        let filler = String(repeating: "x", count: 100)
        let rows = 3 * TextSink.writebackChunk / 100
        var expected: [UInt8] = []
        expected.reserveCapacity(rows * 130)
        try set.write("large.csv") { sink in
            for row in 0..<rows {
                switch row % 3 {
                case 0:
                    let text = "\(row),caf\u{E9},\(filler)\r\n"
                    try sink.write(text)
                    expected += Array(text.utf8)
                case 1:
                    try sink.csvRecord([String(row), "na\u{EF}ve", filler])
                    expected += Array("\(row),na\u{EF}ve,\(filler)\r\n".utf8)
                default:
                    try sink.csvRecord { cells in
                        cells.escaped(String(row))
                        Array("=r\u{F4}le".utf8).withUnsafeBufferPointer { cells.text($0) }
                        cells.escaped(filler)
                    }
                    expected += Array("\(row),'=r\u{F4}le,\(filler)\r\n".utf8)
                }
            }
        }
        try set.commit()
        let written = try #require(FileManager.default.contents(atPath: scenario.out + "/large.csv"))
        #expect(written.count > 3 * TextSink.writebackChunk)
        #expect(written.count == expected.count)
        #expect(Array(written) == expected)
    }
}

extension OutputFormatTests {
    /// Checks the layout of `--out` after a run and returns the name of its one set.
    static func checkOutputFolder(_ out: String) throws -> String {
        let manager = FileManager.default
        #expect(try manager.contentsOfDirectory(atPath: out).sorted() == [".current", ".iaprecon-out", ".sets"] + outputs,
                "only the outputs, .current, the marker and .sets: no temporary files left behind")
        let sets = try manager.contentsOfDirectory(atPath: out + "/.sets")
        #expect(sets.count == 1)
        let set = try #require(sets.first)
        #expect(try manager.destinationOfSymbolicLink(atPath: out + "/.current") == ".sets/" + set)
        #expect(try manager.contentsOfDirectory(atPath: out + "/.sets/" + set).sorted() == outputs)
        for name in outputs {
            #expect(try manager.destinationOfSymbolicLink(atPath: out + "/" + name) == ".current/" + name)
            let attributes = try manager.attributesOfItem(atPath: out + "/.sets/" + set + "/" + name)
            #expect(attributes[.type] as? FileAttributeType == .typeRegular)
        }
        return set
    }

    /// `text` escaped for a JSON string literal.
    static func json(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\r", with: "\\r").replacingOccurrences(of: "\t", with: "\\t")
    }

    /// The records of a strict RFC 4180 document: every record ends in CRLF, a quote
    /// only opens a field or doubles inside one; nil for anything else.
    static func records(_ text: String) -> [[String]]? {
        let scalars = Array(text.unicodeScalars)
        var records: [[String]] = []
        var record: [String] = []
        var field = String.UnicodeScalarView()
        var quoted = false
        var inQuotes = false
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if inQuotes {
                if scalar == "\"" {
                    if index + 1 < scalars.count, scalars[index + 1] == "\"" {
                        field.append(scalar)
                        index += 2
                        continue
                    }
                    inQuotes = false
                } else {
                    field.append(scalar)
                }
            } else if scalar == "\"" {
                guard field.isEmpty, !quoted else { return nil }
                inQuotes = true
                quoted = true
            } else if scalar == "," {
                record.append(String(field))
                field = String.UnicodeScalarView()
                quoted = false
            } else if scalar == "\r" {
                guard index + 1 < scalars.count, scalars[index + 1] == "\n" else { return nil }
                record.append(String(field))
                records.append(record)
                record = []
                field = String.UnicodeScalarView()
                quoted = false
                index += 2
                continue
            } else if scalar == "\n" {
                return nil
            } else {
                guard !quoted else { return nil }
                field.append(scalar)
            }
            index += 1
        }
        guard !inQuotes, field.isEmpty, record.isEmpty else { return nil }
        return records
    }
}
