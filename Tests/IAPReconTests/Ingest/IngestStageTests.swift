import Foundation
import Testing
@testable import IAPRecon
import IAPReconGenerator

/// Ingest as a nightly job relies on it: nothing counted twice, nothing lost, same store whatever the parallelism.
@Suite("Ingest stage")
struct IngestStageTests {
    /// Every raw row and reject, in key order, as text: two equal dumps mean two equal stores.
    static func dump(_ database: Database) throws -> [String] {
        var lines: [String] = []
        let tables = ["files"] + RawTable.allCases.map(\.name) + ["rejects"]
        for table in tables {
            let order = table == "files" ? "path" : "file_id, line" + (table == "rejects" ? "" : ", item")
            let columns = table == "files" ? "file_id, path, source, content_hash, bytes, lines_read, accepted, rejected, blank, ignored" : "*"
            try database.forEach("SELECT \(columns) FROM \(table) ORDER BY \(order)") { row in
                var cells: [String] = [table]
                var index = 0
                while index < 40 {
                    let value = row.value(index)
                    if case .text(let text) = value, text.isEmpty, index > 30 { break }
                    cells.append("\(value)")
                    index += 1
                }
                lines.append(cells.joined(separator: "|"))
            }
        }
        return lines
    }

    private func ingest(_ scenario: Scenario, jobs: Int = 1, chunkBytes: Int = IngestStage.chunkBytes) throws -> IngestReport {
        let database = try scenario.open()
        return try IngestStage.run(files: try SourceFile.list(in: scenario.input), store: SQLiteIngestStore(database), jobs: jobs, chunkBytes: chunkBytes, rules: LineRules(signatures: .testChain))
    }

    private func serverLines(_ count: Int) -> [String] {
        (0..<count).map { index in
            index % 7 == 3 ? "{not json \(index)" : Line.delivered("2026-11-28T10:00:\(String(format: "%02d", index % 60))Z", "u\(index)", "t\(index)", "gems60")
        }
    }

    @Test("a notification of an unknown type is named by its line in the whole file when the file is parsed in chunks, with two workers")
    func unknownNotificationTypeLineAcrossChunks() throws {
        let scenario = try Scenario()
        let lines = (0..<40).map { index in
            Line.notification(index == 33 ? "NEW_THING" : "DID_RENEW", uuid: "1b2c3d4e-0000-4000-8000-\(String(format: "%012d", index))",
                              signed: "2026-11-20T08:00:00Z", transaction: Line.v2("t\(index)", "gems300", purchase: "2026-11-20T07:59:00Z"))
        }
        try scenario.write("notifications/n.jsonl", lines)
        let report = try ingest(scenario, jobs: 2, chunkBytes: 1_000)
        #expect(report.totals.accepted == 40)
        #expect(report.unknownNotificationTypes.counts == ["NEW_THING": 1])
        #expect(report.unknownNotificationTypes.firstSources == ["notifications/n.jsonl:34"])
        #expect(try ingest(scenario).unknownNotificationTypes.total == 0)
    }

    @Test("a JWS judged at the run's clock in the last chunk of a file parsed in chunks has the whole file read again by a clock across its chain's validity, and by no other")
    func clockJudgedChainAcrossChunks() throws {
        // The expiring leaf is valid through 2020 only.
        let key = TestSigningChain.hex(try SignatureFixture.text("expired-leaf.key.hex").trimmingCharacters(in: .whitespacesAndNewlines))
        let expiring = try #require(ES256Signer(privateKey: key, x5c: [
            try SignatureFixture.x5c("expired-leaf.pem"), TestSigningChain.x5c[1], TestSigningChain.x5c[2],
        ]))
        let scenario = try Scenario()
        var lines = (0..<40).map { index in
            Line.notification("DID_RENEW", uuid: "1b2c3d4e-0000-4000-8000-\(String(format: "%012d", index))",
                              signed: "2020-06-01T08:00:00Z", transaction: Line.v2("t\(index)", "gems300", purchase: "2020-06-01T07:59:00Z"))
        }
        // Decoded already, its transaction JWS without a signedDate, and none in the notification: judged at the clock.
        let jws = expiring.jws(payload: Array(Line.v2("t40", "gems300", purchase: "2020-06-01T07:59:00Z").utf8))
        lines.append("{\"notificationType\":\"ONE_TIME_CHARGE\",\"data\":{\"environment\":\"Production\",\"signedTransactionInfo\":\"\(jws)\"}}")
        try scenario.write("notifications/n.jsonl", lines)
        func ingest(now: String) throws -> IngestReport {
            var rules = LineRules(signatures: .testChain)
            rules.nowMs = Line.ms(now)
            return try IngestStage.run(files: try SourceFile.list(in: scenario.input), store: SQLiteIngestStore(try scenario.open()), jobs: 2,
                                       chunkBytes: 1_000, rules: rules)
        }
        #expect(try ingest(now: "2020-07-01T00:00:00Z").totals.accepted == 41)
        // Near miss: a later clock inside the leaf's validity judges the chain alike.
        #expect(try ingest(now: "2020-12-31T00:00:00Z").files.map(\.status) == [.unchanged])
        let expired = try ingest(now: "2021-02-01T00:00:00Z")
        #expect(expired.files.map(\.status) == [.replaced])
        #expect(expired.totals.accepted == 40)
        #expect(try scenario.open().scalar("SELECT group_concat(line || ' ' || reason) FROM rejects")
            == .text("41 certificate expired at signing time in 'data.signedTransactionInfo'"))
        #expect(try ingest(now: "2026-11-28T00:00:00Z").files.map(\.status) == [.unchanged])
    }

    @Test("what a file is read with names the app, the trusted roots (in any order) or the MMP zone; sources judged by the clock alone record nothing")
    func readWith() throws {
        let (a, b): ([UInt8], [UInt8]) = ([1, 2, 3], [4, 5])
        let zone = try #require(Zone("Asia/Tokyo"))
        #expect(LineRules().readWith(.receipts) == "bundle any; signatures apple")
        #expect(LineRules(bundleID: "com.example.game", signatures: .trustUnsigned).readWith(.notifications)
            == "bundle com.example.game; signatures unchecked")
        #expect(LineRules(mmpZone: zone).readWith(.attribution) == "mmp-tz Asia/Tokyo")
        #expect(LineRules(mmpZone: zone).readWith(.server) == nil)
        #expect(LineRules(mmpZone: zone).readWith(.registrations) == nil)
        var named = LineRules()
        named.appSKUs = ["GEMQUEST", "GEMQUEST2"]
        #expect(LineRules().readWith(.apple) == "app-sku any")
        #expect(named.readWith(.apple) == "app-sku GEMQUEST, GEMQUEST2")
        let both = SignatureCheck.verify(extraRoots: [a, b]).trusted
        #expect(both == SignatureCheck.verify(extraRoots: [b, a]).trusted)
        #expect(both.hasPrefix("apple+") && both != SignatureCheck.verify(extraRoots: [a]).trusted)
    }

    @Test("what a file is read with is the same for the same settings named otherwise: a root given twice, a zone by another of its names")
    func readWithEquivalentSettings() throws {
        let (a, b): ([UInt8], [UInt8]) = ([1, 2, 3], [4, 5])
        func trusted(_ roots: [[UInt8]]) -> String { SignatureCheck.verify(extraRoots: roots).trusted }
        // What stores written so far record for one root and for two: kept, or each would read every file again once.
        #expect(trusted([a]) == "apple+1:19c6197e2140b9d0")
        #expect(trusted([a, b]) == "apple+2:5bcc079afa46e826")
        #expect(trusted([a, a]) == trusted([a]))
        #expect(trusted([b, a, b]) == trusted([a, b]))
        // summary.json counts the roots as the record does, so a report run on its own states the same.
        #expect(SignatureCheck.verify(extraRoots: [a, a]).summary == SignatureCheck.verify(extraRoots: [a]).summary)
        // Near miss: other roots are other rules.
        #expect(trusted([a, a]) != trusted([a, b]) && trusted([b]) != trusted([a]))
        // Apple's own root, named with --trust-root, adds nothing to what every run trusts.
        #expect(trusted([AppleRootCA.g3DER]) == "apple")
        #expect(trusted([a, AppleRootCA.g3DER]) == trusted([a]))
        #expect(SignatureCheck.verify(extraRoots: [AppleRootCA.g3DER]).summary == SignatureCheck.appleOnly.summary)

        func recorded(_ zone: String) throws -> String? { LineRules(mmpZone: try #require(Zone(zone))).readWith(.attribution) }
        #expect(try recorded("UTC") == "mmp-tz UTC")
        for name in ["Etc/UTC", "GMT", "Etc/GMT", "Etc/Universal", "Zulu"] { #expect(try recorded(name) == "mmp-tz UTC", "\(name)") }
        #expect(try recorded("Asia/Tokyo") == "mmp-tz Asia/Tokyo")
        #expect(try recorded("America/Los_Angeles") == "mmp-tz America/Los_Angeles")
        // Another name the system's time zone database links to a zone (where it does) is that zone's.
        if (try? FileManager.default.destinationOfSymbolicLink(atPath: "/usr/share/zoneinfo/Asia/Calcutta")) != nil {
            #expect(try recorded("Asia/Calcutta") == "mmp-tz Asia/Kolkata")
            #expect(try recorded("US/Pacific") == "mmp-tz America/Los_Angeles")
        }
        // Near misses: zones that only agree lately, or at one offset, are other zones.
        for name in ["Europe/London", "Africa/Abidjan", "Etc/GMT-9"] { #expect(try recorded(name) == "mmp-tz \(name)", "\(name)") }
    }

    @Test("re-ingesting unchanged files does nothing: same counts, same store, status unchanged")
    func idempotent() throws {
        let scenario = try Scenario()
        try scenario.write("server/a.jsonl", serverLines(20))
        try scenario.catalog()
        let first = try ingest(scenario)
        let before = try Self.dump(scenario.open())
        let second = try ingest(scenario)
        #expect(second.files.map(\.status) == [.unchanged, .unchanged])
        #expect(second.totals == first.totals)
        #expect(try Self.dump(scenario.open()) == before)
        #expect(try scenario.open().scalar("SELECT count(*) FROM raw_server__deliveries") == .integer(17))
    }

    @Test("a new file is hashed by the jobs that parse it, chunked or not: the ledger holds its content hash and size, and it is then unchanged")
    func newFilesHashedByTheirJobs() throws {
        let scenario = try Scenario()
        try scenario.write("server/a.jsonl", serverLines(40))
        try scenario.write("server/b.jsonl", serverLines(3))
        let first = try ingest(scenario, jobs: 3, chunkBytes: 700)
        #expect(first.files.map(\.status) == [.added, .added])
        var stored: [String: [SQLValue]] = [:]
        try scenario.open().forEach("SELECT path, content_hash, bytes FROM files") { stored[$0.string(0)] = [$0.value(1), $0.value(2)] }
        for path in ["server/a.jsonl", "server/b.jsonl"] {
            let (hash, _, bytes, _) = try ContentHash.of(path: scenario.input + "/" + path)
            #expect(stored[path] == [.text(hash), .integer(Int64(bytes))], "\(path)")
        }
        let second = try ingest(scenario, jobs: 3, chunkBytes: 700)
        #expect(second.files.map(\.status) == [.unchanged, .unchanged])
    }

    @Test("a new path that cannot be read as a file is named once and read no further, in chunks or not")
    func newUnreadablePath() throws {
        let scenario = try Scenario()
        try scenario.write("server/a.jsonl", serverLines(5))
        try FileManager.default.createDirectory(atPath: scenario.input + "/server/b.jsonl", withIntermediateDirectories: true)
        for chunkBytes in [IngestStage.chunkBytes, 10] {
            let report = try ingest(scenario, jobs: 2, chunkBytes: chunkBytes)
            #expect(report.unreadable.map(\.reason) == ["Is a directory"])
            #expect(report.unreadable.first?.path.hasSuffix("server/b.jsonl") == true)
            #expect(try scenario.open().scalar("SELECT count(*) FROM files WHERE path = 'server/b.jsonl'") == .integer(0))
        }
    }

    @Test("a changed file replaces its earlier rows and rejects; other files stay")
    func changedFileReplaces() throws {
        let scenario = try Scenario()
        try scenario.write("server/a.jsonl", serverLines(20))
        try scenario.write("server/b.jsonl", serverLines(5))
        _ = try ingest(scenario)
        try scenario.write("server/a.jsonl", serverLines(10))
        let report = try ingest(scenario)
        #expect(report.files.map(\.status) == [.replaced, .unchanged])
        #expect(report.files[0].counts == LineCounts(read: 10, accepted: 9, rejected: 1))
        let database = try scenario.open()
        #expect(try database.scalar("SELECT count(*) FROM raw_server__deliveries") == .integer(9 + 4))
        #expect(try database.scalar("SELECT count(*) FROM rejects") == .integer(1 + 1))
        #expect(try database.scalar("SELECT sum(lines_read) FROM files") == .integer(15))
    }

    /// The bytes `gzip -n` writes for nothing: a valid gzip file holding no byte.
    static let emptyGzip: [UInt8] = [0x1F, 0x8B, 0x08, 0, 0, 0, 0, 0, 0, 0x03, 0x03, 0, 0, 0, 0, 0, 0, 0, 0, 0]

    @Test("a file whose lines the store holds and that is empty now keeps them, plain, cut to nothing or a gzip of nothing: nothing replaced")
    func emptiedFileKeepsItsLines() throws {
        let scenario = try Scenario()
        try scenario.write("server/a.jsonl", serverLines(20))
        try scenario.writeGzip("server/b.jsonl.gz", serverLines(7))
        try scenario.writeGzip("server/c.jsonl.gz", serverLines(3))
        let first = try ingest(scenario)
        let before = try Self.dump(scenario.open())
        // Cut in place, as logrotate's copytruncate leaves a live log; a .gz cut to no byte; one holding a gzip of nothing.
        #expect(truncate(scenario.input + "/server/a.jsonl", 0) == 0)
        #expect(truncate(scenario.input + "/server/b.jsonl.gz", 0) == 0)
        #expect(FileManager.default.createFile(atPath: scenario.input + "/server/c.jsonl.gz", contents: Data(Self.emptyGzip)))
        let report = try ingest(scenario)
        #expect(report.unreadable.isEmpty)
        #expect(try Self.dump(scenario.open()) == before)
        #expect(report.totals == first.totals)
        #expect(report.files.map(\.status) == [.emptied, .emptied, .emptied])
        #expect(report.alerts == [("a", 20), ("b", 7), ("c", 3)].map { name, lines in
            "\(scenario.input)/server/\(name).jsonl\(name == "a" ? "" : ".gz") is empty now; its \(lines) stored lines are kept "
                + "(iaprecon forget server/\(name).jsonl\(name == "a" ? "" : ".gz") drops them)"
        })
        // As long as it stays empty, each run says so again.
        #expect(try ingest(scenario).alerts.count == 3)

        // Near misses: its lines back as they were are the stored ones (unchanged); a .gz cut to one byte is
        // no gzip (unreadable, exit 3), its lines kept too; a file of one blank line is not empty, and replaces them.
        try scenario.write("server/a.jsonl", serverLines(20))
        #expect(FileManager.default.createFile(atPath: scenario.input + "/server/b.jsonl.gz", contents: Data([0x1F])))
        try FileManager.default.removeItem(atPath: scenario.input + "/server/c.jsonl.gz")
        try scenario.writeGzip("server/c.jsonl.gz", [""])
        let back = try ingest(scenario)
        #expect(back.files.map(\.status) == [.unchanged, .replaced])
        #expect(back.unreadable.count == 1)
        #expect(back.unreadable.first?.reason.hasPrefix("not valid gzip") == true)
        #expect(back.alerts == ["\(scenario.input)/server/c.jsonl.gz holds fewer lines than when it was read: its 3 stored lines are replaced by the 1 it holds now"])
        #expect(try scenario.open().scalar("SELECT count(*) FROM raw_server__deliveries") == .integer(17 + 6))
    }

    @Test("an empty file never read, plain, of no byte or a gzip of nothing, is read as holding no line, unsaid; filled later, it is read")
    func newEmptyFileIsReadAsEmpty() throws {
        let scenario = try Scenario()
        try scenario.write("server/a.jsonl", serverLines(2))
        #expect(FileManager.default.createFile(atPath: scenario.input + "/server/b.jsonl", contents: Data()))
        #expect(FileManager.default.createFile(atPath: scenario.input + "/server/c.jsonl.gz", contents: Data()))
        #expect(FileManager.default.createFile(atPath: scenario.input + "/server/d.jsonl.gz", contents: Data(Self.emptyGzip)))
        let first = try ingest(scenario)
        #expect(first.unreadable.isEmpty)
        #expect(first.alerts.isEmpty)
        #expect(first.files.map(\.status) == [.added, .added, .added, .added])
        #expect(first.files.dropFirst().allSatisfy { $0.counts == LineCounts() })
        try scenario.write("server/b.jsonl", serverLines(4))
        try FileManager.default.removeItem(atPath: scenario.input + "/server/c.jsonl.gz")
        try scenario.writeGzip("server/c.jsonl.gz", serverLines(5))
        let second = try ingest(scenario)
        #expect(second.alerts.isEmpty)
        #expect(second.files.map(\.status) == [.unchanged, .replaced, .replaced, .unchanged])
        #expect(try scenario.open().scalar("SELECT count(*) FROM raw_server__deliveries") == .integer(2 + 3 + 4))
    }

    /// What a run's ingest warns of.
    final class Warnings: ProgressSink {
        var messages: [String] = []
        func stageStarted(_ stage: String) {}
        func advanced(_ progress: IngestProgress) {}
        func stageFinished(_ stage: String, seconds: Double, note: String) {}
        func warning(_ message: String) { messages.append(message) }
    }

    @Test("a changed file holding fewer lines than the store does replaces them, saying how many by how many")
    func shrunkFileIsNamed() throws {
        let scenario = try Scenario()
        try scenario.write("server/a.jsonl", serverLines(20))
        try scenario.write("server/b.jsonl", serverLines(5))
        let database = try scenario.open()
        let rules = LineRules(signatures: .testChain)
        _ = try Pipeline.ingest(input: scenario.input, database: database, jobs: 1, rules: rules, progress: nil)
        try scenario.write("server/a.jsonl", serverLines(10))
        let warnings = Warnings()
        let report = try Pipeline.ingest(input: scenario.input, database: database, jobs: 1, rules: rules, progress: warnings)
        #expect(report.files.map(\.status) == [.replaced, .unchanged])
        #expect(warnings.messages == [
            "\(scenario.input)/server/a.jsonl holds fewer lines than when it was read: its 20 stored lines are replaced by the 10 it holds now",
        ])
        #expect(try database.scalar("SELECT sum(lines_read) FROM files") == .integer(15))

        // Near misses: a log appended to, holding as many lines or more, replaces them unsaid.
        try scenario.write("server/a.jsonl", serverLines(12))
        try scenario.write("server/b.jsonl", serverLines(9))
        let quiet = Warnings()
        let again = try Pipeline.ingest(input: scenario.input, database: database, jobs: 1, rules: rules, progress: quiet)
        #expect(again.files.map(\.status) == [.replaced, .replaced])
        #expect(quiet.messages.isEmpty)
        #expect(again.alerts.isEmpty)
    }

    @Test("a log rewritten rather than appended to is named though it holds as many lines or more (copytruncate written to again); near misses: a log appended to, its half-written last line finished, a gzip log compressed again with lines added, a gzip rewritten, a CSV export written again, a log compressed in place")
    func rewrittenLogIsNamed() throws {
        let scenario = try Scenario()
        let input = scenario.input
        func writeBytes(_ path: String, _ text: String) {
            #expect(FileManager.default.createFile(atPath: input + "/" + path, contents: Data(text.utf8)))
        }
        let lines = serverLines(30)
        try scenario.write("server/rotated.jsonl", Array(lines[0..<10]))
        try scenario.write("server/appended.jsonl", Array(lines[10..<14]))
        let whole = Array(lines[14..<18]).joined(separator: "\n") + "\n"
        writeBytes("server/half.jsonl", String(whole.dropLast(12)))
        try scenario.writeGzip("server/archive.jsonl.gz", Array(lines[18..<20]))
        try scenario.writeGzip("server/other.jsonl.gz", Array(lines[26..<28]))
        try scenario.write("server/plain.jsonl", Array(lines[20..<23]))
        try scenario.write("spend/s.csv", ["date,media_source,campaign,spend,currency", "2026-11-10,Facebook Ads,C1,0.99,USD"])
        let database = try scenario.open()
        let rules = LineRules(signatures: .testChain)
        let first = try Pipeline.ingest(input: input, database: database, jobs: 2, rules: rules, progress: nil)
        #expect(first.alerts.isEmpty)

        // Rotated, then written to again: none of the 10 stored lines is in it now, and it holds 12.
        try scenario.write("server/rotated.jsonl", Array(lines[24..<30]) + Array(lines[0..<6]))
        try scenario.write("server/appended.jsonl", Array(lines[10..<16]))
        writeBytes("server/half.jsonl", whole)
        // A gzip never begins with its old compressed bytes once compressed again: its first bytes tell nothing.
        try FileManager.default.removeItem(atPath: input + "/server/archive.jsonl.gz")
        try scenario.writeGzip("server/archive.jsonl.gz", Array(lines[18..<21]))
        // Nor can one rewritten be told from one compressed again: a gzip is a file written whole, not a live log.
        try FileManager.default.removeItem(atPath: input + "/server/other.jsonl.gz")
        try scenario.writeGzip("server/other.jsonl.gz", Array(lines[27..<30]))
        try scenario.writeGzip("server/plain.jsonl.gz", Array(lines[20..<23]))
        try FileManager.default.removeItem(atPath: input + "/server/plain.jsonl")
        try scenario.write("spend/s.csv", ["date,media_source,campaign,spend,currency", "2026-11-10,Facebook Ads,C1,1.99,USD",
                                           "2026-11-11,Facebook Ads,C1,0.99,USD"])
        let report = try Pipeline.ingest(input: input, database: database, jobs: 2, rules: rules, progress: nil)
        #expect(Dictionary(uniqueKeysWithValues: report.files.map { ($0.path, $0.status) }) == [
            "server/appended.jsonl": .replaced, "server/archive.jsonl.gz": .replaced, "server/half.jsonl": .replaced,
            "server/other.jsonl.gz": .replaced, "server/plain.jsonl.gz": .replaced, "server/rotated.jsonl": .replaced,
            "spend/s.csv": .replaced,
        ])
        #expect(report.alerts == [
            "\(input)/server/rotated.jsonl was rewritten, not appended to: it no longer begins with the bytes stored from it, "
                + "and its 10 stored lines are replaced by the 12 it holds now",
        ])
        // Each file's rows once: what it holds now.
        var read: [String: Int64] = [:]
        try database.forEach("SELECT path, lines_read FROM files") { read[$0.string(0)] = $0.int(1) }
        #expect(read == ["server/appended.jsonl": 6, "server/archive.jsonl.gz": 3, "server/half.jsonl": 4, "server/other.jsonl.gz": 3, "server/plain.jsonl.gz": 3,
                         "server/rotated.jsonl": 12, "spend/s.csv": 2])
    }

    @Test("new files stored between replaced ones leave each replaced file's rows once, and the connection cascading deletes after the run")
    func newFilesBetweenReplacedOnes() throws {
        // A new file is written without foreign-key checks, a replaced one with them (its old rows
        // go by the cascade): one connection, the files in path order new, replaced, new, replaced, new.
        let scenario = try Scenario()
        try scenario.write("server/b.jsonl", serverLines(20))
        try scenario.write("server/d.jsonl", serverLines(5))
        let database = try scenario.open()
        let store = SQLiteIngestStore(database)
        let rules = LineRules(signatures: .testChain)
        _ = try IngestStage.run(files: try SourceFile.list(in: scenario.input), store: store, jobs: 1, rules: rules)
        try scenario.write("server/a.jsonl", serverLines(3))
        try scenario.write("server/b.jsonl", serverLines(10))
        try scenario.write("server/c.jsonl", serverLines(4))
        try scenario.write("server/d.jsonl", serverLines(6))
        try scenario.write("server/e.jsonl", serverLines(2))
        let report = try IngestStage.run(files: try SourceFile.list(in: scenario.input), store: store, jobs: 2, rules: rules)
        #expect(report.files.map(\.status) == [.added, .replaced, .added, .replaced, .added])
        #expect(database.enforcesForeignKeys)
        var rows: [String: Int64] = [:]
        try database.forEach("SELECT path, (SELECT count(*) FROM raw_server__deliveries r WHERE r.file_id = f.file_id) FROM files f") {
            rows[$0.string(0)] = $0.int(1)
        }
        // serverLines(n) rejects every seventh line, from the fourth.
        #expect(rows == ["server/a.jsonl": 3, "server/b.jsonl": 9, "server/c.jsonl": 3, "server/d.jsonl": 5, "server/e.jsonl": 2])
        #expect(try database.scalar("SELECT count(*) FROM raw_server__deliveries") == .integer(3 + 9 + 3 + 5 + 2))
        #expect(try database.scalar("SELECT count(*) FROM rejects") == .integer(1 + 1 + 1))
        // The same connection then removes a file with its rows.
        #expect(try StoredFiles.forget(paths: ["server/b.jsonl"], in: database).isEmpty)
        #expect(try database.scalar("SELECT count(*) FROM raw_server__deliveries") == .integer(3 + 3 + 5 + 2))
        #expect(try database.scalar("SELECT count(*) FROM rejects") == .integer(1 + 1))
    }

    @Test("a large file parsed in chunks gives the same rows, line numbers and rejects as whole")
    func chunkedEqualsWhole() throws {
        let whole = try Scenario()
        let chunked = try Scenario()
        var lines = serverLines(300)
        lines.insert("", at: 50)
        lines.insert("   ", at: 120)
        for scenario in [whole, chunked] { try scenario.write("server/big.jsonl", lines) }
        let wholeReport = try ingest(whole, jobs: 1)
        // 700-byte chunks split the file into dozens of pieces, boundaries falling mid-line.
        let chunkedReport = try ingest(chunked, jobs: 3, chunkBytes: 700)
        #expect(chunkedReport.totals == wholeReport.totals)
        #expect(wholeReport.totals == LineCounts(read: 302, accepted: 257, rejected: 43, blank: 2))
        #expect(try Self.dump(chunked.open()) == Self.dump(whole.open()))
    }

    @Test("a line starting with a byte order mark inside a file is rejected, whole or where a chunk starts; the file's first line drops its mark")
    func byteOrderMarkInsideAChunkedFile() throws {
        let bom = "\u{FEFF}"
        let lines = [bom + Line.order("2026-11-28T10:00:00Z", "o1", "u1", "gems60"), Line.order("2026-11-28T10:00:00Z", "o2", "u1", "gems60"),
                     bom + Line.order("2026-11-28T10:00:00Z", "o3", "u1", "gems60"), Line.order("2026-11-28T10:00:00Z", "o4", "u1", "gems60")]
        // Chunks of two lines each: the third line, with its mark, starts the second chunk.
        let chunkBytes = lines[0].utf8.count + lines[1].utf8.count + 2
        var dumps: [[String]] = []
        for chunks in [IngestStage.chunkBytes, chunkBytes] {
            let scenario = try Scenario()
            try scenario.write("server/s.jsonl", lines)
            let report = try ingest(scenario, jobs: 2, chunkBytes: chunks)
            #expect(report.totals == LineCounts(read: 4, accepted: 3, rejected: 1))
            #expect(try scenario.open().scalar("SELECT line || ' ' || reason FROM rejects") == .text("3 not JSON: unexpected character at byte 1"))
            dumps.append(try Self.dump(scenario.open()))
        }
        #expect(dumps[0] == dumps[1])
    }

    @Test("--jobs 1 and --jobs 4 build identical stores from sample-data")
    func jobsEquality() throws {
        var dumps: [[String]] = []
        for jobs in [1, 4] {
            let scenario = try Scenario()
            // One device-id key for both stores, so their pseudonyms compare.
            try scenario.fixDeviceIDKey()
            let database = try scenario.open()
            _ = try IngestStage.run(files: try SourceFile.list(in: SampleDataTests.sampleData), store: SQLiteIngestStore(database), jobs: jobs, chunkBytes: 4096, rules: LineRules(signatures: .testChain))
            dumps.append(try Self.dump(database))
        }
        #expect(dumps[0] == dumps[1])
        #expect(dumps[0].count > 300)
    }

    @Test("a .gz file is read through gzip with the same accounting as its plain twin")
    func gzip() throws {
        let scenario = try Scenario()
        try scenario.write("server/a.jsonl", serverLines(30))
        let gzip = Process()
        gzip.executableURL = URL(fileURLWithPath: "/bin/gzip")
        gzip.arguments = ["-k", "-n", scenario.input + "/server/a.jsonl"]
        try gzip.run()
        gzip.waitUntilExit()
        try FileManager.default.moveItem(atPath: scenario.input + "/server/a.jsonl.gz", toPath: scenario.input + "/server/b.jsonl.gz")
        let report = try ingest(scenario)
        #expect(report.files.map(\.path) == ["server/a.jsonl", "server/b.jsonl.gz"])
        #expect(report.files[0].counts == report.files[1].counts)
        #expect(report.files[1].counts == LineCounts(read: 30, accepted: 26, rejected: 4))
    }

    @Test("files in a folder inside a source's folder are listed each by its path, sorted; other folders as themselves")
    func ignoredFilesInFolders() throws {
        let scenario = try Scenario()
        try scenario.write("server/a.jsonl", serverLines(1))
        try scenario.write("receipts/sub/y.jsonl", ["{}"])
        try scenario.write("receipts/sub/deeper/z.jsonl", ["{}"])
        try scenario.write("server/x.json", ["{}"])
        try scenario.write("misc/notes.txt", ["hello"])
        try FileManager.default.createDirectory(atPath: scenario.input + "/server/empty", withIntermediateDirectories: true)
        // A link back up the tree is named, not followed round and round.
        try FileManager.default.createSymbolicLink(atPath: scenario.input + "/receipts/sub/loop", withDestinationPath: "..")
        let listing = try SourceFile.scan(scenario.input)
        #expect(listing.files.map(\.relativePath) == ["server/a.jsonl"])
        #expect(listing.ignored == [
            "misc/", "receipts/sub/deeper/z.jsonl", "receipts/sub/loop", "receipts/sub/y.jsonl", "server/empty/", "server/x.json",
        ])
    }

    @Test("hidden files and folders are not read and are listed as any file matching no source, a hidden folder by its own name")
    func hiddenFilesAreListed() throws {
        let scenario = try Scenario()
        try scenario.write("server/a.jsonl", serverLines(1))
        try scenario.write("server/.server-2026-11-29.jsonl", serverLines(3))
        try scenario.write(".2026-11-29/server/a.jsonl", serverLines(3))
        try scenario.write("2026-11-30/server/.b.jsonl", serverLines(3))
        try scenario.write(".DS_Store", ["x"])
        try scenario.write(".hidden.csv", ["x"])
        try scenario.write("receipts/.DS_Store", ["x"])
        try scenario.write("receipts/sub/.cache/y.jsonl", ["{}"])
        try scenario.write("receipts/sub/y.jsonl", ["{}"])
        try scenario.write("server/.tmp/z.jsonl", ["{}"])
        for index in 0..<300 {
            try scenario.write(".git/objects/" + String(index / 10) + "/o" + String(index % 10), ["x"])
        }
        let listing = try SourceFile.scan(scenario.input)
        #expect(listing.files.map(\.relativePath) == ["server/a.jsonl"])
        #expect(listing.ignored == [
            ".2026-11-29/", ".DS_Store", ".git/", ".hidden.csv", "2026-11-30/server/.b.jsonl", "receipts/.DS_Store", "receipts/sub/.cache/",
            "receipts/sub/y.jsonl", "server/.server-2026-11-29.jsonl", "server/.tmp/",
        ])
    }

    @Test("the spool files iaprecon generate writes beside the files it makes are passed over in silence; other hidden names are not")
    func generatorSpoolsAreSilent() throws {
        let scenario = try Scenario()
        try scenario.write("server/a.jsonl", serverLines(1))
        // `SpooledFile` spools `server/server-2026-11-29.jsonl` as `server/.server-2026-11-29.jsonl.spool`.
        try scenario.write("server/.server-2026-11-29.jsonl.spool", ["x"])
        try scenario.write("spend/.spend.csv.spool", ["x"])
        try scenario.write("2026-11-30/server/.server-2026-11-30.jsonl.gz.spool", ["x"])
        // Near misses: a name that only ends like one, or is nothing but the suffix, is listed.
        try scenario.write("server/server.spool", ["x"])
        try scenario.write("server/.spool", ["x"])
        try scenario.write("server/.x.spool.jsonl", ["x"])
        let listing = try SourceFile.scan(scenario.input)
        #expect(listing.files.map(\.relativePath) == ["server/a.jsonl"])
        #expect(listing.ignored == ["server/.spool", "server/.x.spool.jsonl", "server/server.spool"])
    }

    @Test("a deep tree inside a source's folder is listed up to a bound, then named as its folder, the same each time")
    func ignoredTreeIsBounded() throws {
        let scenario = try Scenario()
        try scenario.write("server/a.jsonl", serverLines(1))
        for index in 0..<(SourceFile.ignoredEntriesPerFolder + 20) {
            try scenario.write("receipts/backup/" + String(index / 10) + "/f" + String(index % 10) + ".jsonl", ["{}"])
        }
        let listing = try SourceFile.scan(scenario.input)
        #expect(listing.ignored.count <= SourceFile.ignoredEntriesPerFolder + 1)
        #expect(listing.ignored.first == "receipts/backup/")
        #expect(listing.ignored.dropFirst().allSatisfy { $0.hasPrefix("receipts/backup/") && $0.hasSuffix(".jsonl") })
        #expect(try SourceFile.scan(scenario.input) == listing)
    }

    @Test("an unreadable file is named and costs nothing else: the other files are stored")
    func unreadableFile() throws {
        let scenario = try Scenario()
        try scenario.write("server/a.jsonl", serverLines(5))
        try scenario.write("server/b.jsonl.gz", ["this is not gzip"])
        let report = try ingest(scenario)
        #expect(report.files.map(\.path) == ["server/a.jsonl"])
        #expect(report.unreadable.count == 1)
        #expect(report.unreadable.first?.path.hasSuffix("server/b.jsonl.gz") == true)
        #expect(try scenario.open().scalar("SELECT count(*) FROM files") == .integer(1))
    }
}
