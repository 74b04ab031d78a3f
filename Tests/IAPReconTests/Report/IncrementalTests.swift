import Foundation
import Testing
@testable import IAPRecon
@testable import IAPReconGenerator

/// An incremental night gives exactly what a full rebuild gives, even for findings that depend
/// on history (a refund today for a purchase weeks ago).
@Suite("Incremental nights")
struct IncrementalTests {
    @Test("adding the last day's files to a store of the earlier days equals a full rebuild, byte for byte")
    func incrementalEqualsFullRebuild() throws {
        let (generated, incremental, lastDay) = try Scenario.generatedNights(users: 1500, days: 20, seed: 9)
        #expect(lastDay == "2026-09-20")
        #expect(try SourceFile.list(in: generated.input).contains { $0.relativePath.contains(lastDay) })

        // Night 1..19: a view of every file but the last day's; night 20: the whole folder.
        let before = try run(incremental, input: incremental.input)
        let night = try run(incremental, input: generated.input)
        #expect(night.ingest.files.filter { $0.status == .added }.map(\.path).allSatisfy { $0.contains(lastDay) })
        #expect(night.ingest.files.filter { $0.status == .unchanged }.count == before.ingest.files.count)

        let full = try Scenario()
        _ = try run(full, input: generated.input)
        for name in SampleDataTests.outputs {
            #expect(SampleDataTests.withoutHistory(name, try incremental.output(name)) == SampleDataTests.withoutHistory(name, try full.output(name)), "\(name)")
        }
        // History matters: the last day's files refund purchases made on earlier days.
        let refundsOfOlderPurchases = try full.open().scalar("""
            SELECT count(*) FROM int_transactions_resolved WHERE refund_ms >= ? AND purchase_ms < ?
            """, [.integer(Timestamp.startOfDay(lastDay) ?? 0), .integer(Timestamp.startOfDay(lastDay) ?? 0)])
        #expect((refundsOfOlderPurchases.integerValue) > 0)
    }

    static let sampleData = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../sample-data").standardized.path

    @Test("a stored file renamed, compressed in place or copied aside before its log is cut gives what a full rebuild of the folder gives: counted once, not twice")
    func renamedFilesAreReadOnce() throws {
        let files = try SourceFile.list(in: Self.sampleData)
        let renamed = ["server/server-2026-11-28.jsonl": "server/server-2026-11-28-archived.jsonl",
                       "server/server-2026-11-27.jsonl.gz": "server/2026-11-27.jsonl.gz",
                       "spend/spend.csv": "spend/spend-2026-11.csv",
                       "apple/S_D_85012345_20261125.txt": "apple/S_D_85012345_20261125-copy.txt",
                       "registrations/signups.jsonl": "registrations/signups-1.jsonl"]
        let incremental = try Scenario()
        for file in files { try incremental.link(file) }
        _ = try run(incremental, input: incremental.input)
        for (old, new) in renamed {
            try FileManager.default.moveItem(atPath: incremental.input + "/" + old, toPath: incremental.input + "/" + new)
        }
        // logrotate's copytruncate with a dated name: the lines are copied aside, then the log is cut to nothing.
        try FileManager.default.copyItem(atPath: incremental.input + "/receipts/verify-2026-11.jsonl",
                                         toPath: incremental.input + "/receipts/verify-2026-11-20261129.jsonl")
        #expect(truncate(incremental.input + "/receipts/verify-2026-11.jsonl", 0) == 0)
        // Compressed in place, as an archive does; and a .gz of the name of another stored file, of other lines.
        let notifications = try String(contentsOfFile: incremental.input + "/notifications/asn-2026-11.jsonl", encoding: .utf8)
        try FileManager.default.removeItem(atPath: incremental.input + "/notifications/asn-2026-11.jsonl")
        try incremental.writeGzip("notifications/asn-2026-11.jsonl.gz", notifications.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init))
        let night = try run(incremental, input: incremental.input)
        #expect(night.ingest.files.filter { $0.status != .unchanged }.map(\.path)
                == ["notifications/asn-2026-11.jsonl.gz", "receipts/verify-2026-11.jsonl"])
        #expect(night.ingest.alerts.isEmpty)
        #expect(night.ingest.warnings.filter { $0.contains(", byte for byte") }.count == renamed.count + 1)
        #expect(night.ingest.warnings.contains { $0.hasPrefix("notifications/asn-2026-11.jsonl is now notifications/asn-2026-11.jsonl.gz, compressed: ") })
        #expect(!night.ingest.warnings.contains { $0.contains("no longer in the input folder") })
        #expect(night.ingest.warnings.contains("spend/spend.csv is now spend/spend-2026-11.csv, byte for byte: its 13 stored lines go with it, counted once"))
        // Each line in the store once, by the path the folder holds it at.
        #expect(try incremental.open().scalar("SELECT count(*) FROM files WHERE path IN (SELECT value FROM json_each(?))",
                                              [.textList(Array(renamed.keys) + ["notifications/asn-2026-11.jsonl"])]) == .integer(0))

        let full = try Scenario()
        _ = try run(full, input: incremental.input)
        try expectSame(incremental, full, "renamed files")

        // Near misses: a second copy beside its original, or in another day partition (a cumulative catalog), is a file of its own,
        // as a full rebuild reads it; and a stored file that is back in place is the stored one.
        try FileManager.default.copyItem(atPath: incremental.input + "/spend/spend-2026-11.csv", toPath: incremental.input + "/spend/spend-copy.csv")
        try FileManager.default.createDirectory(atPath: incremental.input + "/2026-11-28", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: incremental.input + "/catalog.csv", toPath: incremental.input + "/2026-11-28/catalog.csv")
        let copies = try run(incremental, input: incremental.input)
        #expect(copies.ingest.files.filter { $0.status == .added }.map(\.path) == ["2026-11-28/catalog.csv", "spend/spend-copy.csv"])
        #expect(!copies.ingest.warnings.contains { $0.contains("byte for byte") })
        let fullOfCopies = try Scenario()
        _ = try run(fullOfCopies, input: incremental.input)
        try expectSame(incremental, fullOfCopies, "copies")
    }

    @Test("a stored file that leaves the folder keeps its lines, and the run that finds it gone says so once, naming it; a source folder missing for a night too")
    func fileLeavingTheFolderIsSaid() throws {
        let scenario = try Scenario()
        for file in try SourceFile.list(in: Self.sampleData) { try scenario.link(file) }
        let first = try run(scenario, input: scenario.input)
        #expect(!first.ingest.warnings.contains { $0.contains("no longer in the input folder") })
        let receipts = scenario.input + "/receipts/verify-2026-11.jsonl"
        try FileManager.default.moveItem(atPath: receipts, toPath: scenario.root + "/verify.jsonl")
        let gone = try run(scenario, input: scenario.input)
        let lines = try #require(first.ingest.files.first { $0.path == "receipts/verify-2026-11.jsonl" }?.counts.read)
        #expect(gone.ingest.warnings.filter { $0.contains("no longer in the input folder") } == [
            "\(scenario.input)/receipts/verify-2026-11.jsonl is no longer in the input folder; its \(lines) stored lines are kept "
                + "(iaprecon forget receipts/verify-2026-11.jsonl drops them)",
        ])
        #expect(try scenario.output("summary.json").contains("\"present\": false"))
        // Said once: the next night, still gone, says nothing more; back in place, nothing either.
        #expect(!(try run(scenario, input: scenario.input)).ingest.warnings.contains { $0.contains("no longer in the input folder") })
        try FileManager.default.moveItem(atPath: scenario.root + "/verify.jsonl", toPath: receipts)
        #expect(!(try run(scenario, input: scenario.input)).ingest.warnings.contains { $0.contains("no longer in the input folder") })
        // Many files at once (a folder that failed to arrive): one line, counting them.
        try FileManager.default.moveItem(atPath: scenario.input + "/server", toPath: scenario.root + "/server")
        try FileManager.default.moveItem(atPath: scenario.input + "/apple", toPath: scenario.root + "/apple")
        let many = try run(scenario, input: scenario.input).ingest.warnings.filter { $0.contains("no longer in the input folder") }
        #expect(many.count == 1)
        #expect(many.first?.hasPrefix("5 stored files are no longer in the input folder \(scenario.input); their ") == true)
        #expect(many.first?.hasSuffix("are kept (iaprecon forget drops a file's): apple/S_D_85012345_20261124.txt.gz, "
                                      + "apple/S_D_85012345_20261125.txt, apple/S_D_85012345_20261126.txt.gz, server/server-2026-11-27.jsonl.gz, "
                                      + "server/server-2026-11-28.jsonl") == true)
        // Near miss: a file cut to nothing is said as such, not as gone.
        #expect(truncate(scenario.input + "/spend/spend.csv", 0) == 0)
        let emptied = try run(scenario, input: scenario.input).ingest
        #expect(!emptied.warnings.contains { $0.contains("no longer in the input folder") })
        #expect(emptied.alerts.count == 1)
    }

    @Test("near miss: a stored file whose day folder left is not the same file as one of another day folder with its bytes (a cumulative file), whatever the night")
    func partitionedCopyIsNotAMove() throws {
        let scenario = try Scenario()
        let catalog = try String(contentsOfFile: Self.sampleData + "/catalog.csv", encoding: .utf8).split(separator: "\n").map(String.init)
        _ = try scenario.write("2026-11-27/catalog.csv", catalog).write("2026-11-27/server/s.jsonl", [Line.order("2026-11-27T10:00:00Z", "o1", "u1", "gems60")])
        _ = try run(scenario, input: scenario.input)
        try FileManager.default.removeItem(atPath: scenario.input + "/2026-11-27")
        _ = try scenario.write("2026-11-28/catalog.csv", catalog).write("2026-11-28/server/s.jsonl", [Line.order("2026-11-27T10:00:00Z", "o1", "u1", "gems60")])
        let night = try run(scenario, input: scenario.input)
        #expect(night.ingest.files.filter { $0.status == .added }.map(\.path) == ["2026-11-28/catalog.csv", "2026-11-28/server/s.jsonl"])
        #expect(try StoredFiles.paths(through: "2026-11-27", in: scenario.open()) == ["2026-11-27/catalog.csv", "2026-11-27/server/s.jsonl"])
    }

    @Test("any sample-data file arriving a night late gives what a full rebuild gives, and only the catalog rebuilds everything")
    func eachFileLate() throws {
        let files = try SourceFile.list(in: Self.sampleData)
        #expect(files.count >= 10)
        let full = try Scenario()
        for file in files { try full.link(file) }
        _ = try run(full, input: full.input)
        for late in files {
            let scenario = try Scenario()
            for file in files where file.relativePath != late.relativePath { try scenario.link(file) }
            _ = try run(scenario, input: scenario.input)
            try scenario.link(late)
            let night = try run(scenario, input: scenario.input)
            #expect(night.ingest.files.filter { $0.status == .added }.map(\.path) == [late.relativePath])
            if late.kind == .catalog {
                #expect(night.join.recomputedTransactions == nil, "a new catalog reprices everything")
                #expect(night.join.fullRebuildReason == "a new or changed product catalog")
            } else {
                let total = try scenario.open().scalar("SELECT count(*) FROM int_transactions_resolved").integerValue
                let recomputed = try #require(night.join.recomputedTransactions, "\(late.relativePath)")
                #expect(night.join.fullRebuildReason == nil, "\(late.relativePath)")
                #expect(recomputed < total, "\(late.relativePath)")
            }
            try expectSame(scenario, full, "\(late.relativePath) late")
        }
    }

    @Test("files replaced by longer versions (every source at once) give what a full rebuild gives")
    func replacedFiles() throws {
        let files = try SourceFile.list(in: Self.sampleData)
        let scenario = try Scenario()
        // Night 1: the first half of every plain file's lines; night 2: the whole files replace them.
        for file in files {
            guard !file.relativePath.hasSuffix(".gz") else { try scenario.link(file); continue }
            let lines = try String(contentsOfFile: file.absolutePath, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            try lines.prefix(max(1, lines.count / 2)).joined(separator: "\n").write(
                toFile: try scenario.place(file), atomically: true, encoding: .utf8)
        }
        _ = try run(scenario, input: scenario.input)
        for file in files where !file.relativePath.hasSuffix(".gz") {
            let target = scenario.input + "/" + file.relativePath
            try FileManager.default.removeItem(atPath: target)
            try FileManager.default.copyItem(atPath: file.absolutePath, toPath: target)
        }
        let night = try run(scenario, input: scenario.input)
        #expect(night.ingest.files.filter { $0.status == .replaced }.count == files.filter { !$0.relativePath.hasSuffix(".gz") }.count)
        let full = try Scenario()
        for file in files { try full.link(file) }
        _ = try run(full, input: full.input)
        try expectSame(scenario, full, "replaced")
    }

    @Test("a registrations file replaced by a shorter one drops its users' installs, as a full rebuild does")
    func usersNoLongerReported() throws {
        let files = try SourceFile.list(in: Self.sampleData)
        let signups = try #require(files.first { $0.kind == .registrations })
        let scenario = try Scenario()
        for file in files { try scenario.link(file) }
        _ = try run(scenario, input: scenario.input)
        let before = try scenario.open().scalar("SELECT count(*) FROM fct_user_installs").integerValue

        // Night 2: the same file keeping only its first third of lines (so it is replaced).
        let lines = try String(contentsOfFile: signups.absolutePath, encoding: .utf8).split(separator: "\n")
        let target = scenario.input + "/" + signups.relativePath
        try FileManager.default.removeItem(atPath: target)
        try (lines.prefix(lines.count / 3).joined(separator: "\n") + "\n").write(toFile: target, atomically: true, encoding: .utf8)
        let night = try run(scenario, input: scenario.input)
        #expect(night.ingest.files.filter { $0.status == .replaced }.map(\.path) == [signups.relativePath])
        let after = try scenario.open().scalar("SELECT count(*) FROM fct_user_installs").integerValue
        #expect(after < before, "users who only signed up are gone")

        let full = try Scenario()
        for file in files where file != signups { try full.link(file) }
        try FileManager.default.copyItem(atPath: target, toPath: try full.place(signups))
        _ = try run(full, input: full.input)
        try expectSame(scenario, full, "shorter registrations")
    }

    @Test("a new delivery line that takes an order from the transaction the heuristic gave it is revisited")
    func stolenOrder() throws {
        let night1 = [
            Line.order("2026-11-01T10:00:00Z", "o_1", "u_1", "gems60"),
            Line.order("2026-11-01T10:05:00Z", "o_2", "u_1", "gems60"),
        ]
        let receipts1 = [
            Line.v2Receipt("2026-11-01T10:10:00Z", "u_1", transaction: Line.v2("t_1", "gems60", purchase: "2026-11-01T10:06:00Z")),
        ]
        let night2 = [Line.delivered("2026-11-03T09:00:00Z", "u_1", "t_2", "gems60", orderID: "o_2")]
        let receipts2 = [
            Line.v2Receipt("2026-11-03T08:59:00Z", "u_1", transaction: Line.v2("t_2", "gems60", purchase: "2026-11-01T10:07:00Z")),
        ]
        let incremental = try Scenario()
        try incremental.catalog()
        _ = try incremental.write("server/a.jsonl", night1).write("receipts/a.jsonl", receipts1)
        _ = try run(incremental, input: incremental.input)
        #expect(try incremental.open().scalar("SELECT order_id FROM int_transactions_resolved WHERE transaction_id = 't_1'") == .text("o_2"))
        _ = try incremental.write("server/b.jsonl", night2).write("receipts/b.jsonl", receipts2)
        let night = try run(incremental, input: incremental.input)
        #expect(night.join.recomputedTransactions == 2)
        // Rule 1 gives o_2 to t_2; the heuristic then gives t_1 the other order.
        #expect(try incremental.open().scalar("SELECT order_id FROM int_transactions_resolved WHERE transaction_id = 't_1'") == .text("o_1"))

        let full = try Scenario()
        try full.catalog()
        _ = try full.write("server/a.jsonl", night1).write("receipts/a.jsonl", receipts1)
            .write("server/b.jsonl", night2).write("receipts/b.jsonl", receipts2)
        _ = try run(full, input: full.input)
        try expectSame(incremental, full, "stolen order")
    }

    @Test("an order id no order line has (a placeholder every client sends, an app's fixed appAccountToken) links nothing: each user's purchase is a component of its own, a night adding one more recomputes it alone, as a full rebuild decides; near miss: the night an order line with that id arrives reaches every transaction naming it")
    func placeholderOrderIDLinksNothing() throws {
        let token = "00000000-0000-4000-8000-000000000000"
        // User n orders, buys a minute later, sends the receipt and is delivered, naming the
        // placeholder order id "undefined" and carrying the fixed token; the heuristic matches o_n.
        func purchase(_ n: Int) -> (server: [String], receipts: [String]) {
            let minute = (n < 10 ? "0" : "") + String(n)
            return ([Line.order("2026-11-01T10:\(minute):00Z", "o_\(n)", "u_\(n)", "gems60"),
                     Line.delivered("2026-11-01T10:\(minute):40Z", "u_\(n)", "t_\(n)", "gems60", orderID: "undefined")],
                    [Line.v2Receipt("2026-11-01T10:\(minute):35Z", "u_\(n)", orderID: "undefined",
                                    transaction: Line.v2("t_\(n)", "gems60", purchase: "2026-11-01T10:\(minute):30Z", token: token))])
        }
        let first = (1...20).map(purchase), late = purchase(21)
        let orderLine = [Line.order("2026-11-01T09:00:00Z", "undefined", "u_5", "gems60")]
        let nights: [(files: [(String, [String])], recomputed: Int)] = [
            ([("server/a.jsonl", first.flatMap(\.server)), ("receipts/a.jsonl", first.flatMap(\.receipts))], 0),
            ([("server/b.jsonl", late.server), ("receipts/b.jsonl", late.receipts)], 1),
            // The id is an order now: every delivery, receipt and token naming it competes for it.
            ([("server/c.jsonl", orderLine)], 21),
        ]
        let incremental = try Scenario()
        try incremental.catalog()
        for (number, night) in nights.enumerated() {
            for (path, lines) in night.files { try incremental.write(path, lines) }
            let result = try run(incremental, input: incremental.input)
            if number == 0 {
                #expect(result.join.recomputedTransactions == nil)
                let batches = try JoinComponents.batches(in: SQLiteJoinStore(incremental.open()), transactions: 1)
                #expect(batches.count == 20, "one component per user")
            } else {
                #expect(result.join.recomputedTransactions == night.recomputed, "night \(number + 1)")
            }
            let full = try Scenario()
            try full.catalog()
            for (path, lines) in nights.prefix(number + 1).flatMap(\.files) { try full.write(path, lines) }
            _ = try run(full, input: full.input)
            try expectSame(incremental, full, "night \(number + 1)")
            let matched = try incremental.open().scalar("SELECT count(*) FROM int_transactions_resolved WHERE order_id = 'o_' || substr(transaction_id, 3)")
            #expect(matched == .integer(number == 2 ? 20 : Int64(number == 0 ? 20 : 21)), "night \(number + 1): each transaction its user's order")
        }
        // The earliest delivery naming it takes it.
        #expect(try incremental.open().scalar("SELECT transaction_id FROM int_transactions_resolved WHERE order_id = 'undefined'") == .text("t_1"))
    }

    @Test("a replaced file that takes a delivery from a user who did not buy it revisits that user's findings")
    func removedDeliveryRevisitsItsUser() throws {
        func subscription(_ id: String, _ user: String, day: Int) -> String {
            Line.v2Receipt("2026-11-0\(day)T10:10:00Z", user, transaction: Line.v2(
                id, "pro.monthly", purchase: "2026-11-0\(day)T10:00:00Z", expires: "2026-12-0\(day)T10:00:00Z"))
        }
        let receipts = [subscription("t_a", "u_1", day: 1), subscription("t_b", "u_1", day: 2), subscription("t_c", "u_2", day: 3)]
        let server = [
            Line.delivered("2026-11-01T10:11:00Z", "u_1", "t_a", "pro.monthly"),
            Line.delivered("2026-11-02T10:11:00Z", "u_1", "t_b", "pro.monthly"),
            Line.delivered("2026-11-03T10:11:00Z", "u_2", "t_c", "pro.monthly"),
        ]
        let otherOrder = Line.order("2026-11-04T09:00:00Z", "o_9", "u_3", "gems60")
        let incremental = try Scenario()
        try incremental.catalog()
        // u_1 bought t_b; b.jsonl also delivers it to u_2, who then holds two overlapping chains.
        _ = try incremental.write("receipts/a.jsonl", receipts).write("server/a.jsonl", server)
            .write("server/b.jsonl", [Line.delivered("2026-11-02T10:12:00Z", "u_2", "t_b", "pro.monthly"), otherOrder])
        _ = try run(incremental, input: incremental.input)
        let multi = "SELECT group_concat(user_id, ',') FROM (SELECT user_id FROM fct_findings WHERE kind = 'multi_apple_id_subscription' ORDER BY 1)"
        #expect(try incremental.open().scalar(multi) == .text("u_1,u_2"))

        // The shipper's corrected b.jsonl no longer has that line.
        _ = try incremental.write("server/b.jsonl", [otherOrder])
        let night = try run(incremental, input: incremental.input)
        #expect(night.ingest.files.filter { $0.status == .replaced }.map(\.path) == ["server/b.jsonl"])
        #expect(try incremental.open().scalar(multi) == .text("u_1"))

        let full = try Scenario()
        try full.catalog()
        _ = try full.write("receipts/a.jsonl", receipts).write("server/a.jsonl", server).write("server/b.jsonl", [otherOrder])
        _ = try run(full, input: full.input)
        try expectSame(incremental, full, "removed delivery")
    }

    @Test("a renewal that arrives on a later night brings its chain's first purchase into the night, reached only through the chain")
    func renewalReachesItsChainHead() throws {
        let first = [
            Line.v2Receipt("2026-11-01T10:10:00Z", "u_1", transaction: Line.v2(
                "t_1", "pro.monthly", purchase: "2026-11-01T10:00:00Z", expires: "2026-12-01T10:00:00Z")),
        ]
        let firstDelivery = [Line.delivered("2026-11-01T10:11:00Z", "u_1", "t_1", "pro.monthly")]
        // Another account sends and receives the renewal: nothing links it to t_1 but its chain.
        let renewal = [
            Line.v2Receipt("2026-12-01T10:10:00Z", "u_2", transaction: Line.v2(
                "t_2", "pro.monthly", purchase: "2026-12-01T10:00:00Z", original: "t_1", expires: "2027-01-01T10:00:00Z")),
        ]
        let renewalDelivery = [Line.delivered("2026-12-01T10:11:00Z", "u_2", "t_2", "pro.monthly")]
        let incremental = try Scenario()
        try incremental.catalog()
        _ = try incremental.write("receipts/a.jsonl", first).write("server/a.jsonl", firstDelivery)
        _ = try run(incremental, input: incremental.input)
        _ = try incremental.write("receipts/b.jsonl", renewal).write("server/b.jsonl", renewalDelivery)
        let night = try run(incremental, input: incremental.input)
        #expect(night.join.recomputedTransactions == 2)
        #expect(try incremental.open().scalar("""
            SELECT original_transaction_id FROM fct_findings WHERE kind = 'shared_apple_id_subscription'
            """) == .text("t_1"))

        let full = try Scenario()
        try full.catalog()
        _ = try full.write("receipts/a.jsonl", first).write("server/a.jsonl", firstDelivery)
            .write("receipts/b.jsonl", renewal).write("server/b.jsonl", renewalDelivery)
        _ = try run(full, input: full.input)
        try expectSame(incremental, full, "renewal")
    }

    @Test("a night that only moves the as-of past a purchase's due time makes it a lost delivery, as a full rebuild does")
    func asOfMovesPastDue() throws {
        // t_95, delivered, is no one's business on night 2; it is there so t_9's row is not the table's last.
        let receipts = [
            Line.v2Receipt("2026-11-01T10:05:00Z", "u_9", transaction: Line.v2("t_9", "gems60", purchase: "2026-11-01T10:00:00Z")),
            Line.v2Receipt("2026-11-01T10:07:00Z", "u_10", transaction: Line.v2("t_95", "gems60", purchase: "2026-11-01T10:02:00Z")),
        ]
        let night1 = [
            Line.order("2026-11-01T12:00:00Z", "o_7", "u_7", "gems60"),
            Line.delivered("2026-11-01T10:08:00Z", "u_10", "t_95", "gems60"),
        ]
        let night2 = [Line.order("2026-11-03T00:00:00Z", "o_8", "u_8", "gems60")]
        let incremental = try Scenario()
        try incremental.catalog()
        _ = try incremental.write("receipts/a.jsonl", receipts).write("server/a.jsonl", night1)
        _ = try run(incremental, input: incremental.input)
        #expect(try Scenario.findings(incremental.open()).filter { $0.kind == .lostDelivery }.isEmpty)
        let rowOfT9 = "SELECT rowid FROM int_transactions_resolved WHERE transaction_id = 't_9'"
        let before = try incremental.open().scalar(rowOfT9)
        // Deleted and inserted again, it would get a new rowid: max + 1.
        #expect(try before.integerValue < incremental.open().scalar("SELECT max(rowid) FROM int_transactions_resolved").integerValue)
        _ = try incremental.write("server/b.jsonl", night2)
        let night = try run(incremental, input: incremental.input)
        // Nothing links t_9 to the new order; only the as-of reaches it.
        #expect(night.join.recomputedTransactions == 1)
        // Recomputed, but its row came out the same: only changed rows are written, so it was not touched.
        #expect(try incremental.open().scalar(rowOfT9) == before)
        #expect(try Scenario.findings(incremental.open()).filter { $0.kind == .lostDelivery }.map(\.transactionID) == ["t_9"])

        let full = try Scenario()
        try full.catalog()
        _ = try full.write("receipts/a.jsonl", receipts).write("server/a.jsonl", night1).write("server/b.jsonl", night2)
        _ = try run(full, input: full.input)
        try expectSame(incremental, full, "as-of moved")
    }

    @Test("an unchanged old file is not read again, but the same file rewritten with other bytes of the same size is")
    func unchangedFilesByTime() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        let path = scenario.input + "/server/a.jsonl"
        _ = try scenario.write("server/a.jsonl", [Line.order("2026-11-01T10:00:00Z", "o_1", "u_1", "gems60")])
        let hourAgo = Date(timeIntervalSinceNow: -3600)
        try FileManager.default.setAttributes([.modificationDate: hourAgo], ofItemAtPath: path)
        _ = try run(scenario, input: scenario.input)
        let again = try run(scenario, input: scenario.input)
        #expect(again.ingest.files.allSatisfy { $0.status == .unchanged })
        // Same length, other user: a new modification time, so it is read, hashed and replaced.
        _ = try scenario.write("server/a.jsonl", [Line.order("2026-11-01T10:00:00Z", "o_1", "u_2", "gems60")])
        let changed = try run(scenario, input: scenario.input)
        #expect(changed.ingest.files.first { $0.path == "server/a.jsonl" }?.status == .replaced)
        #expect(try scenario.open().scalar("SELECT group_concat(user_id) FROM raw_server__orders WHERE order_id = 'o_1'") == .text("u_2"))
    }

    @Test("a line rejected as in the future is read once the clock passes it, and rejected again by an earlier clock, as a fresh store reads it")
    func clockPassesFutureLine() throws {
        // The delivery is stamped more than a day after night 1's clock: rejected then.
        let server = [Line.order("2026-11-01T10:00:00Z", "o_1", "u_1", "gems60"), Line.delivered("2026-11-04T10:00:00Z", "u_1", "t_9", "gems60")]
        let other = [Line.order("2026-11-01T11:00:00Z", "o_2", "u_2", "gems60")]
        let asOf = "2026-11-05T00:00:00Z"
        let incremental = try Scenario()
        try incremental.catalog()
        _ = try incremental.write("server/a.jsonl", server).write("server/b.jsonl", other)
        _ = try run(incremental, input: incremental.input, now: "2026-11-02T00:00:00Z", asOf: asOf)
        #expect(try incremental.output("rejects.csv").contains("server/a.jsonl,2,time in the future: 'ts' is 2026-11-04T10:00:00.000Z"))
        func status(_ result: RunResult, _ path: String) -> IngestedFile.Status? { result.ingest.files.first { $0.path == path }?.status }

        // Near miss: the clock moved, but the line is still more than a day ahead of it, so nothing is read again.
        let night2 = try run(incremental, input: incremental.input, now: "2026-11-03T09:00:00Z", asOf: asOf)
        #expect(night2.ingest.files.allSatisfy { $0.status == .unchanged })
        // Within a day of the clock the line can be true: its file is read again, the other is not.
        let night3 = try run(incremental, input: incremental.input, now: "2026-11-03T12:00:00Z", asOf: asOf)
        #expect(status(night3, "server/a.jsonl") == .replaced && status(night3, "server/b.jsonl") == .unchanged)
        #expect(try !incremental.output("rejects.csv").contains("time in the future"))
        #expect(try Scenario.findings(incremental.open()).filter { $0.kind == .orphanDelivery }.map(\.transactionID) == ["t_9"])
        let full = try Scenario()
        try full.catalog()
        _ = try full.write("server/a.jsonl", server).write("server/b.jsonl", other)
        _ = try run(full, input: full.input, now: "2026-11-03T12:00:00Z", asOf: asOf)
        try expectSame(incremental, full, "clock passed the line")
        // Read by that clock, the file is not read again the next night.
        #expect(try run(incremental, input: incremental.input, now: "2026-11-04T00:00:00Z", asOf: asOf).ingest.files.allSatisfy { $0.status == .unchanged })

        // A run with an earlier clock (a replayed day) rejects the line again, as a fresh store with that clock does.
        let back = try run(incremental, input: incremental.input, now: "2026-11-02T00:00:00Z", asOf: asOf)
        #expect(status(back, "server/a.jsonl") == .replaced && status(back, "server/b.jsonl") == .unchanged)
        let earlier = try Scenario()
        try earlier.catalog()
        _ = try earlier.write("server/a.jsonl", server).write("server/b.jsonl", other)
        _ = try run(earlier, input: earlier.input, now: "2026-11-02T00:00:00Z", asOf: asOf)
        try expectSame(incremental, earlier, "clock set back")
    }

    @Test("a refund time rejected as in the future is read once the clock passes it, and an accepted one rejected again by an earlier clock, as a fresh store reads it, though its line has no event time")
    func clockPassesFutureRefund() throws {
        // A V1 REFUND (no signing time) of a purchase the app's server logged, refunded 2026-11-04T10:00.
        let refund = #"{"notification_type":"REFUND","unified_receipt":{"environment":"Production","latest_receipt_info":[{"transaction_id":"t_1","product_id":"gems60","purchase_date_ms":"\#(Line.ms("2026-11-01T10:00:00Z"))","quantity":"1","cancellation_date_ms":"\#(Line.ms("2026-11-04T10:00:00Z"))"}]}}"#
        let purchase = [Line.v2Receipt("2026-11-01T10:00:05Z", "u_1", transaction: Line.v2("t_1", "gems60", purchase: "2026-11-01T10:00:00Z"))]
        let asOf = "2026-11-05T00:00:00Z"
        func write(_ scenario: Scenario) throws {
            try scenario.catalog()
            _ = try scenario.write("notifications/a.jsonl", [refund]).write("receipts/b.jsonl", purchase)
        }
        func status(_ result: RunResult, _ path: String) -> IngestedFile.Status? { result.ingest.files.first { $0.path == path }?.status }
        func fresh(now: String) throws -> Scenario { try freshStore(now: now, asOf: asOf, inputs: write) }
        let incremental = try Scenario()
        try write(incremental)
        _ = try run(incremental, input: incremental.input, now: "2026-11-02T00:00:00Z", asOf: asOf)
        #expect(try incremental.output("rejects.csv").contains(
            "notifications/a.jsonl,1,time in the future: 'unified_receipt.latest_receipt_info[0].cancellation_date_ms' is 2026-11-04T10:00:00.000Z"))

        // Within a day of the clock the refund can have happened: its file is read again, the other is not.
        let night2 = try run(incremental, input: incremental.input, now: "2026-11-03T12:00:00Z", asOf: asOf)
        #expect(status(night2, "notifications/a.jsonl") == .replaced && status(night2, "receipts/b.jsonl") == .unchanged)
        #expect(try !incremental.output("rejects.csv").contains("time in the future"))
        try expectSame(incremental, try fresh(now: "2026-11-03T12:00:00Z"), "clock passed the refund")
        // Near miss: a later clock reads nothing again.
        #expect(try run(incremental, input: incremental.input, now: "2026-11-04T00:00:00Z", asOf: asOf).ingest.files.allSatisfy { $0.status == .unchanged })

        // An earlier clock (a replayed day) rejects the refund again, as a fresh store with that clock does.
        let back = try run(incremental, input: incremental.input, now: "2026-11-02T00:00:00Z", asOf: asOf)
        #expect(status(back, "notifications/a.jsonl") == .replaced && status(back, "receipts/b.jsonl") == .unchanged)
        try expectSame(incremental, try fresh(now: "2026-11-02T00:00:00Z"), "clock set back before the refund")
    }

    @Test("a spend day and a Sales Report day rejected as in the future are read once the clock is within a day of their start, and rejected again by an earlier clock, as a fresh store reads them")
    func clockPassesFutureDays() throws {
        // 2026-11-04 starts first at UTC+14, 2026-11-03T10:00Z; in Los Angeles, at 2026-11-04T08:00Z.
        let spend = ["date,media_source,campaign,spend,currency", "2026-11-01,Facebook Ads,FB_US,10,USD", "2026-11-04,Facebook Ads,FB_US,12,USD"]
        let report = [AppleSalesReportTests.currentHeader, AppleTieOutTests.sales("2026-11-01", "gems60", units: 1, country: "US"),
                      AppleTieOutTests.sales("2026-11-04", "gems60", units: 2, country: "US")]
        let other = [Line.order("2026-11-01T11:00:00Z", "o_2", "u_2", "gems60")]
        let asOf = "2026-11-05T00:00:00Z"
        func write(_ scenario: Scenario) throws {
            try scenario.catalog()
            _ = try scenario.write("spend/s.csv", spend).write("apple/S_D_1.txt", report).write("server/b.jsonl", other)
        }
        func fresh(now: String) throws -> Scenario { try freshStore(now: now, asOf: asOf, inputs: write) }
        let incremental = try Scenario()
        try write(incremental)
        _ = try run(incremental, input: incremental.input, now: "2026-11-02T00:00:00Z", asOf: asOf)
        let rejects = try incremental.output("rejects.csv")
        #expect(rejects.contains(#"spend/s.csv,3,"time in the future: 'date' is 2026-11-04, which starts in no zone before 2026-11-03T10:00:00.000Z""#))
        #expect(rejects.contains(
            #"apple/S_D_1.txt,3,"time in the future: 'Begin Date' is 11/04/2026, which starts in Los Angeles at 2026-11-04T08:00:00.000Z""#))

        // Near miss: the clock moved, but both days still start more than a day after it: nothing is read again.
        #expect(readAgain(try run(incremental, input: incremental.input, now: "2026-11-02T09:00:00Z", asOf: asOf)) == [])
        // Within a day of the spend day's first start: its file is read again, the others are not.
        #expect(readAgain(try run(incremental, input: incremental.input, now: "2026-11-02T10:00:00Z", asOf: asOf)) == ["spend/s.csv"])
        // Within a day of the Pacific day's start: the report is read again.
        #expect(readAgain(try run(incremental, input: incremental.input, now: "2026-11-03T08:00:00Z", asOf: asOf)) == ["apple/S_D_1.txt"])
        #expect(try !incremental.output("rejects.csv").contains("time in the future"))
        try expectSame(incremental, try fresh(now: "2026-11-03T08:00:00Z"), "clock within a day of the days")
        // Read by that clock, nothing is read again the next night.
        #expect(readAgain(try run(incremental, input: incremental.input, now: "2026-11-04T00:00:00Z", asOf: asOf)) == [])

        // An earlier clock (a replayed day) rejects both days again, as a fresh store with that clock does.
        #expect(readAgain(try run(incremental, input: incremental.input, now: "2026-11-02T00:00:00Z", asOf: asOf)) == ["apple/S_D_1.txt", "spend/s.csv"])
        try expectSame(incremental, try fresh(now: "2026-11-02T00:00:00Z"), "clock set back before the days")
    }

    @Test("near miss: a clock exactly a day before a stored spend or Sales Report day starts judges it as the clock that read it; a millisecond earlier one reads its file again, as a fresh store judges it")
    func clockADayBeforeTheDay() throws {
        // 2026-11-04 starts first at UTC+14, 2026-11-03T10:00Z, and in Los Angeles at 2026-11-04T08:00Z.
        let asOf = "2026-11-05T00:00:00Z"
        func write(_ scenario: Scenario) throws {
            try scenario.catalog()
            _ = try scenario.write("spend/s.csv", ["date,media_source,campaign,spend,currency", "2026-11-04,Facebook Ads,FB_US,12,USD"])
                .write("apple/S_D_1.txt", [AppleSalesReportTests.currentHeader, AppleTieOutTests.sales("2026-11-04", "gems60", units: 2, country: "US")])
                .write("server/b.jsonl", [Line.order("2026-11-01T11:00:00Z", "o_2", "u_2", "gems60")])
        }
        let incremental = try Scenario()
        try write(incremental)
        _ = try run(incremental, input: incremental.input, now: "2026-11-06T00:00:00Z", asOf: asOf)
        // Each clock in turn: the files it reads again, and then the store equals a fresh one fed by that clock.
        for (now, expected) in [("2026-11-03T08:00:00.000Z", []), ("2026-11-03T07:59:59.999Z", ["apple/S_D_1.txt"]),
                                 ("2026-11-02T10:00:00.000Z", []), ("2026-11-02T09:59:59.999Z", ["spend/s.csv"]),
                                 ("2026-11-03T08:00:00.000Z", ["apple/S_D_1.txt", "spend/s.csv"])] {
            let night = try run(incremental, input: incremental.input, now: now, asOf: asOf)
            #expect(readAgain(night) == expected, "\(now)")
            try expectSame(incremental, try freshStore(now: now, asOf: asOf, inputs: write), "clock \(now)")
        }
    }

    @Test("a store an older iaprecon fed a spend day and a Sales Report day years ahead rejects them on its next run, as a fresh store does")
    func futureDaysAfterUpgrade() throws {
        func write(_ scenario: Scenario) throws {
            try scenario.catalog()
            _ = try scenario.write("spend/s.csv", ["date,media_source,campaign,spend,currency", "2026-11-01,Facebook Ads,FB_US,10,USD",
                                                   "2062-11-01,Facebook Ads,FB_US,12,USD"])
                .write("apple/S_D_1.txt", [AppleSalesReportTests.currentHeader, AppleTieOutTests.sales("2026-11-01", "gems60", units: 1, country: "US"),
                                           AppleTieOutTests.sales("2062-11-01", "gems60", units: 2, country: "US")])
        }
        let now = "2026-11-05T00:00:00Z"
        let upgraded = try Scenario()
        try write(upgraded)
        // What an older iaprecon kept: every day read, no clock recorded with the files.
        _ = try run(upgraded, input: upgraded.input, now: "2062-11-01T00:00:00Z", asOf: now)
        let migration = try #require(Schema.migrations.first { $0.sql.contains("read again for days after the clock") }?.id)
        let database = try upgraded.open()
        try database.execute("DELETE FROM file_clock_span; DELETE FROM schema_migrations WHERE id >= \(migration);")
        try Schema.migrate(database)
        let night = try run(upgraded, input: upgraded.input, now: now, asOf: now)
        #expect(night.ingest.files.filter { $0.status == .replaced }.map(\.path).sorted() == ["apple/S_D_1.txt", "spend/s.csv"])
        #expect(night.ingest.totals.rejected == 2)
        try expectSame(upgraded, try freshStore(now: now, asOf: now, inputs: write), "upgraded store")
    }

    @Test("a store an older iaprecon fed a spend day and a Sales Report day before the App Store opened rejects them on its next run, as a fresh store does; a file without one is not read again")
    func daysBeforeTheAppStoreAfterUpgrade() throws {
        func write(_ scenario: Scenario) throws {
            try scenario.catalog()
            _ = try scenario.write("spend/s.csv", ["date,media_source,campaign,spend,currency", "2026-11-01,Facebook Ads,FB_US,10,USD",
                                                   "1926-11-01,Facebook Ads,FB_US,12,USD"])
                .write("spend/t.csv", ["date,media_source,campaign,spend,currency", "2026-11-02,Facebook Ads,FB_US,7,USD"])
                .write("apple/S_D_1.txt", [AppleSalesReportTests.currentHeader, AppleTieOutTests.sales("2026-11-01", "gems60", units: 1, country: "US"),
                                           AppleTieOutTests.sales("1926-11-01", "gems60", units: 2, country: "US")])
        }
        let now = "2026-11-05T00:00:00Z"
        let upgraded = try Scenario()
        try write(upgraded)
        _ = try run(upgraded, input: upgraded.input, now: now, asOf: now)
        // What an older iaprecon kept: the two old days read as any other, not rejected.
        let migration = try #require(Schema.migrations.first { $0.sql.contains("read again for days before the App Store") }?.id)
        let database = try upgraded.open()
        try database.execute("""
            DELETE FROM rejects;
            INSERT INTO raw_spend__days SELECT file_id, 3, item, '1926-11-01', media_source, campaign, '12', currency
              FROM raw_spend__days WHERE day = '2026-11-01';
            INSERT INTO raw_apple__sales SELECT file_id, 3, item, '1926-11-01', product_id, product_type, 2, country, customer_price,
              customer_currency, proceeds, proceeds_currency FROM raw_apple__sales WHERE day = '2026-11-01' AND product_id IS NOT NULL;
            DELETE FROM schema_migrations WHERE id >= \(migration);
            """)
        try Schema.migrate(database)
        let night = try run(upgraded, input: upgraded.input, now: now, asOf: now)
        // Near miss: spend/t.csv holds no such day and is not read again.
        #expect(readAgain(night) == ["apple/S_D_1.txt", "spend/s.csv"])
        #expect(try expectMigratedAsFresh(upgraded, now: now, asOf: now, "upgraded store", inputs: write) == [
            "time before the App Store opened: 'Begin Date' is 11/01/1926", "time before the App Store opened: 'date' is 1926-11-01",
        ])
    }

    @Test("a store an older iaprecon kept an IP or email address of a rejected line in reads its file again on its next run, and then holds what a fresh store holds; a file whose rejects hold none is not read again")
    func addressesInRejectsAfterUpgrade() throws {
        func write(_ scenario: Scenario) throws {
            _ = try scenario.write("server/a.jsonl", [
                #"{"ts":"yesterday","event":"order_created","order_id":"o1","user_id":"u_1","product_id":"gems60","client_ip":"203.0.113.77"}"#,
                #"{"ts":"2026-11-01T10:00:00Z","event":"order_created","order_id":"o2","user_id":"u_2","product_id":"gems60"}"#,
            ])
            .write("server/b.jsonl", [#"{"ts":"2026-11-01 10:00","event":"order_created","order_id":"o3","user_id":"u_3","product_id":"gems60"}"#])
        }
        let now = "2026-11-05T00:00:00Z"
        let upgraded = try Scenario()
        try write(upgraded)
        _ = try run(upgraded, input: upgraded.input, now: now, asOf: now)
        // What an older iaprecon kept: the address in the reject's text.
        let migration = try #require(Schema.migrations.first { $0.sql.contains("read again for addresses in rejected lines") }?.id)
        let database = try upgraded.open()
        try database.execute("""
            UPDATE rejects SET text = replace(text, '[IP address redacted]', '203.0.113.77');
            DELETE FROM schema_migrations WHERE id >= \(migration);
            """)
        #expect(try database.scalar("SELECT count(*) FROM rejects WHERE text LIKE '%203.0.113.77%'") == .integer(1))
        #expect(try database.scalar("SELECT count(DISTINCT file_id) FROM rejects") == .integer(2))
        try Schema.migrate(database)
        let night = try run(upgraded, input: upgraded.input, now: now, asOf: now)
        // Near miss: server/b.jsonl's reject holds a time, no address, and is not read again.
        #expect(readAgain(night) == ["server/a.jsonl"])
        _ = try expectMigratedAsFresh(upgraded, now: now, asOf: now, "upgraded store", inputs: write)
        func texts(_ scenario: Scenario) throws -> [String] {
            var texts: [String] = []
            try scenario.open().forEach("SELECT r.text FROM rejects r JOIN files f USING (file_id) ORDER BY f.path, r.line") { texts.append($0.string(0)) }
            return texts
        }
        let fresh = try freshStore(now: now, asOf: now, inputs: write)
        #expect(try texts(upgraded) == texts(fresh))
        #expect(try texts(upgraded).allSatisfy { !$0.contains("203.0.113.77") })
    }

    @Test("a store an older iaprecon cut a rejected line's text in the middle of an email or IP address in (its 300-byte cut, which no pattern of migration 44 sees) reads its file again on its next run, and then holds what a fresh store holds, the address replaced; near miss: a file whose rejects are not cut is not read again")
    func addressesCutInRejectsAfterUpgrade() throws {
        // A rejected order line whose email address starts at byte 290: an older iaprecon kept its first 300 bytes.
        let head = #"{"ts":"yesterday","event":"order_created","order_id":"o1","user_id":"u_1","product_id":"gems60","note":""#
        let tail = #"","email":""#
        let line = head + String(repeating: "a ", count: (290 - head.utf8.count - tail.utf8.count) / 2) + tail
            + #"jane.doe@example.com"}"#
        func write(_ scenario: Scenario) throws {
            _ = try scenario.write("server/a.jsonl", [line])
                .write("server/b.jsonl", [#"{"ts":"2026-11-01 10:00","event":"order_created","order_id":"o3","user_id":"u_3","product_id":"gems60"}"#])
        }
        let now = "2026-11-05T00:00:00Z"
        let upgraded = try Scenario()
        try write(upgraded)
        _ = try run(upgraded, input: upgraded.input, now: now, asOf: now)
        let older = String(decoding: Array(line.utf8).prefix(300), as: UTF8.self) + "…"
        #expect(older.hasSuffix(#""email":"jane.doe@ex…"#), "\(older)")
        let migration = try #require(Schema.migrations.first { $0.sql.contains("read again for addresses cut in rejected lines") }?.id)
        let database = try upgraded.open()
        try database.run("UPDATE rejects SET text = ? WHERE file_id = (SELECT file_id FROM files WHERE path = 'server/a.jsonl')", [.text(older)])
        #expect(try database.scalar("SELECT count(*) FROM rejects WHERE text LIKE '%jane.doe@ex%'") == .integer(1))
        try database.execute("DELETE FROM schema_migrations WHERE id >= \(migration)")
        try Schema.migrate(database)
        let night = try run(upgraded, input: upgraded.input, now: now, asOf: now)
        // Near miss: server/b.jsonl's reject is whole, and is not read again.
        #expect(readAgain(night) == ["server/a.jsonl"])
        _ = try expectMigratedAsFresh(upgraded, now: now, asOf: now, "upgraded store", inputs: write)
        var texts: [String] = []
        try upgraded.open().forEach("SELECT text FROM rejects") { texts.append($0.string(0)) }
        #expect(texts.count == 2 && texts.allSatisfy { !$0.contains("jane") }, "\(texts)")
    }

    @Test("a store an older iaprecon kept a REFUND_REVERSED without signedDate in (which undid a refund at its revocationDate, or was a purchase's only sighting) reads its file again on its next run, which rejects the line, and then holds what a fresh store holds; near miss: a file whose reversal is signed is not read again")
    func reversalsWithoutSigningTimeAfterUpgrade() throws {
        let (purchase, refunded) = ("2026-11-10T10:00:00Z", "2026-11-12T10:00:00Z")
        func reversal(_ uuid: String, signed: Bool, _ transaction: String) -> String {
            let signedDate = signed ? ",\"signedDate\":\(Line.ms("2026-11-14T10:00:00Z"))" : ""
            return "{\"notificationType\":\"REFUND_REVERSED\",\"notificationUUID\":\"\(uuid)\"\(signedDate),"
                + "\"data\":{\"environment\":\"Production\",\"transactionInfo\":\(transaction)}}"
        }
        func write(_ scenario: Scenario, signed: Bool) throws {
            try scenario.catalog()
            _ = try scenario.write("server/s.jsonl", ["t1", "t2", "t3"].map { Line.delivered("2026-11-10T10:00:09Z", "u_" + $0, $0, "gems60") })
                .write("notifications/a.jsonl", [
                    Line.notification("REFUND", uuid: "n1", signed: refunded,
                                      transaction: Line.v2("t1", "gems60", purchase: purchase, revocation: refunded)),
                    // Apple's reversal of t1's refund, still carrying its revocationDate, and one of t2, seen nowhere else.
                    reversal("n2", signed: signed, Line.v2("t1", "gems60", purchase: purchase, revocation: refunded)),
                    reversal("n3", signed: signed, Line.v2("t2", "gems60", purchase: purchase)),
                ])
                .write("notifications/b.jsonl", [
                    Line.notification("REFUND", uuid: "n4", signed: refunded,
                                      transaction: Line.v2("t3", "gems60", purchase: purchase, revocation: refunded)),
                    reversal("n5", signed: true, Line.v2("t3", "gems60", purchase: purchase)),
                ])
        }
        let now = "2026-11-30T00:00:00Z"
        let fresh = try freshStore(now: now, asOf: now) { try write($0, signed: false) }
        #expect(try fresh.output("rejects.csv").components(separatedBy: "REFUND_REVERSED without signedDate").count == 3)
        // What an older iaprecon kept: the lines of a.jsonl as it read them, with no signing time.
        let older = try Scenario()
        try write(older, signed: true)
        _ = try run(older, input: older.input, now: now, asOf: now)
        try write(older, signed: false)
        let database = try older.open()
        let hash = try #require(try fresh.open().scalar("SELECT content_hash FROM files WHERE path = 'notifications/a.jsonl'"))
        try database.run("UPDATE files SET content_hash = ?, mtime_ns = NULL WHERE path = 'notifications/a.jsonl'", [hash])
        try database.execute("""
            UPDATE raw_apple__transactions SET event_ms = NULL
              WHERE file_id = (SELECT file_id FROM files WHERE path = 'notifications/a.jsonl') AND line > 1;
            UPDATE raw_notifications__notifications SET signed_ms = NULL
              WHERE file_id = (SELECT file_id FROM files WHERE path = 'notifications/a.jsonl') AND line > 1;
            """)
        let migration = try #require(Schema.migrations.first { $0.sql.contains("read again for reversals without signedDate") }?.id)
        try database.execute("DELETE FROM schema_migrations WHERE id >= \(migration) AND id != \(Self.locallySignedMigration)")
        try Schema.migrate(database)
        let night = try run(older, input: older.input, now: now, asOf: now)
        #expect(readAgain(night) == ["notifications/a.jsonl"])
        let reasons = try expectMigratedAsFresh(older, now: now, asOf: now, "upgraded store") { try write($0, signed: false) }
        #expect(reasons == ["REFUND_REVERSED without signedDate", "REFUND_REVERSED without signedDate"])
    }

    @Test("a store an older iaprecon fed lowercase IDFVs and IDFAs reads the registrations and MMP files holding them again on its next run, and then holds what a fresh store holds; files of uppercase ids are not read again")
    func lowercaseDeviceIDsAfterUpgrade() throws {
        typealias Fixture = AttributionReportTests.Fixture
        let (upperV, lowerV) = ("2CD000E2-53E3-42F1-BBEB-3AEC0586E232", "2cd000e2-53e3-42f1-bbeb-3aec0586e232")
        let (upperA, lowerA) = ("931C586B-7429-4DD0-914D-BE67435210DD", "931c586b-7429-4dd0-914d-be67435210dd")
        let upperW = "B7DDF51A-E73A-40CD-85D4-BF51CB4D1724"
        func write(_ scenario: Scenario) throws {
            _ = try scenario.write("attribution/upper.csv", [Fixture.mmpHeader,
                                                            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "src", campaign: "V", idfv: upperV).csv,
                                                            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "src", campaign: "W", idfv: upperW).csv])
                .write("attribution/lower.csv", [Fixture.mmpHeader,
                                                 Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "src", campaign: "A", idfa: lowerA).csv])
                .write("registrations/lower.jsonl", [Fixture.signup("2026-11-10T09:00:00Z", "u1", idfv: lowerV)])
                .write("registrations/upper.jsonl", [Fixture.signup("2026-11-10T09:00:00Z", "u2", idfa: upperA),
                                                     Fixture.signup("2026-11-10T09:00:00Z", "u3", idfv: upperW)])
        }
        let now = "2026-11-30T00:00:00Z"
        // What an older iaprecon kept: the pseudonyms of the ids as written, so u1 and u2 joined no install.
        let older = try olderStoreOfLowercaseIDs(now: now, inputs: write, keptAsWritten: [
            ("UPDATE raw_registrations__users SET idfv = ? WHERE user_id = 'u1'", lowerV),
            ("UPDATE raw_mmp__events SET idfa = ? WHERE idfa IS NOT NULL", lowerA),
        ])
        let night = try run(older, input: older.input, now: now, asOf: now)
        // Near miss: the files of uppercase ids are not read again.
        #expect(readAgain(night) == ["attribution/lower.csv", "registrations/lower.jsonl"])
        #expect(try expectMigratedAsFresh(older, now: now, asOf: now, "upgraded store", inputs: write) == [])
        #expect(try Fixture.matchedBy(older) == ["customer_user_id": 0, "appsflyer_id": 0, "idfv": 2, "idfa": 1, "unattributed": 0])
    }

    @Test("a store an older iaprecon fed a locally signed notification about an App Store transaction reads its notifications files again on its next run, and then holds what a fresh store holds; a receipts file, and a store trusting Apple's root alone, read nothing again")
    func locallySignedNotificationsAfterUpgrade() throws {
        // Envelopes saying Xcode, which a local chain may sign, carrying a transaction of the environment given.
        func envelope(_ transactionID: String, uuid: String, environment: String) -> String {
            Line.notification("ONE_TIME_CHARGE", uuid: uuid, signed: "2026-11-20T08:00:00Z",
                              transaction: Line.v2(transactionID, "gems300", purchase: "2026-11-20T07:59:00Z", price: 4990, environment: environment))
                .replacingOccurrences(of: "\"data\":{\"environment\":\"Production\"", with: "\"data\":{\"environment\":\"Xcode\"")
        }
        // Leaf and intermediate under the test root: what it vouches for as a local chain, not as Apple's three certificates.
        let local = try #require(ES256Signer(privateKey: TestSigningChain.leafPrivateKey, x5c: Array(TestSigningChain.x5c.prefix(2))))
        func signed(_ envelope: String, by signer: ES256Signer) -> String { "{\"signedPayload\":\"\(signer.jws(payload: Array(envelope.utf8)))\"}" }
        let production = envelope("t1", uuid: "5f6c2a4e-1b7d-4c3a-9e8f-2d1c0b9a8e71", environment: "Production")
        func write(_ scenario: Scenario, notification: String) throws {
            try scenario.catalog()
            _ = try scenario.write("notifications/n.jsonl", [notification])
                .write("notifications/x.jsonl", [signed(envelope("t3", uuid: "5f6c2a4e-1b7d-4c3a-9e8f-2d1c0b9a8e73", environment: "Xcode"), by: local)])
                .write("receipts/r.jsonl", [Line.v2Receipt("2026-11-21T10:00:05Z", "u2",
                                                           transaction: Line.v2("t2", "gems300", purchase: "2026-11-21T10:00:00Z"))])
        }
        let now = "2026-11-30T00:00:00Z"
        let fresh = try freshStore(now: now, asOf: now) { try write($0, notification: signed(production, by: local)) }
        #expect(try fresh.output("rejects.csv").contains("locally signed, yet its transaction is a Production one"))
        // What an older iaprecon kept: t1 as verified, as an App Store envelope gives it.
        let older = try Scenario()
        try write(older, notification: signed(production, by: TestSigningChain.signer))
        _ = try run(older, input: older.input, now: now, asOf: now)
        let appleOnly = try Scenario()
        try FileManager.default.copyItem(atPath: older.databasePath, toPath: appleOnly.databasePath)
        try write(older, notification: signed(production, by: local))
        let database = try older.open()
        let hash = try #require(try fresh.open().scalar("SELECT content_hash FROM files WHERE path = 'notifications/n.jsonl'"))
        try database.run("UPDATE files SET content_hash = ?, mtime_ns = NULL WHERE path = 'notifications/n.jsonl'", [hash])
        let migration = try #require(Schema.migrations.first { $0.sql.contains("read again for transactions in locally signed notifications") }?.id)
        // Near miss: the same store, had it trusted Apple's root alone, reads nothing again.
        try appleOnly.open().execute("""
            UPDATE file_rules SET read_with = 'bundle any; signatures apple'; DELETE FROM schema_migrations WHERE id >= \(migration)
            """)
        #expect(try readAgainFor(appleOnly) == [:])
        try database.execute("DELETE FROM schema_migrations WHERE id >= \(migration)")
        try Schema.migrate(database)
        // Which chain signed a line is not stored: x.jsonl's local notification of an Xcode purchase is read again too.
        #expect(readAgain(try run(older, input: older.input, now: now, asOf: now)) == ["notifications/n.jsonl", "notifications/x.jsonl"])
        let reasons = try expectMigratedAsFresh(older, now: now, asOf: now, "upgraded store") { try write($0, notification: signed(production, by: local)) }
        #expect(reasons.count == 1 && reasons[0].contains("locally signed, yet its transaction is a Production one"), "\(reasons)")
    }

    @Test("a store an older iaprecon fed a lowercase IDFV whose last four characters are digits reads its file again too, and then holds what a fresh store holds; a file whose ids show uppercase letters is not read again")
    func lowercaseDeviceIDsOfDigitTailsAfterUpgrade() throws {
        typealias Fixture = AttributionReportTests.Fixture
        // The kept tail `1232` shows no letter: migration 47 cannot tell that this id was written in lowercase.
        let (upperV, lowerV) = ("2CD000E2-53E3-42F1-BBEB-3AEC05861232", "2cd000e2-53e3-42f1-bbeb-3aec05861232")
        let upperW = "B7DDF51A-E73A-40CD-85D4-BF51CB4D17AB"
        let upperX = "C8EEF62B-F84B-41DE-96E5-C062DC5E2841"
        func write(_ scenario: Scenario) throws {
            _ = try scenario.write("attribution/upper.csv", [Fixture.mmpHeader,
                                                            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "src", campaign: "V", idfv: upperV).csv,
                                                            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "src", campaign: "W", idfv: upperW).csv,
                                                            Fixture.MMPRow(time: "2026-11-10 08:00:00", mediaSource: "src", campaign: "X", idfv: upperX).csv])
                .write("registrations/lower.jsonl", [Fixture.signup("2026-11-10T09:00:00Z", "u1", idfv: lowerV)])
                .write("registrations/upper.jsonl", [Fixture.signup("2026-11-10T09:00:00Z", "u2", idfv: upperW),
                                                     Fixture.signup("2026-11-10T09:00:00Z", "u3", idfv: upperX)])
        }
        let now = "2026-11-30T00:00:00Z"
        // What an older iaprecon kept: the pseudonym of the id as written, so u1 joined no install.
        let older = try olderStoreOfLowercaseIDs(now: now, inputs: write, keptAsWritten: [
            ("UPDATE raw_registrations__users SET idfv = ? WHERE user_id = 'u1'", lowerV),
        ])
        let night = try run(older, input: older.input, now: now, asOf: now)
        // Near miss: files whose ids show uppercase letters (one of them with a tail of digits too) are not read again.
        #expect(readAgain(night) == ["registrations/lower.jsonl"])
        #expect(try expectMigratedAsFresh(older, now: now, asOf: now, "upgraded store", inputs: write) == [])
        #expect(try Fixture.matchedBy(older) == ["customer_user_id": 0, "appsflyer_id": 0, "idfv": 3, "idfa": 0, "unattributed": 0])
    }

    @Test("a store an older iaprecon fed a V2 upgrade, an offer-code receipt item and a family copy's refund reads their files again on its next run, and then holds what a fresh store holds; a file of V2 purchases alone is not read again")
    func upgradesAndOfferCodesAfterUpgrade() throws {
        let monthly = Line.v2("t1", "pro.monthly", purchase: "2026-11-01T10:00:00Z", expires: "2026-12-01T10:00:00Z", price: 9990,
                              revocation: "2026-11-11T10:00:00Z")
        let yearly = Line.v2("t2", "pro.yearly", purchase: "2026-11-11T10:00:00Z", original: "t1", expires: "2027-11-11T10:00:00Z", price: 79990)
        let offerItem = #"{"quantity":"1","product_id":"pro.monthly","transaction_id":"t3","original_transaction_id":"t3","purchase_date_ms":"\#(Line.ms("2026-11-20T10:00:00Z"))","offer_code_ref_name":"BLACKFRIDAY","is_trial_period":"false","is_in_intro_offer_period":"false"}"#
        func write(_ scenario: Scenario) throws {
            try scenario.catalog()
            _ = try scenario.write("server/s.jsonl", [Line.delivered("2026-11-01T10:00:09Z", "u1", "t1", "pro.monthly"),
                                                      Line.delivered("2026-11-11T10:00:09Z", "u1", "t2", "pro.yearly")])
                .write("receipts/upgrade.jsonl", [Line.v2Receipt("2026-11-11T10:00:05Z", "u1",
                                                                 transaction: SubscriptionLifecycleTests.upgraded(monthly) + "," + yearly)])
                .write("receipts/offer.jsonl", [RevenueReportTests.Fixture.inAppReceipt("2026-11-20T10:00:05Z", "u2", items: [offerItem])])
                .write("receipts/plain.jsonl", [Line.v2Receipt("2026-11-21T10:00:05Z", "u3",
                                                               transaction: Line.v2("t4", "gems60", purchase: "2026-11-21T10:00:00Z"))])
                .write("notifications/n.jsonl", [Line.notification("REVOKE", uuid: "n5", signed: "2026-11-22T10:00:00Z",
                                                                   transaction: Line.v2("t5", "pro.monthly", purchase: "2026-11-15T10:00:00Z",
                                                                                        ownership: "FAMILY_SHARED", revocation: "2026-11-22T10:00:00Z"))])
        }
        let now = "2026-11-30T00:00:00Z"
        let upgraded = try Scenario()
        try write(upgraded)
        _ = try run(upgraded, input: upgraded.input, now: now, asOf: now)
        // What an older iaprecon kept: the upgrade's end as a refund of the monthly plan, the offer code's item as no
        // offer, and the family copy's refund at its purchaser's price.
        let migration = try #require(Schema.migrations.first { $0.sql.contains("read again for upgrades and offer codes") }?.id)
        let database = try upgraded.open()
        try database.execute("""
            UPDATE raw_apple__transactions SET revocation_ms = \(Line.ms("2026-11-11T10:00:00Z")), expires_ms = \(Line.ms("2026-12-01T10:00:00Z"))
              WHERE transaction_id = 't1';
            UPDATE raw_apple__transactions SET offer = NULL WHERE transaction_id = 't3';
            UPDATE int_transactions_resolved SET refund_amount = '9.99' WHERE transaction_id = 't5';
            DELETE FROM schema_migrations WHERE id >= \(migration);
            """)
        try Schema.migrate(database)
        let night = try run(upgraded, input: upgraded.input, now: now, asOf: now)
        // Near miss: receipts/plain.jsonl holds a V2 purchase alone and is not read again.
        #expect(readAgain(night) == ["notifications/n.jsonl", "receipts/offer.jsonl", "receipts/upgrade.jsonl"])
        #expect(try expectMigratedAsFresh(upgraded, now: now, asOf: now, "upgraded store", inputs: write) == [])
    }

    @Test("a store an older iaprecon fed a plan an upgrade replaced, after a sighting of its full period, reads its subscriptions' files again on its next run and then holds what a fresh store holds; a file without a subscription is not read again")
    func upgradeEndsAfterUpgrade() throws {
        let (monthly, yearly) = (SubscriptionLifecycleTests.monthly, SubscriptionLifecycleTests.yearly)
        let replaced = SubscriptionLifecycleTests.upgraded(SubscriptionLifecycleTests.replaced)
        func write(_ scenario: Scenario) throws {
            try scenario.catalog()
            _ = try scenario.write("server/s.jsonl", [Line.delivered("2026-11-01T10:00:09Z", "u1", "t1", "pro.monthly"),
                                                      Line.delivered("2026-11-11T10:00:09Z", "u1", "t2", "pro.yearly")])
                .write("receipts/a.jsonl", [Line.v2Receipt("2026-11-01T10:00:05Z", "u1", transaction: monthly)])
                .write("receipts/b.jsonl", [Line.v2Receipt("2026-11-11T10:00:05Z", "u1", transaction: replaced + "," + yearly)])
                .write("receipts/gems.jsonl", [Line.v2Receipt("2026-11-21T10:00:05Z", "u3",
                                                              transaction: Line.v2("t4", "gems60", purchase: "2026-11-21T10:00:00Z"))])
        }
        let now = "2026-11-30T00:00:00Z"
        let upgraded = try Scenario()
        try write(upgraded)
        _ = try run(upgraded, input: upgraded.input, now: now, asOf: now)
        // What an older iaprecon kept: the upgrade only as the sighting's shorter expiry, which the full period hid.
        let migration = try #require(Schema.migrations.first { $0.sql.contains("read again for upgrade ends") }?.id)
        let database = try upgraded.open()
        try database.execute("""
            DROP TABLE raw_apple__transaction_upgrades;
            UPDATE int_transactions_resolved SET expires_ms = \(Line.ms("2026-12-01T10:00:00Z")) WHERE transaction_id = 't1';
            DELETE FROM schema_migrations WHERE id >= \(migration);
            """)
        try Schema.migrate(database)
        let night = try run(upgraded, input: upgraded.input, now: now, asOf: now)
        // Near miss: receipts/gems.jsonl holds a consumable alone and is not read again.
        #expect(readAgain(night) == ["receipts/a.jsonl", "receipts/b.jsonl"])
        #expect(try expectMigratedAsFresh(upgraded, now: now, asOf: now, "upgraded store", inputs: write) == [])
        #expect(try upgraded.output("transactions.csv").contains(",2026-11-01T10:00:00.000Z,2026-11-11T10:00:00.000Z,"))
    }

    @Test("a store an older iaprecon matched by a failed verification's claim joins that transaction and order again on its next run, with no file read again, and then holds what a fresh store holds")
    func failedClaimsAfterUpgrade() throws {
        let item = ReceiptClaimTests.item
        func write(_ scenario: Scenario) throws {
            try scenario.catalog()
            _ = try scenario.write("server/s.jsonl", [Line.order("2026-11-20T09:59:00Z", "o_buyer", "u_buyer", "gems60"),
                                                      Line.order("2026-11-20T09:30:00Z", "o_other", "u_other", "gems60")])
                .write("receipts/r.jsonl", [RevenueReportTests.Fixture.inAppReceipt("2026-11-20T10:00:05Z", "u_buyer", items: [item]),
                                            ReceiptClaimTests.answer("2026-11-20T10:05:00Z", "u_other", status: 21003, orderID: "o_other",
                                                                     transactionID: "t1", items: [])])
        }
        let now = "2026-11-30T00:00:00Z"
        let upgraded = try Scenario()
        try write(upgraded)
        _ = try run(upgraded, input: upgraded.input, now: now, asOf: now)
        // What an older iaprecon kept: the transaction matched to the order the failed line named.
        let migration = try #require(Schema.migrations.first { $0.sql.contains("status_n NOT IN (0, 21006)") }?.id)
        let database = try upgraded.open()
        try database.execute("""
            UPDATE int_transactions_resolved SET order_id = 'o_other', user_id = 'u_other', match_rule = 'receipt' WHERE transaction_id = 't1';
            UPDATE fct_findings SET user_id = 'u_other', order_id = 'o_other' WHERE transaction_id = 't1';
            DELETE FROM schema_migrations WHERE id >= \(migration);
            """)
        try Schema.migrate(database)
        let night = try run(upgraded, input: upgraded.input, now: now, asOf: now)
        #expect(readAgain(night) == [])
        #expect(night.join.recomputedTransactions == 1)
        #expect(try expectMigratedAsFresh(upgraded, now: now, asOf: now, "upgraded store", inputs: write) == [])
    }

    @Test("a file an upgrade asked to read again that the input folder no longer has is named on every report until it is put back and read; near miss: one still there is read again and named nowhere")
    func archivedFileNotReadAgainIsNamed() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        func refund(_ id: String) -> String {
            Line.notification("REFUND", uuid: "n-\(id)", signed: "2026-11-22T10:00:00Z",
                              transaction: Line.v2(id, "gems60", purchase: "2026-11-20T10:00:00Z", revocation: "2026-11-22T10:00:00Z"))
        }
        try scenario.write("notifications/kept.jsonl", [refund("t1")])
        try scenario.write("notifications/archived.jsonl", [refund("t2")])
        let now = "2026-11-30T00:00:00Z"
        _ = try run(scenario, input: scenario.input, now: now, asOf: now)
        // A store from before migration 38, whose next night's folder no longer has one of the files it marks.
        let migration = try #require(Schema.migrations.first { $0.sql.contains("read again for upgrades and offer codes") }?.id)
        try scenario.open().execute("DELETE FROM schema_migrations WHERE id >= \(migration)")
        try FileManager.default.removeItem(atPath: scenario.input + "/notifications/archived.jsonl")
        let night = try run(scenario, input: scenario.input, now: now, asOf: now)
        #expect(readAgain(night) == ["notifications/kept.jsonl"])
        let warning = "1 file an upgrade of this store asked to read again (for upgrades and offer codes) is no longer in the input "
            + "folder: notifications/archived.jsonl; its lines stay as an older iaprecon read them until it is put back for one run"
        #expect(night.report.warnings.filter { $0.contains("asked to read again") } == [warning])
        #expect(try scenario.output("report.html").contains("notifications/archived.jsonl; its lines stay"))
        // Said again the next night, while the file is away.
        #expect(try run(scenario, input: scenario.input, now: now, asOf: now).report.warnings.contains(warning))
        // Put back, it is read again once, and nothing is said.
        try scenario.write("notifications/archived.jsonl", [refund("t2")])
        let back = try run(scenario, input: scenario.input, now: now, asOf: now)
        #expect(readAgain(back) == ["notifications/archived.jsonl"])
        #expect(!back.report.warnings.contains { $0.contains("asked to read again") })
    }

    @Test("a line in the future with another defect is rejected for that one by any clock, so a store read by a late clock and run by an earlier one equals a fresh store, in every source with event times")
    func futureLineWithAnotherDefect() throws {
        let late = "2026-11-10T00:00:00Z", early = "2026-11-02T00:00:00Z", asOf = "2026-11-05T00:00:00Z"
        // Each `bad` file's second line is stamped 2026-11-04T10:00, more than a day after the early clock, and
        // has a defect of its own; each `ahead` file's second line is stamped so too, and has no other defect.
        let stamp = "2026-11-04T10:00:00Z"
        let zeroQuantity = Line.v2("t_2", "gems60", purchase: "2026-11-04T09:59:00Z").replacingOccurrences(of: "\"quantity\":1", with: "\"quantity\":0")
        let mmpHeader = "Event Time,Event Name,AppsFlyer ID,Customer User ID"
        let files: [(path: String, bad: String, ahead: String, good: String)] = [
            ("server/x.jsonl", Line.delivered(stamp, "u_1", "t_9", "gems60", quantity: 0), Line.delivered(stamp, "u_1", "t_9", "gems60"),
             Line.order("2026-11-01T10:00:00Z", "o_1", "u_1", "gems60")),
            ("receipts/x.jsonl", Line.v2Receipt(stamp, "u_1", transaction: zeroQuantity),
             Line.v2Receipt(stamp, "u_1", transaction: Line.v2("t_2", "gems60", purchase: "2026-11-04T09:59:00Z")),
             Line.v2Receipt("2026-11-01T10:01:00Z", "u_1", transaction: Line.v2("t_1", "gems60", purchase: "2026-11-01T10:00:00Z"))),
            ("notifications/x.jsonl",
             Line.notification("REFUND", uuid: "00000000-0000-4000-8000-000000000002", signed: stamp, transaction: Line.v2("t_1", "gems60", purchase: "2026-11-01T10:00:00Z")),
             Line.notification("DID_RENEW", uuid: "00000000-0000-4000-8000-000000000003", signed: stamp,
                               transaction: Line.v2("t_4", "pro.monthly", purchase: "2026-11-04T09:59:00Z", original: "t_3", expires: "2026-12-04T09:59:00Z")),
             Line.notification("SUBSCRIBED", uuid: "00000000-0000-4000-8000-000000000001", signed: "2026-11-01T10:00:00Z",
                               transaction: Line.v2("t_3", "pro.monthly", purchase: "2026-11-01T10:00:00Z", expires: "2026-12-01T10:00:00Z"))),
            ("registrations/x.jsonl", #"{"ts":"\#(stamp)","method":"email","country":"US"}"#, #"{"ts":"\#(stamp)","user_id":"u_2","method":"email","country":"US"}"#,
             #"{"ts":"2026-11-01T09:00:00Z","user_id":"u_1","method":"email","country":"US"}"#),
            ("attribution/x.csv", "2026-11-04 10:00:00,install,,", "2026-11-04 10:00:00,install,af_2,u_2", "2026-11-01 08:00:00,install,af_1,u_1"),
        ]
        func write(_ scenario: Scenario) throws {
            try scenario.catalog()
            for file in files {
                let header = file.path.hasSuffix(".csv") ? [mmpHeader] : []
                let ahead = file.path.replacingOccurrences(of: "/x.", with: "/ahead.")
                _ = try scenario.write(file.path, header + [file.good, file.bad]).write(ahead, header + [file.good, file.ahead])
            }
        }
        func status(_ result: RunResult) -> [String: IngestedFile.Status] {
            Dictionary(uniqueKeysWithValues: result.ingest.files.map { ($0.path, $0.status) })
        }
        let badPaths = files.map(\.path), aheadPaths = files.map { $0.path.replacingOccurrences(of: "/x.", with: "/ahead.") }
        let incremental = try Scenario()
        try write(incremental)
        _ = try run(incremental, input: incremental.input, now: late, asOf: asOf)
        #expect(try incremental.output("rejects.csv").contains("server/x.jsonl,2,quantity below 1: 'quantity' is 0"))

        // By the earlier clock the `ahead` files' lines are in the future: those files are read again. A `bad`
        // file's line keeps its own reason, so it is not, and its reason is the one a fresh store gives.
        let back = status(try run(incremental, input: incremental.input, now: early, asOf: asOf))
        #expect(badPaths.map { back[$0] } == badPaths.map { _ in .unchanged })
        #expect(aheadPaths.map { back[$0] } == aheadPaths.map { _ in .replaced })
        let rejects = try incremental.output("rejects.csv")
        #expect(rejects.contains("server/x.jsonl,2,quantity below 1: 'quantity' is 0"))
        for path in aheadPaths { #expect(rejects.contains("\(path),\(path.hasSuffix(".csv") ? 3 : 2),time in the future: "), "\(path)") }
        let freshEarly = try Scenario()
        try write(freshEarly)
        _ = try run(freshEarly, input: freshEarly.input, now: early, asOf: asOf)
        try expectSame(incremental, freshEarly, "late clock, then an earlier one")

        // The late clock again: the lines rejected as in the future are read again, the others are not.
        let forward = status(try run(incremental, input: incremental.input, now: late, asOf: asOf))
        #expect(badPaths.map { forward[$0] } == badPaths.map { _ in .unchanged })
        #expect(aheadPaths.map { forward[$0] } == aheadPaths.map { _ in .replaced })
        let freshLate = try Scenario()
        try write(freshLate)
        _ = try run(freshLate, input: freshLate.input, now: late, asOf: asOf)
        try expectSame(incremental, freshLate, "the late clock again")
    }

    @Test("a JWS without a signedDate, its chain judged at the run's clock, is read again by a clock on the other side of a certificate's validity, as a fresh store reads it; one with a signedDate, or a clock that stays inside the chain's validity, reads nothing again")
    func clockJudgesChainWithoutSignedDate() throws {
        let files = try Self.notificationsJudgedAtTheClock()
        let early = "2020-07-01T00:00:00Z", later = "2020-12-01T00:00:00Z", late = "2026-11-10T00:00:00Z", asOf = "2020-06-30T00:00:00Z"
        func write(_ scenario: Scenario) throws {
            try scenario.catalog()
            for file in files { _ = try scenario.write(file.path, [file.line]) }
        }
        func fresh(now: String) throws -> Scenario { try freshStore(now: now, asOf: asOf, inputs: write) }
        let expired = ["notifications/inner.jsonl,1,certificate expired at signing time in 'data.signedTransactionInfo'",
                       "notifications/undated.jsonl,1,certificate expired at signing time in 'signedPayload'"]
        let incremental = try Scenario()
        try write(incremental)
        _ = try run(incremental, input: incremental.input, now: early, asOf: asOf)
        #expect(try expired.allSatisfy { !(try incremental.output("rejects.csv").contains($0)) })
        // Near miss: a later clock still inside the leaf's validity judges every chain alike; nothing is read again.
        #expect(readAgain(try run(incremental, input: incremental.input, now: later, asOf: asOf)) == [])

        // Past the leaf's notAfter the chains judged at the clock are expired: their files are read again, the others are not.
        #expect(readAgain(try run(incremental, input: incremental.input, now: late, asOf: asOf)) == ["notifications/inner.jsonl", "notifications/undated.jsonl"])
        #expect(try expired.allSatisfy { try incremental.output("rejects.csv").contains($0) })
        try expectSameFiles(incremental, try fresh(now: late), "clock past the leaf's notAfter")
        // Read by that clock, nothing is read again the next night.
        #expect(readAgain(try run(incremental, input: incremental.input, now: late, asOf: asOf)) == [])

        // An earlier clock (a replayed day) accepts them again, as a fresh store with that clock does.
        #expect(readAgain(try run(incremental, input: incremental.input, now: early, asOf: asOf)) == ["notifications/inner.jsonl", "notifications/undated.jsonl"])
        try expectSameFiles(incremental, try fresh(now: early), "clock set back inside the leaf's validity")

        // A store first read by the late clock, then run by the early one, likewise.
        let lateFirst = try fresh(now: late)
        #expect(readAgain(try run(lateFirst, input: lateFirst.input, now: early, asOf: asOf)) == ["notifications/inner.jsonl", "notifications/undated.jsonl"])
        try expectSameFiles(lateFirst, try fresh(now: early), "late clock first, then an early one")
        // And a clock before the leaf's notBefore rejects them again (the dated notification is then in the future, read again for that).
        let beforeLeaf = "2019-12-01T00:00:00Z"
        #expect(readAgain(try run(lateFirst, input: lateFirst.input, now: beforeLeaf, asOf: asOf))
            == ["notifications/dated.jsonl", "notifications/inner.jsonl", "notifications/undated.jsonl"])
        try expectSameFiles(lateFirst, try fresh(now: beforeLeaf), "clock before the leaf's notBefore")
    }

    /// Notifications files, each of one line: `undated` and `inner` hold a JWS without a signedDate whose chain (its leaf
    /// valid through 2020 only) is judged at the run's clock; `dated` one of that leaf with a signedDate in 2020;
    /// `lasting` one without a signedDate of the test chain, valid from 2015 to 2045.
    static func notificationsJudgedAtTheClock() throws -> [(path: String, line: String)] {
        let key = TestSigningChain.hex(try SignatureFixture.text("expired-leaf.key.hex").trimmingCharacters(in: .whitespacesAndNewlines))
        let expiring = try #require(ES256Signer(privateKey: key, x5c: [
            try SignatureFixture.x5c("expired-leaf.pem"), TestSigningChain.x5c[1], TestSigningChain.x5c[2],
        ]))
        func notification(_ uuid: String, signed: String?, _ transaction: String) -> String {
            let date = signed.map { ",\"signedDate\":\(Line.ms($0))" } ?? ""
            return "{\"notificationType\":\"ONE_TIME_CHARGE\",\"notificationUUID\":\"\(uuid)\"\(date),\"data\":{\"environment\":\"Production\",\"transactionInfo\":\(transaction)}}"
        }
        func envelope(_ signer: ES256Signer, _ payload: String) -> String { "{\"signedPayload\":\"\(signer.jws(payload: Array(payload.utf8)))\"}" }
        return [
            // No signedDate anywhere: the envelope's chain is judged at the run's clock.
            ("notifications/undated.jsonl", envelope(expiring, notification("00000000-0000-4000-8000-000000000001", signed: nil,
                                                                              Line.v2("t_1", "gems60", purchase: "2020-06-01T10:00:00Z")))),
            // Decoded already, its transaction JWS without a signedDate either: judged at the clock too.
            ("notifications/inner.jsonl", "{\"notificationType\":\"ONE_TIME_CHARGE\",\"notificationUUID\":\"00000000-0000-4000-8000-000000000002\","
                + "\"data\":{\"environment\":\"Production\",\"signedTransactionInfo\":\"\(expiring.jws(payload: Array(Line.v2("t_2", "gems60", purchase: "2020-06-02T10:00:00Z").utf8)))\"}}"),
            // Near misses: the same leaf judged at the payload's signedDate, and a chain valid by every clock here.
            ("notifications/dated.jsonl", envelope(expiring, notification("00000000-0000-4000-8000-000000000003", signed: "2020-06-03T10:00:00Z",
                                                                            Line.v2("t_3", "gems60", purchase: "2020-06-03T10:00:00Z")))),
            ("notifications/lasting.jsonl", envelope(TestSigningChain.signer, notification("00000000-0000-4000-8000-000000000004", signed: nil,
                                                                                             Line.v2("t_4", "gems60", purchase: "2020-06-04T10:00:00Z")))),
        ]
    }

    /// Migrates `database` as its next run would, keeping every stored file's hash: a later migration that has
    /// `apple/` files read again (34) ties their days out again whatever an earlier one marks, so without this
    /// the night after an upgrade could not show that a migration which reads nothing again (32, 33) names what it should.
    private func migrateKeepingFiles(_ database: Database) throws {
        try database.execute("CREATE TEMP TABLE kept_hashes AS SELECT file_id, content_hash, mtime_ns FROM files")
        try Schema.migrate(database)
        try database.execute("""
            UPDATE files SET content_hash = (SELECT content_hash FROM kept_hashes k WHERE k.file_id = files.file_id),
                             mtime_ns = (SELECT mtime_ns FROM kept_hashes k WHERE k.file_id = files.file_id);
            DROP TABLE kept_hashes
            """)
    }

    /// A fresh store that `inputs` wrote the input folder of, run once by the clock `now` as of `asOf`: what an
    /// incremental or migrated store must equal.
    /// Migration 48 reads again every notifications file of a store that trusts a local root, as these tests' stores do
    /// (`.testChain`): a test of an earlier migration's near misses among notifications files keeps it applied, so that
    /// it sees what its own migration reads again.
    static let locallySignedMigration = Schema.migrations.first { $0.sql.contains("read again for transactions in locally signed notifications") }?.id ?? 0

    /// A store of `inputs` as an older iaprecon kept it, before device ids were kept in uppercase: each update of
    /// `keptAsWritten` stores its id's pseudonym as written; the lowercase-id migrations are then applied again.
    private func olderStoreOfLowercaseIDs(now: String, inputs: (Scenario) throws -> Void,
                                          keptAsWritten: [(sql: String, id: String)]) throws -> Scenario {
        let older = try Scenario()
        try inputs(older)
        _ = try run(older, input: older.input, now: now, asOf: now)
        let database = try older.open()
        let pseudonyms = try StoredDeviceIDKey.pseudonyms(database)
        for (sql, id) in keptAsWritten { try database.run(sql, [.blob(pseudonyms.pseudonym(id))]) }
        let migration = try #require(Schema.migrations.first { $0.sql.contains("read again for lowercase device ids") }?.id)
        try database.execute("DELETE FROM schema_migrations WHERE id >= \(migration)")
        try Schema.migrate(database)
        return older
    }

    private func freshStore(now: String, asOf: String, inputs: (Scenario) throws -> Void) throws -> Scenario {
        let fresh = try Scenario()
        try inputs(fresh)
        _ = try run(fresh, input: fresh.input, now: now, asOf: asOf)
        return fresh
    }

    /// The files the pending migrations of `older`'s store mark to be read again, by path, with the reason each names.
    private func readAgainFor(_ older: Scenario) throws -> [String: String] {
        let database = try older.open()
        try Schema.migrate(database)
        var marked: [String: String] = [:]
        try database.forEach("SELECT path, substr(content_hash, 16) FROM files WHERE content_hash LIKE 'read again for %'") {
            marked[$0.string(0)] = $0.string(1)
        }
        return marked
    }

    /// The files a run read again (new, changed, or read again by other rules or another clock), by path.
    private func readAgain(_ result: RunResult) -> [String] {
        result.ingest.files.filter { $0.status != .unchanged }.map(\.path).sorted()
    }

    /// What a migration's test checks last: `older`, after the run the migration read files again in, holds what
    /// a fresh store of the same inputs (`inputs` writes them) holds, and its next night reads nothing again.
    /// Returns the older store's reject reasons, sorted.
    private func expectMigratedAsFresh(_ older: Scenario, now: String, asOf: String, _ label: String,
                                       inputs: (Scenario) throws -> Void) throws -> [String] {
        try expectSameFiles(older, try freshStore(now: now, asOf: asOf, inputs: inputs), label)
        var reasons: [String] = []
        try older.open().forEach("SELECT reason FROM rejects") { reasons.append($0.string(0)) }
        // Once: the next night reads nothing again.
        #expect(try run(older, input: older.input, now: now, asOf: asOf).ingest.files.allSatisfy { $0.status == .unchanged }, "\(label)")
        return reasons.sorted()
    }

    /// What two stores hold file for file: outputs and results (`expectSame`), rejects with their reasons, the
    /// ledger's counts, and the rows of notifications and of Apple's transactions.
    private func expectSameFiles(_ a: Scenario, _ b: Scenario, _ label: String) throws {
        try expectSame(a, b, label)
        for (query, columns) in [("SELECT f.path, r.line, r.reason FROM rejects r JOIN files f USING (file_id) ORDER BY 1, 2", 3),
                                 ("SELECT path, lines_read, accepted, rejected FROM files ORDER BY path", 4)] {
            func values(_ scenario: Scenario) throws -> [[SQLValue]] {
                var rows: [[SQLValue]] = []
                try scenario.open().forEach(query) { row in rows.append((0..<columns).map { row.value($0) }) }
                return rows
            }
            #expect(try values(a) == values(b), "\(label): \(query)")
        }
        for table in [RawTable.notifications, .appleTransactions] {
            let select = "SELECT f.path, r.line, r.item, \(table.columns.map { "r." + $0 }.joined(separator: ", ")) FROM \(table.name) r "
                + "JOIN files f USING (file_id) ORDER BY f.path, r.line, r.item"
            func rows(_ scenario: Scenario) throws -> [[SQLValue]] {
                var rows: [[SQLValue]] = []
                try scenario.open().forEach(select) { row in rows.append((0..<(3 + table.columns.count)).map { row.value($0) }) }
                return rows
            }
            #expect(try rows(a) == rows(b), "\(label): \(table.name)")
        }
    }

    @Test("a store from before migration 25 reads again, once, the notifications files that may hold a JWS judged at the clock, and equals a fresh store; other files, and files read unchecked, are not read again")
    func clockJudgedChainsFromAnOlderStore() throws {
        let files = try Self.notificationsJudgedAtTheClock()
        let early = "2020-07-01T00:00:00Z", late = "2026-11-10T00:00:00Z", asOf = "2020-06-30T00:00:00Z"
        func write(_ scenario: Scenario) throws {
            try scenario.catalog()
            for file in files { _ = try scenario.write(file.path, [file.line]) }
        }
        func store(now: String) throws -> Scenario {
            let scenario = try Scenario()
            try write(scenario)
            _ = try run(scenario, input: scenario.input, now: now, asOf: asOf)
            return scenario
        }
        /// Back to what a store before migration 25 held.
        func older(_ scenario: Scenario) throws {
            try scenario.open().execute("DROP TABLE file_clock_span; DELETE FROM schema_migrations WHERE id >= 25 AND id != \(Self.locallySignedMigration)")
        }
        // Read by the early clock: every line is accepted, and the notifications without a signing time are read again.
        let acceptedEarly = try store(now: early)
        try older(acceptedEarly)
        #expect(readAgain(try run(acceptedEarly, input: acceptedEarly.input, now: late, asOf: asOf))
            == ["notifications/inner.jsonl", "notifications/lasting.jsonl", "notifications/undated.jsonl"])
        try expectSameFiles(acceptedEarly, try store(now: late), "older store read early, run late")
        #expect(readAgain(try run(acceptedEarly, input: acceptedEarly.input, now: late, asOf: asOf)) == [])
        // Read by the late clock: two lines are rejected for their leaf's dates; their files are read again, and `lasting`.
        let rejectedLate = try store(now: late)
        try older(rejectedLate)
        #expect(readAgain(try run(rejectedLate, input: rejectedLate.input, now: early, asOf: asOf))
            == ["notifications/inner.jsonl", "notifications/lasting.jsonl", "notifications/undated.jsonl"])
        try expectSameFiles(rejectedLate, try store(now: early), "older store read late, run early")

        // Near miss: files whose signatures were not checked depend on no clock, and are not read again.
        let unchecked = try Scenario()
        try write(unchecked)
        func runUnchecked(now: String) throws -> [String] {
            var rules = LineRules(signatures: .trustUnsigned)
            rules.nowMs = Line.ms(now)
            return readAgain(try Pipeline.run(RunOptions(input: unchecked.input, databasePath: unchecked.databasePath, outFolder: unchecked.out, jobs: 2,
                                                    lineRules: rules, reconcile: ReconcileSettings(asOfMs: Line.ms(asOf)),
                                                    report: ReportSettings(outFolder: unchecked.out)), progress: nil))
        }
        _ = try runUnchecked(now: early)
        try older(unchecked)
        #expect(try runUnchecked(now: late) == [])
    }

    @Test("a product two catalogs type otherwise is the type of the catalog last in path order, whichever night each arrived")
    func catalogTypeByPathOrder() throws {
        let now = "2026-11-30T00:00:00Z", asOf = "2026-11-29T00:00:00Z"
        let header = "product_id,type,subscription_group,price,currency"
        func write(_ scenario: Scenario, _ path: String, type: String) throws {
            _ = try scenario.write(path, [header, "gems60,\(type),,0.99,USD"])
        }
        func first(_ scenario: Scenario) throws {
            _ = try scenario.write("2026-11-20/receipts/r.jsonl", [AppleTieOutTests.purchase("t1", at: "2026-11-20T10:00:00Z")])
            // The root's catalog comes after every day folder's: its type is the product's.
            try write(scenario, "catalog.csv", type: "non_consumable")
            try write(scenario, "2026-11-20/catalog.csv", type: "consumable")
        }
        let nights = try Scenario()
        try first(nights)
        _ = try run(nights, input: nights.input, now: now, asOf: asOf)
        // A later day's catalog, stored after the root's, still comes before it.
        try write(nights, "2026-11-21/catalog.csv", type: "consumable")
        _ = try run(nights, input: nights.input, now: now, asOf: asOf)
        let fresh = try Scenario()
        try first(fresh)
        try write(fresh, "2026-11-21/catalog.csv", type: "consumable")
        _ = try run(fresh, input: fresh.input, now: now, asOf: asOf)
        try expectSameFiles(nights, fresh, "catalogs arriving on two nights")
        let rows = RevenueReportTests.Fixture.table(try nights.output("transactions.csv"))
        #expect(rows.map { $0["product_type"] } == ["non_consumable"])
    }

    @Test("a store from before migration 26 reads again the files it kept with more than a million units in one of Apple's transactions")
    func olderStoreWithHugeQuantities() throws {
        let now = "2026-11-30T00:00:00Z", asOf = "2026-11-29T00:00:00Z"
        func receipt(_ id: String, quantity: Int) -> String { AppleTieOutTests.purchase(id, at: "2026-11-20T10:00:00Z", quantity: quantity) }
        let longAgo = Date(timeIntervalSince1970: 1_000_000)
        func write(_ scenario: Scenario, _ path: String, _ line: String) throws {
            _ = try scenario.write(path, [line])
            try FileManager.default.setAttributes([.modificationDate: longAgo], ofItemAtPath: scenario.input + "/" + path)
        }
        let older = try Scenario()
        try older.catalog()
        try write(older, "receipts/huge.jsonl", receipt("t1", quantity: 1_000_000))
        try write(older, "receipts/most.jsonl", receipt("t2", quantity: 1_000_000))
        _ = try run(older, input: older.input, now: now, asOf: asOf)
        // What an older iaprecon kept: the line as it accepted it, under the file's size and time, so
        // that nothing but the migration reads it again.
        try write(older, "receipts/huge.jsonl", receipt("t1", quantity: 2_000_000))
        try older.open().execute("""
            UPDATE raw_apple__transactions SET quantity_n = 2000000 WHERE transaction_id = 't1';
            DELETE FROM schema_migrations WHERE id >= 26
            """)
        let result = try run(older, input: older.input, now: now, asOf: asOf)
        // The near miss: a million units is a quantity, and its file is not read again.
        #expect(result.ingest.files.filter { $0.status != .unchanged }.map(\.path) == ["receipts/huge.jsonl"])
        let fresh = try Scenario()
        try fresh.catalog()
        try write(fresh, "receipts/huge.jsonl", receipt("t1", quantity: 2_000_000))
        try write(fresh, "receipts/most.jsonl", receipt("t2", quantity: 1_000_000))
        _ = try run(fresh, input: fresh.input, now: now, asOf: asOf)
        try expectSameFiles(older, fresh, "older store with a huge quantity")
        var reasons: [String] = []
        try older.open().forEach("SELECT reason FROM rejects") { reasons.append($0.string(0)) }
        #expect(reasons == ["bad number in 'transactions[0].quantity': 2000000"])
    }

    @Test("a store from before migration 28 that holds a transaction seen with two expiries rebuilds its results once, and equals a fresh store; a store without one is not rebuilt")
    func olderStoreWithExtendedExpiry() throws {
        let now = "2026-11-30T00:00:00Z", asOf = "2026-11-29T00:00:00Z"
        func inputs(_ scenario: Scenario, extended: Bool) throws {
            try scenario.writeTwoChainsOfOneGroup()
            try scenario.write("notifications/n.jsonl", [
                Line.notification("RENEWAL_EXTENDED", uuid: "n1", signed: "2026-11-07T09:00:00Z",
                                  transaction: Scenario.chainA1(expires: extended ? "2026-11-15T10:00:00Z" : "2026-11-08T10:00:00Z")),
            ])
        }
        /// A store as an older iaprecon left it: the results it derived from the first expiry.
        func older(extended: Bool) throws -> Scenario {
            let older = try Scenario()
            try inputs(older, extended: extended)
            _ = try run(older, input: older.input, now: now, asOf: asOf)
            try older.open().execute("""
                UPDATE int_transactions_resolved SET expires_ms = \(Line.ms("2026-11-08T10:00:00Z")) WHERE transaction_id = 'a1';
                DELETE FROM fct_findings WHERE kind = 'multi_apple_id_subscription';
                DELETE FROM schema_migrations WHERE id >= 28
                """)
            return older
        }
        let extended = try older(extended: true)
        let result = try run(extended, input: extended.input, now: now, asOf: asOf)
        #expect(result.join.recomputedTransactions == nil)
        #expect(result.join.fullRebuildReason == "a store migration")
        let fresh = try Scenario()
        try inputs(fresh, extended: true)
        _ = try run(fresh, input: fresh.input, now: now, asOf: asOf)
        try expectSameFiles(extended, fresh, "older store with an extended expiry")
        #expect(try fresh.output("findings.csv").contains("multi_apple_id_subscription"))
        // Once: the next night recomputes only what it reads.
        #expect(try run(extended, input: extended.input, now: now, asOf: asOf).join.recomputedTransactions != nil)

        // The near miss: every sighting gives one expiry, so nothing is rebuilt.
        let unextended = try older(extended: false)
        #expect(try run(unextended, input: unextended.input, now: now, asOf: asOf).join.recomputedTransactions != nil)
    }

    @Test("a store from before migration 27 reads again, once, the files it kept with a currency not in ISO 4217's form or an event time before the App Store, or rejected an MMP row for a cell its event does not use, and equals a fresh store; other files are not read again")
    func olderStoreWithLowercaseCurrency() throws {
        let now = "2026-11-30T00:00:00Z", asOf = "2026-11-29T00:00:00Z"
        let longAgo = Date(timeIntervalSince1970: 1_000_000)
        let header = "date,media_source,campaign,spend,currency"
        func write(_ scenario: Scenario, _ path: String, _ lines: [String]) throws {
            _ = try scenario.write(path, lines)
            try FileManager.default.setAttributes([.modificationDate: longAgo], ofItemAtPath: scenario.input + "/" + path)
        }
        func inputs(_ scenario: Scenario, currency: String) throws {
            try scenario.catalog()
            try write(scenario, "receipts/r.jsonl", [AppleTieOutTests.purchase("t1", at: "2026-11-20T10:00:00Z")])
            try write(scenario, "spend/s.csv", [header, "2026-11-20,Facebook Ads,FB_1,10,\(currency)"])
            try write(scenario, "fx.csv", ["date,currency,rate", "2026-11-01,USD,1"])
            try write(scenario, "attribution/a.csv", ["Event Time,Event Name,Customer User ID,Media Source,Event Revenue",
                                                      "2026-11-20 09:00:00,install,u1,Facebook Ads,\"0,99\""])
            // Epoch seconds where milliseconds are due: January 1970.
            try write(scenario, "registrations/r.jsonl", [#"{"ts":1795860905,"user_id":"u1","method":"apple"}"#])
        }
        let older = try Scenario()
        try inputs(older, currency: "USD")
        _ = try run(older, input: older.input, now: now, asOf: asOf)
        // What an older iaprecon kept of a spend line in `usd`: the line as it accepted it, under the
        // file's size and time, so that nothing but the migration reads it again.
        try write(older, "spend/s.csv", [header, "2026-11-20,Facebook Ads,FB_1,10,usd"])
        // And an install it rejected for its revenue cell, which no install uses, and a sign-up it
        // kept in January 1970.
        try older.open().execute("""
            DELETE FROM rejects;
            INSERT INTO raw_registrations__users (file_id, line, item, ts_ms, user_id, method)
              SELECT file_id, 1, 0, 1795860905, 'u1', 'apple' FROM files WHERE path = 'registrations/r.jsonl';
            UPDATE files SET accepted = 1, rejected = 0 WHERE path = 'registrations/r.jsonl';
            UPDATE raw_spend__days SET currency = 'usd';
            DELETE FROM raw_mmp__events;
            INSERT INTO rejects (file_id, line, reason, text)
              SELECT file_id, 2, 'bad amount in ''Event Revenue'': "0,99"', '' FROM files WHERE path = 'attribution/a.csv';
            UPDATE files SET accepted = 0, rejected = 1 WHERE path = 'attribution/a.csv';
            DELETE FROM schema_migrations WHERE id >= 27
            """)
        let result = try run(older, input: older.input, now: now, asOf: asOf)
        #expect(readAgain(result)
            == ["attribution/a.csv", "registrations/r.jsonl", "spend/s.csv"])
        let reasons = try expectMigratedAsFresh(older, now: now, asOf: asOf, "older store with a spend line in usd") {
            try inputs($0, currency: "usd")
        }
        #expect(reasons == [#"bad currency in 'currency': "usd""#,
                            "time before the App Store opened: 'ts' is 1970-01-21T18:51:00.905Z (as seconds, 2026-11-28T10:15:05.000Z)"])
    }

    @Test("a store from before migration 29 reads again, once, the files it kept with a Production purchase before the App Store or a refund after the latest event, and equals a fresh store; a Sandbox purchase in 2001 and a past refund are not read again")
    func olderStoreWithImpossibleAppleDates() throws {
        let now = "2026-11-30T00:00:00Z", asOf = "2026-11-29T00:00:00Z"
        let longAgo = Date(timeIntervalSince1970: 1_000_000)
        // 2001-09-09T01:46:40Z and 2100-01-01T00:00:00Z: as many digits as a 2026 time in milliseconds, so
        // an older store's file keeps its size.
        let before = "2001-09-09T01:46:40Z", later = "2100-01-01T00:00:00Z"
        func purchase(_ id: String, on day: String, environment: String = "Production") -> String {
            Line.v2Receipt("2026-11-20T10:00:05Z", "u_\(id)", transaction: Line.v2(id, "gems60", purchase: day, environment: environment))
        }
        func refund(_ id: String, at time: String) -> String {
            Line.notification("REFUND", uuid: "00000000-0000-4000-8000-00000000000\(id.suffix(1))", signed: "2026-11-21T10:00:00Z",
                              transaction: Line.v2(id, "gems60", purchase: "2026-11-20T10:00:00Z", revocation: time))
        }
        func write(_ scenario: Scenario, _ path: String, _ line: String) throws {
            _ = try scenario.write(path, [line])
            try FileManager.default.setAttributes([.modificationDate: longAgo], ofItemAtPath: scenario.input + "/" + path)
        }
        func inputs(_ scenario: Scenario, as written: Bool) throws {
            try scenario.catalog()
            try write(scenario, "receipts/year.jsonl", purchase("t1", on: written ? before : "2026-11-20T10:00:00Z"))
            try write(scenario, "receipts/sandbox.jsonl", purchase("t2", on: before, environment: "Sandbox"))
            try write(scenario, "notifications/late.jsonl", refund("t3", at: written ? later : "2026-11-21T09:00:00Z"))
            try write(scenario, "notifications/past.jsonl", refund("t4", at: "2026-11-21T09:00:00Z"))
        }
        let older = try Scenario()
        try inputs(older, as: false)
        _ = try run(older, input: older.input, now: now, asOf: asOf)
        // What an older iaprecon kept: the lines as it accepted them, under the files' sizes and times, so
        // that nothing but the migration reads them again.
        try inputs(older, as: true)
        try older.open().execute("""
            UPDATE raw_apple__transactions SET purchase_ms = \(Line.ms(before)) WHERE transaction_id = 't1';
            UPDATE raw_apple__transactions SET revocation_ms = \(Line.ms(later)) WHERE transaction_id = 't3';
            DELETE FROM schema_migrations WHERE id >= 29
            """)
        // Migration 29 chooses the two files; migration 38 the past refund's, for its revocation.
        #expect(try readAgainFor(older) == ["notifications/late.jsonl": "dates inside Apple payloads",
                                            "notifications/past.jsonl": "upgrades and offer codes",
                                            "receipts/year.jsonl": "dates inside Apple payloads"])
        let result = try run(older, input: older.input, now: now, asOf: asOf)
        #expect(readAgain(result) == ["notifications/late.jsonl", "notifications/past.jsonl", "receipts/year.jsonl"])
        let reasons = try expectMigratedAsFresh(older, now: now, asOf: asOf, "older store with impossible dates in Apple's payloads") {
            try inputs($0, as: true)
        }
        #expect(reasons == ["time before the App Store opened: 'transactions[0].purchaseDate' is 2001-09-09T01:46:40.000Z",
                            "time in the future: 'data.transactionInfo.revocationDate' is 2100-01-01T00:00:00.000Z"])
    }

    /// A notification type that an older build kept without a transaction, and the migration that has its files read again.
    struct TransactionlessNotification: Sendable, CustomTestStringConvertible {
        let type: String, file: String, migration: Int, uuid: String
        var testDescription: String { "\(type), migration \(migration)" }
    }

    // The uuids differ in length so that each file written as a TEST first is the size of its later self.
    @Test("a store from before migration 30 or 31 reads again, once, the notifications files holding a V2 notification without a transaction, and equals a fresh store: a REFUND or DID_RENEW without one is rejected; files whose notifications all carry one are not read again",
          arguments: [TransactionlessNotification(type: "REFUND", file: "refund", migration: 30, uuid: "n-123"),
                      TransactionlessNotification(type: "DID_RENEW", file: "renewal", migration: 31, uuid: "n-123456")])
    func olderStoreWithNotificationsWithoutATransaction(_ case_: TransactionlessNotification) throws {
        let now = "2026-11-30T00:00:00Z", asOf = "2026-11-29T00:00:00Z"
        let longAgo = Date(timeIntervalSince1970: 1_000_000)
        let path = "notifications/\(case_.file).jsonl"
        func bare(_ type: String, uuid: String) -> String {
            #"{"notificationType":"\#(type)","notificationUUID":"\#(uuid)","signedDate":\#(Line.ms("2026-11-21T10:00:00Z")),"data":{"environment":"Production"}}"#
        }
        func write(_ scenario: Scenario, _ path: String, _ line: String) throws {
            _ = try scenario.write(path, [line])
            try FileManager.default.setAttributes([.modificationDate: longAgo], ofItemAtPath: scenario.input + "/" + path)
        }
        func inputs(_ scenario: Scenario, as written: Bool) throws {
            try scenario.catalog()
            try scenario.write("receipts/r.jsonl", [Line.v2Receipt("2026-11-20T10:00:05Z", "u_1", transaction: Line.v2("t1", "gems60", purchase: "2026-11-20T10:00:00Z"))])
            // What an older iaprecon kept of the notification is what it keeps of a TEST: a V2 notification without a
            // transaction (a notification's type is not kept), here under a file of the same size.
            try write(scenario, path, written ? bare(case_.type, uuid: "n-1") : bare("TEST", uuid: case_.uuid))
            try write(scenario, "notifications/test.jsonl", bare("TEST", uuid: "n-2"))
            let revocation = case_.type == "REFUND" ? "2026-11-21T09:00:00Z" : nil
            try write(scenario, "notifications/paid.jsonl", Line.notification(case_.type, uuid: "n-3", signed: "2026-11-21T10:00:00Z",
                                                                               transaction: Line.v2("t1", "gems60", purchase: "2026-11-20T10:00:00Z", revocation: revocation)))
        }
        let older = try Scenario()
        try inputs(older, as: false)
        _ = try run(older, input: older.input, now: now, asOf: asOf)
        try inputs(older, as: true)
        // A store from before the migration: one before 31 has read again what 30 chose, and kept a renewal without a transaction.
        try older.open().execute("DELETE FROM schema_migrations WHERE id >= \(case_.migration) AND id != \(Self.locallySignedMigration)")
        // A TEST carries no transaction either, and the store cannot tell it from the other: its file is read again too, to
        // the same rows (migration 31 marks again what 30 chose). Migration 38 chooses the refund's paid file, for its revocation.
        let reason = "notifications without a transaction"
        var chosen = [path: reason, "notifications/test.jsonl": reason]
        if case_.type == "REFUND" { chosen["notifications/paid.jsonl"] = "upgrades and offer codes" }
        #expect(try readAgainFor(older) == chosen)
        let result = try run(older, input: older.input, now: now, asOf: asOf)
        #expect(readAgain(result) == chosen.keys.sorted())
        let reasons = try expectMigratedAsFresh(older, now: now, asOf: asOf, "older store with a \(case_.type) without a transaction") {
            try inputs($0, as: true)
        }
        #expect(reasons == ["\(case_.type) without a transaction: no 'data.signedTransactionInfo' or 'data.transactionInfo'"])
    }

    @Test("a store from before migration 32 names on its next page the Sales Report it holds twice, without reading a file again for it or rebuilding, and equals a fresh store")
    func olderStoreWithARepeatedSalesReport() throws {
        let now = "2026-11-30T00:00:00Z", asOf = "2026-11-29T00:00:00Z"
        func inputs(_ scenario: Scenario) throws {
            try scenario.catalog()
            try scenario.write("receipts/r.jsonl", [AppleTieOutTests.purchase("t1", at: "2026-11-24T18:00:00Z")])
            let report = [(day: "2026-11-24", sku: "gems60", country: "US", units: 2)]
            try ReportPageTests.salesReport(scenario, "apple/S_D_1_20261124.txt", report)
            try ReportPageTests.salesReport(scenario, "apple/S_D_1_20261124.txt.gz", report, gzip: true)
        }
        let older = try Scenario()
        try inputs(older)
        _ = try run(older, input: older.input, now: now, asOf: asOf)
        // What an older iaprecon left: its results, and no record of the reports' repeats.
        let database = try older.open()
        try database.execute("DROP TABLE fct_apple_report_overlaps; DELETE FROM schema_migrations WHERE id >= 32")
        try migrateKeepingFiles(database)
        let night = try run(older, input: older.input, now: now, asOf: asOf)
        #expect(night.ingest.files.allSatisfy { $0.status == .unchanged })
        #expect(night.join.recomputedTransactions != nil, "no full rebuild")
        #expect(ReportPageTests.tieoutWarnings(try older.output("report.html")) == [
            "Sales Reports: apple/S_D_1_20261124.txt.gz repeats the report of 2026-11-24 in apple/S_D_1_20261124.txt: counted once.",
        ])
        _ = try expectMigratedAsFresh(older, now: now, asOf: asOf, "older store with a Sales Report given twice", inputs: inputs)
    }

    @Test("a store from before migration 43, whose tie-out held a refund against a missing purchase, finds the purchase on its next run without reading a file again or rebuilding, and equals a fresh store")
    func olderStoreWithNetTieOut() throws {
        let now = "2026-11-30T00:00:00Z", asOf = "2026-11-29T00:00:00Z"
        func inputs(_ scenario: Scenario) throws {
            try scenario.catalog()
            try scenario.write("receipts/r.jsonl", [AppleTieOutTests.purchase("t1", at: "2026-11-24T18:00:00Z")])
            // Apple sold two and refunded one; one purchase was verified and no refund told of.
            try scenario.write("apple/S_D_1_20261124.txt", [
                AppleSalesReportTests.currentHeader, AppleTieOutTests.sales("2026-11-24", "gems60", units: 2, country: "US"),
                AppleTieOutTests.sales("2026-11-24", "gems60", units: -1, country: "US"),
            ])
        }
        let older = try Scenario()
        try inputs(older)
        _ = try run(older, input: older.input, now: now, asOf: asOf)
        // What an older iaprecon left: the day's units netted, so no finding, and no purchases kept apart.
        let database = try older.open()
        try database.execute("""
            DELETE FROM fct_findings WHERE kind = 'unverified_apple_sales';
            DROP TABLE fct_apple_tieout_purchases; DELETE FROM schema_migrations WHERE id >= 43
            """)
        try migrateKeepingFiles(database)
        let night = try run(older, input: older.input, now: now, asOf: asOf)
        #expect(night.ingest.files.allSatisfy { $0.status == .unchanged })
        #expect(night.join.recomputedTransactions != nil, "no full rebuild")
        #expect(try older.output("findings.csv").contains("apple_purchase_units=2 verified_purchase_units=1 missing_units=1"))
        _ = try expectMigratedAsFresh(older, now: now, asOf: asOf, "older store with a netted tie-out", inputs: inputs)
    }

    @Test("a store from before migration 45 joins again the transactions Apple priced for several units and the family-shared ones, without reading a file again or rebuilding, and equals a fresh store; near miss: a purchase of one unit is not joined again")
    func olderStoreWithPriceOfSeveralUnits() throws {
        let now = "2026-11-30T00:00:00Z", asOf = "2026-11-29T00:00:00Z"
        func inputs(_ scenario: Scenario) throws {
            try scenario.catalog()
            try scenario.write("server/s.jsonl", [
                Line.delivered("2026-11-10T10:00:09Z", "u1", "t1", "gems300", quantity: 3),
                Line.delivered("2026-11-10T10:00:09Z", "u2", "t2", "gems60"),
            ])
            try scenario.write("receipts/r.jsonl", [
                Line.v2Receipt("2026-11-10T10:00:05Z", "u1", transaction: RevenueReportTests.Fixture.v2(
                    "t1", "gems300", purchase: "2026-11-10T10:00:00Z", price: 14970, quantity: 3)),
                Line.v2Receipt("2026-11-10T10:00:05Z", "u2", transaction: Line.v2("t2", "gems60", purchase: "2026-11-10T10:00:00Z")),
            ])
            try scenario.write("notifications/n.jsonl", [
                Line.notification("SUBSCRIBED", uuid: "n1", signed: "2026-11-01T10:00:02Z", transaction: Line.v2(
                    "f1", "pro.monthly", purchase: "2026-11-01T10:00:00Z", expires: "2026-12-01T10:00:00Z", price: 9990, ownership: "FAMILY_SHARED")),
            ])
        }
        let older = try Scenario()
        try inputs(older)
        _ = try run(older, input: older.input, now: now, asOf: asOf)
        // What an older iaprecon left: Apple's price of three units taken as one unit's.
        let database = try older.open()
        try database.execute("""
            UPDATE int_transactions_resolved SET unit_price = '14.97' WHERE transaction_id = 't1';
            DELETE FROM schema_migrations WHERE id >= 45
            """)
        try migrateKeepingFiles(database)
        let night = try run(older, input: older.input, now: now, asOf: asOf)
        #expect(night.ingest.files.allSatisfy { $0.status == .unchanged })
        #expect(night.join.recomputedTransactions == 2, "t1 and f1, not t2; no full rebuild")
        _ = try expectMigratedAsFresh(older, now: now, asOf: asOf, "older store with Apple's price of several units", inputs: inputs)
    }

    @Test("a store from before migration 33 names on its next page the files of rows in two proceeds currencies and every pair of three overlapping Sales Reports, without reading a file again for it or rebuilding, and equals a fresh store")
    func olderStoreWithSalesReportsToName() throws {
        let now = "2026-11-30T00:00:00Z", asOf = "2026-11-29T00:00:00Z"
        func inputs(_ scenario: Scenario) throws {
            try scenario.catalog()
            try scenario.write("receipts/r.jsonl", [AppleTieOutTests.purchase("t1", at: "2026-11-24T18:00:00Z")])
            for (number, units) in [(1, 2), (2, 3), (3, 4)] {
                try ReportPageTests.salesReport(scenario, "apple/S_D_\(number)_20261124.txt",
                                                [(day: "2026-11-24", sku: "gems60", country: "US", units: units)])
            }
            try scenario.write("apple/S_D_1_20261125.txt", [
                AppleSalesReportTests.currentHeader,
                AppleTieOutTests.sales("2026-11-25", "gems60", units: 1, country: "AE", price: "3.99", currency: "AED", proceeds: "2.79"),
                AppleTieOutTests.sales("2026-11-25", "gems60", units: 2, country: "AE", price: "0.99", currency: "USD", proceeds: "0.69"),
            ])
        }
        let older = try Scenario()
        try inputs(older)
        _ = try run(older, input: older.input, now: now, asOf: asOf)
        // What an older iaprecon left: its results, a file overlapping a day's report named against one earlier file only, and no
        // record of the files of rows in two proceeds currencies.
        let database = try older.open()
        let migration32 = try #require(Schema.migrations.first { $0.id == 32 })
        try database.execute("DROP TABLE fct_apple_report_overlaps; DROP TABLE fct_apple_mixed_proceeds")
        try database.execute(migration32.sql)
        try database.execute("""
            DELETE FROM dirty_keys;
            INSERT INTO fct_apple_report_overlaps VALUES
              ('2026-11-24', 'apple/S_D_2_20261124.txt', 'apple/S_D_1_20261124.txt', 'overlapping'),
              ('2026-11-24', 'apple/S_D_3_20261124.txt', 'apple/S_D_1_20261124.txt', 'overlapping');
            DELETE FROM schema_migrations WHERE id >= 33
            """)
        try migrateKeepingFiles(database)
        let night = try run(older, input: older.input, now: now, asOf: asOf)
        #expect(night.ingest.files.allSatisfy { $0.status == .unchanged })
        #expect(night.join.recomputedTransactions != nil, "no full rebuild")
        let html = try older.output("report.html")
        #expect(ReportPageTests.tieoutWarnings(html) == [
            ("apple/S_D_2_20261124.txt", "apple/S_D_1_20261124.txt"), ("apple/S_D_3_20261124.txt", "apple/S_D_1_20261124.txt"),
            ("apple/S_D_3_20261124.txt", "apple/S_D_2_20261124.txt"),
        ].map {
            "Sales Reports: \($0.0) and \($0.1) both have rows of the report of 2026-11-24 for the same products and countries, and the rows "
                + "differ: both counted."
        })
        #expect(html.contains("It comes from apple/S_D_1_20261125.txt (2026-11-25).</p>"))
        _ = try expectMigratedAsFresh(older, now: now, asOf: asOf, "older store with Sales Reports to name", inputs: inputs)
    }

    @Test("a run with another --bundle-id or --mmp-tz reads again the files those judge, as a fresh store reads them; other files are not read again")
    func otherRulesReadAgain() throws {
        // A receipt of another app, delivered: ours without --bundle-id, rejected with it.
        let purchase = Line.ms("2026-11-01T10:00:00Z")
        let receipts = [#"{"received_at":"2026-11-01T10:01:00Z","user_id":"u_1","transactions":[{"transactionId":"t_1","originalTransactionId":"t_1","bundleId":"com.other.app","productId":"gems60","purchaseDate":\#(purchase),"quantity":1,"inAppOwnershipType":"PURCHASED","environment":"Production","price":990,"currency":"USD","storefront":"USA"}]}"#]
        let server = [Line.delivered("2026-11-01T10:02:00Z", "u_1", "t_1", "gems60")]
        // An install whose time carries its own offset: the same instant in any --mmp-tz.
        let mmp = ["Install Time,Event Time,Event Name,Media Source,Campaign,Customer User ID",
                   "2026-11-02 05:00:00+00:00,2026-11-02 05:00:00+00:00,install,Facebook Ads,c1,u_1"]
        let registrations = [#"{"ts":"2026-11-03T00:10:00Z","user_id":"u_1","method":"email","country":"US"}"#]
        func write(_ scenario: Scenario) throws {
            try scenario.catalog()
            _ = try scenario.write("receipts/r.jsonl", receipts).write("server/s.jsonl", server)
                .write("attribution/a.csv", mmp).write("registrations/r.jsonl", registrations)
        }
        func run(_ scenario: Scenario, bundle: String?, mmpZone: String) throws -> RunResult {
            let zone = try #require(Zone(mmpZone))
            return try Pipeline.run(RunOptions(
                input: scenario.input, databasePath: scenario.databasePath, outFolder: scenario.out, jobs: 2,
                lineRules: LineRules(bundleID: bundle, mmpZone: zone, signatures: .testChain),
                reconcile: ReconcileSettings(asOfMs: Line.ms("2026-11-05T00:00:00Z"), mmpZone: zone), report: ReportSettings(outFolder: scenario.out)),
                progress: nil)
        }
        let incremental = try Scenario()
        try write(incremental)
        _ = try run(incremental, bundle: nil, mmpZone: "UTC")
        // Near miss: the same rules read nothing again.
        #expect(readAgain(try run(incremental, bundle: nil, mmpZone: "UTC")) == [])

        let bundled = try run(incremental, bundle: "com.example.game", mmpZone: "UTC")
        #expect(readAgain(bundled) == ["receipts/r.jsonl"])
        #expect(try incremental.output("rejects.csv").contains("receipts/r.jsonl,1,foreign bundle com.other.app"))
        #expect(try Scenario.findings(incremental.open()).filter { $0.kind == .orphanDelivery }.map(\.transactionID) == ["t_1"])
        let freshBundled = try Scenario()
        try write(freshBundled)
        _ = try run(freshBundled, bundle: "com.example.game", mmpZone: "UTC")
        try expectSame(incremental, freshBundled, "--bundle-id added")

        let tokyo = try run(incremental, bundle: "com.example.game", mmpZone: "Asia/Tokyo")
        #expect(readAgain(tokyo) == ["attribution/a.csv"])
        #expect(try incremental.output("attribution.csv").contains("2026-11-02,Facebook Ads,c1,1,1,"))
        let freshTokyo = try Scenario()
        try write(freshTokyo)
        _ = try run(freshTokyo, bundle: "com.example.game", mmpZone: "Asia/Tokyo")
        try expectSame(incremental, freshTokyo, "--mmp-tz changed")
        // Read by these rules, nothing is read again the next night.
        #expect(readAgain(try run(incremental, bundle: "com.example.game", mmpZone: "Asia/Tokyo")) == [])
    }

    @Test("a run with the same roots (given twice, in another order) or the same --mmp-tz by another name reads nothing again and joins only what changed; other roots or zones read again")
    func equivalentRulesReadNothingAgain() throws {
        let receipts = [Line.v2Receipt("2026-11-01T10:01:00Z", "u_1", transaction: Line.v2("t_1", "gems60", purchase: "2026-11-01T10:00:00Z"))]
        let notifications = [Line.notification("SUBSCRIBED", uuid: "00000000-0000-4000-8000-000000000001", signed: "2026-11-01T10:00:00Z",
                                               transaction: Line.v2("t_3", "pro.monthly", purchase: "2026-11-01T10:00:00Z", expires: "2026-12-01T10:00:00Z"))]
        let mmp = ["Install Time,Event Time,Event Name,Media Source,Campaign,Customer User ID",
                   "2026-11-02 05:00:00,2026-11-02 05:00:00,install,Facebook Ads,c1,u_1"]
        let scenario = try Scenario()
        try scenario.catalog()
        _ = try scenario.write("receipts/r.jsonl", receipts).write("notifications/n.jsonl", notifications).write("attribution/a.csv", mmp)
            .write("server/s.jsonl", [Line.order("2026-11-01T09:59:00Z", "o_1", "u_1", "gems60")])
        let test: [UInt8] = { if case .verify(let roots) = SignatureCheck.testChain { return roots.first ?? [] } else { return [] } }()
        let other = try SignatureFixture.certificate("untrusted-root.pem")
        var fullJoins = 0
        func run(roots: [[UInt8]], mmpZone: String) throws -> [String] {
            let zone = try #require(Zone(mmpZone))
            let result = try Pipeline.run(RunOptions(
                input: scenario.input, databasePath: scenario.databasePath, outFolder: scenario.out, jobs: 2,
                lineRules: LineRules(mmpZone: zone, signatures: .verify(extraRoots: roots)),
                reconcile: ReconcileSettings(asOfMs: Line.ms("2026-11-05T00:00:00Z"), mmpZone: zone), report: ReportSettings(outFolder: scenario.out)),
                progress: nil)
            if result.join.recomputedTransactions == nil { fullJoins += 1 }
            return readAgain(result)
        }
        _ = try run(roots: [test], mmpZone: "UTC")
        _ = try run(roots: [test], mmpZone: "UTC")
        fullJoins = 0
        #expect(try run(roots: [test, test], mmpZone: "Etc/UTC") == [])
        #expect(try run(roots: [test], mmpZone: "GMT") == [])
        _ = try run(roots: [test, other], mmpZone: "UTC")
        #expect(try run(roots: [other, test, other], mmpZone: "Etc/GMT") == [])
        // The join, which records the zone too, updates what changed rather than rebuilding everything.
        #expect(fullJoins == 0)
        // Near misses: another set of roots reads the Apple files again, another zone the MMP file.
        #expect(try run(roots: [other], mmpZone: "UTC") == ["notifications/n.jsonl", "receipts/r.jsonl"])
        #expect(try run(roots: [other], mmpZone: "Asia/Kolkata") == ["attribution/a.csv"])
        if (try? FileManager.default.destinationOfSymbolicLink(atPath: "/usr/share/zoneinfo/Asia/Calcutta")) != nil {
            #expect(try run(roots: [other], mmpZone: "Asia/Calcutta") == [])
        }
    }

    @Test("an MMP time with its own offset in the hour --mmp-tz repeats is read again by a clock it is more than a day ahead of, as a fresh store reads it")
    func clockJudgesRepeatedHourMMPTime() throws {
        // 09:30 UTC on 1 November 2026 is 01:30 in Los Angeles on the clocks' second pass through 01:00-02:00
        // (01:30 first came at 08:30 UTC): the store keeps the wall time, which names both instants.
        let mmp = ["Install Time,Event Time,Event Name,Media Source,Campaign,Customer User ID",
                   "2026-11-01 09:30:00+00:00,2026-11-01 09:30:00+00:00,install,Facebook Ads,c1,u_1"]
        let registrations = [#"{"ts":"2026-10-30T00:10:00Z","user_id":"u_1","method":"email","country":"US"}"#]
        func write(_ scenario: Scenario) throws {
            try scenario.catalog()
            _ = try scenario.write("attribution/a.csv", mmp).write("registrations/r.jsonl", registrations)
        }
        func run(_ scenario: Scenario, now: String) throws -> RunResult {
            let zone = try #require(Zone("America/Los_Angeles"))
            return try Pipeline.run(RunOptions(
                input: scenario.input, databasePath: scenario.databasePath, outFolder: scenario.out, jobs: 2,
                lineRules: LineRules(nowMs: Line.ms(now), mmpZone: zone, signatures: .testChain),
                reconcile: ReconcileSettings(asOfMs: Line.ms("2026-11-05T00:00:00Z"), mmpZone: zone), report: ReportSettings(outFolder: scenario.out)),
                progress: nil)
        }
        let incremental = try Scenario()
        try write(incremental)
        _ = try run(incremental, now: "2026-11-05T00:00:00Z")
        // Near miss: a clock less than a day behind 09:30 UTC still accepts the install; nothing is read again.
        #expect(readAgain(try run(incremental, now: "2026-10-31T09:45:00Z")) == [])
        // A day ahead of a clock at 09:00 UTC (though 08:30 UTC, the first 01:30, is not): read again and rejected.
        #expect(readAgain(try run(incremental, now: "2026-10-31T09:00:00Z")) == ["attribution/a.csv"])
        #expect(try incremental.output("rejects.csv").contains("attribution/a.csv,2,time in the future: 'Event Time' is 2026-11-01T09:30:00.000Z"))
        let fresh = try Scenario()
        try write(fresh)
        _ = try run(fresh, now: "2026-10-31T09:00:00Z")
        try expectSame(incremental, fresh, "clock set back before a repeated-hour MMP time")
    }

    @Test("a report writes again every user whose stored install differs in any column, and leaves the others")
    func userInstallsRewrittenWhereTheyDiffer() throws {
        let scenario = try Scenario()
        for file in try SourceFile.list(in: Self.sampleData) { try scenario.link(file) }
        _ = try run(scenario, input: scenario.input)
        let computed = try rows(scenario, "fct_user_installs")
        let database = try scenario.open()
        let matched = try database.cached("SELECT user_id FROM fct_user_installs WHERE install_ms IS NOT NULL ORDER BY user_id LIMIT 5")
        var users: [String] = []
        while try matched.step() { users.append(matched.row.string(0)) }
        matched.reset()
        let unattributed = try database.scalar("SELECT min(user_id) FROM fct_user_installs WHERE matched_by = 'unattributed'")
        try #require(users.count == 5)
        guard case .text(let loner) = unattributed else { Issue.record("sample-data has no unattributed user"); return }
        // One column off each: what a stale row from an earlier night looks like.
        try database.execute("""
            UPDATE fct_user_installs SET install_ms = install_ms + 1 WHERE user_id = '\(users[0])';
            UPDATE fct_user_installs SET media_source = 'elsewhere' WHERE user_id = '\(users[1])';
            UPDATE fct_user_installs SET campaign = NULL WHERE user_id = '\(users[2])';
            UPDATE fct_user_installs SET matched_by = 'idfa' WHERE user_id = '\(users[3])';
            UPDATE fct_user_installs SET line = line + 1 WHERE user_id = '\(users[4])';
            UPDATE fct_user_installs SET file_id = 1, line = 2 WHERE user_id = '\(loner)';
            DELETE FROM fct_user_installs WHERE user_id = (SELECT max(user_id) FROM fct_user_installs);
            INSERT INTO fct_user_installs VALUES ('u_nobody', NULL, NULL, NULL, 'unattributed', NULL, NULL);
            """)
        #expect(try rows(scenario, "fct_user_installs") != computed)
        _ = try ReportStage.run(database: database, settings: ReportSettings(outFolder: scenario.out))
        #expect(try rows(scenario, "fct_user_installs") == computed)
    }

    @Test("a store whose user installs name their line as path:line text (an older iaprecon) has them written anew by the next run")
    func userInstallsAsTextFromAnOlderStore() throws {
        let files = try SourceFile.list(in: Self.sampleData)
        let scenario = try Scenario(), reference = try Scenario()
        for store in [scenario, reference] {
            for file in files { try store.link(file) }
            _ = try run(store, input: store.input)
        }
        let database = try scenario.open()
        try database.execute("""
            CREATE TABLE old_installs (
              user_id TEXT PRIMARY KEY, install_ms INTEGER, media_source TEXT, campaign TEXT, matched_by TEXT NOT NULL, source TEXT
            ) WITHOUT ROWID;
            INSERT INTO old_installs SELECT user_id, install_ms, media_source, campaign, matched_by,
              (SELECT path FROM files f WHERE f.file_id = i.file_id) || ':' || line FROM fct_user_installs i;
            DROP TABLE fct_user_installs;
            ALTER TABLE old_installs RENAME TO fct_user_installs;
            DELETE FROM schema_migrations WHERE id >= 12;
            """)
        _ = try run(scenario, input: scenario.input)
        #expect(try rows(scenario, "fct_user_installs") == rows(reference, "fct_user_installs"))
        let installed = try #require(try rows(reference, "fct_user_installs").first { $0[1] != .null })
        guard case .text(let user) = installed[0], case .text(let path) = installed[5], case .integer(let line) = installed[6] else {
            Issue.record("no install in sample-data")
            return
        }
        let story = try UserHistory.load(try scenario.open(), .user(user))
        #expect(story.events.first { $0.event == "install" }?.source == "\(path):\(line)")
    }

    @Test("report alone refuses a store no join reconciled; the join refuses one a bulk ingest left unindexed; both name the commands")
    func reportRefusesUnreconciledStore() throws {
        let scenario = try Scenario()
        try scenario.write("server/s.jsonl", [Line.order("2026-11-20T10:00:00Z", "o1", "u1", "gems60")])
        let database = try scenario.open()
        _ = try Pipeline.ingest(input: scenario.input, database: database, jobs: 1, rules: Scenario.rules(asOf: nil), progress: nil)
        let settings = ReportSettings(outFolder: scenario.out)
        let error = try #require(throws: NotReconciled.self) { try ReportStage.run(database: database, settings: settings) }
        #expect(error.description.contains("'iaprecon join'") && error.description.contains("'iaprecon run'"))
        _ = try scenario.run()
        // A bulk ingest killed before normalize leaves the raw lines without their indexes.
        try RawIndexes.drop(database)
        let findings = try database.scalar("SELECT count(*) FROM fct_findings")
        let refusal = try #require(throws: NotNormalized.self) { try Pipeline.join(database: database, settings: ReconcileSettings()) }
        #expect(refusal.description.contains("'iaprecon normalize'"))
        #expect(try database.scalar("SELECT count(*) FROM fct_findings") == findings)
    }

    @Test("results an older iaprecon wrote (no delivered_to) are refused by report alone and rebuilt in full by the next join")
    func resultsFromAnOlderStore() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        _ = try scenario.write("server/a.jsonl", [Line.delivered("2026-11-01T10:11:00Z", "u_1", "t_1", "gems60")])
            .write("receipts/a.jsonl", [Line.v2Receipt("2026-11-01T10:10:00Z", "u_1", transaction: Line.v2("t_1", "gems60", purchase: "2026-11-01T10:00:00Z"))])
        _ = try run(scenario, input: scenario.input)
        let before = try scenario.output("transactions.csv")
        let database = try scenario.open()
        try database.execute("ALTER TABLE int_transactions_resolved DROP COLUMN delivered_to")
        let error = try #require(throws: NotReconciled.self) {
            try ReportStage.run(database: database, settings: ReportSettings(outFolder: scenario.out))
        }
        #expect(error.description.contains("older iaprecon") && error.description.contains("'iaprecon join'"))
        // Nothing changed since, yet the join rebuilds every result rather than update the older ones.
        #expect(try Pipeline.join(database: database, settings: ReconcileSettings()).recomputedTransactions == nil)
        _ = try ReportStage.run(database: database, settings: ReportSettings(outFolder: scenario.out))
        #expect(try scenario.output("transactions.csv") == before)
        #expect(try database.scalar("SELECT delivered_to FROM int_transactions_resolved") == .text("u_1"))
    }

    @Test("history on a store an older iaprecon reconciled, before the run that rebuilds its results, says a rebuild is pending; after it, nothing")
    func historyOnResultsFromAnOlderStore() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        _ = try scenario.write("server/a.jsonl", [Line.delivered("2026-11-01T10:11:00Z", "u_1", "t_1", "gems60")])
            .write("receipts/a.jsonl", [Line.v2Receipt("2026-11-01T10:10:00Z", "u_1", transaction: Line.v2("t_1", "gems60", purchase: "2026-11-01T10:00:00Z"))])
        _ = try run(scenario, input: scenario.input)
        #expect(try UserHistory.load(scenario.open(), .user("u_1")).caveat == nil)
        // What the previous release left: results with no is_apple_sale, the last migration not applied.
        do {
            let database = try scenario.open()
            var indexes: [String] = []
            try database.forEach("SELECT name FROM sqlite_master WHERE type = 'index' AND sql LIKE '%is_apple_sale%'") { indexes.append($0.string(0)) }
            for index in indexes { try database.execute("DROP INDEX \(index)") }
            try database.execute("ALTER TABLE int_transactions_resolved DROP COLUMN is_apple_sale")
            try database.run("DELETE FROM schema_migrations WHERE id = ?", [.integer(Int64(Schema.latestVersion))])
        }
        // history only reads: the store stays unmigrated, which it refuses to read, naming the run that upgrades it.
        let unmigrated = try Store.open(path: scenario.databasePath, readOnly: true)
        let refused = #expect(throws: StoreError.self) { try UserHistory.load(unmigrated, .user("u_1")) }
        #expect(refused?.reason.contains("older iaprecon") == true && refused?.reason.contains("'iaprecon run'") == true)
        // Migrated by a command that failed (report alone refuses the results): still pending.
        let database = try scenario.open()
        #expect(throws: NotReconciled.self) { try ReportStage.run(database: database, settings: ReportSettings(outFolder: scenario.out)) }
        #expect(try UserHistory.load(database, .user("u_1")).caveat?.contains("older iaprecon") == true)
        _ = try run(scenario, input: scenario.input)
        #expect(try UserHistory.load(database, .user("u_1")).caveat == nil)
    }

    @Test("a store an older iaprecon wrote with a table of matched orders is migrated: the table goes, report alone refuses the results until the next run rebuilds them in full, to the same outputs")
    func matchedOrdersTableFromAnOlderStore() throws {
        let files = try SourceFile.list(in: Self.sampleData)
        let scenario = try Scenario()
        for file in files { try scenario.link(file) }
        try scenario.fixDeviceIDKey()
        _ = try run(scenario, input: scenario.input)
        let reference = try Scenario()
        for file in files { try reference.link(file) }
        try reference.fixDeviceIDKey()
        _ = try run(reference, input: reference.input)
        let migration = try #require(Schema.migrations.first { $0.sql.contains("DROP TABLE IF EXISTS int_orders_matched;") }?.id)
        // What the older iaprecon held: every order once more, with its transaction and rule, keyed
        // by order, a killed rebuild's copy of it, and no index of matched orders.
        let database = try scenario.open()
        try database.execute("""
            CREATE TABLE int_orders_matched (order_id TEXT NOT NULL, transaction_id TEXT, match_rule TEXT);
            INSERT INTO int_orders_matched
              SELECT o.order_id, t.transaction_id, t.match_rule
              FROM (SELECT DISTINCT order_id FROM raw_server__orders) o LEFT JOIN int_transactions_resolved t ON t.order_id = o.order_id;
            CREATE UNIQUE INDEX int_orders_key ON int_orders_matched(order_id);
            CREATE TABLE int_orders_matched__next (order_id TEXT NOT NULL, transaction_id TEXT, match_rule TEXT);
            DROP INDEX \(Tables.matchedOrderIndex);
            DELETE FROM schema_migrations WHERE id >= \(migration);
            """)
        #expect(try database.scalar("SELECT count(*) FROM int_orders_matched WHERE transaction_id IS NULL").integerValue > 0)
        let events = try UserHistory.load(reference.open(), .user("u_1005")).events

        try Schema.migrate(database)
        #expect(try database.scalar("SELECT count(*) FROM sqlite_master WHERE name LIKE 'int_orders%'") == .integer(0))
        #expect(try ChangedKeys.isFullRebuildPending(database))
        let refusal = try #require(throws: NotReconciled.self) {
            try ReportStage.run(database: database, settings: ReportSettings(outFolder: scenario.out))
        }
        #expect(refusal.description.contains("older iaprecon") && refusal.description.contains("'iaprecon join'")
                && refusal.description.contains("'iaprecon run'"))
        // history still finds each order's transaction meanwhile, and says a rebuild waits.
        let meanwhile = try UserHistory.load(database, .user("u_1005"))
        #expect(meanwhile.events == events)
        #expect(meanwhile.caveat != nil)

        let night = try run(scenario, input: scenario.input)
        #expect(night.join.recomputedTransactions == nil, "the first join after the migration rebuilds in full")
        #expect(night.join.fullRebuildReason == "no earlier join to update (a new store, or results of an older iaprecon)")
        #expect(try StoredJoinResults.areCurrent(database))
        try expectSame(scenario, reference, "migrated matched orders")
        #expect(try UserHistory.load(database, .user("u_1005")).events == events)
    }

    @Test("a night whose changes reach past its limit of transactions rebuilds in full and says why; one that reaches exactly the limit stays incremental")
    func nightReachingTooFarSaysWhy() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        // u1's 1,100 purchases and u2's 999, all linked by their user: a night that touches a user
        // reaches every one of their transactions. The limit is 1,000 (a third of 2,099 is less).
        func receipts(_ user: String, _ count: Int, from first: Int = 0) -> [String] {
            (first..<(first + count)).map { index in
                let minute = Timestamp.iso8601(Line.ms("2026-11-20T00:00:00Z") + Int64(index) * 60_000)
                return Line.v2Receipt(minute, user, transaction: Line.v2("\(user)-t\(index)", "gems60", purchase: minute))
            }
        }
        try scenario.write("receipts/u1.jsonl", receipts("u1", 1_100))
        try scenario.write("receipts/u2.jsonl", receipts("u2", 999))
        let first = try scenario.run(asOf: "2026-11-29T00:00:00Z")
        #expect(first.join.fullRebuildReason == "no earlier join to update (a new store, or results of an older iaprecon)")

        try scenario.write("receipts/u2-night.jsonl", receipts("u2", 1, from: 999))
        let nearMiss = try scenario.run(asOf: "2026-11-29T00:00:00Z")
        #expect(nearMiss.join.recomputedTransactions == 1_000, "near miss: u2's 1,000 transactions are the limit, not past it")
        #expect(nearMiss.join.fullRebuildReason == nil)

        try scenario.write("receipts/u1-night.jsonl", receipts("u1", 1, from: 1_100))
        let past = try scenario.run(asOf: "2026-11-29T00:00:00Z")
        #expect(past.join.recomputedTransactions == nil)
        #expect(past.join.fullRebuildReason == "the changes reach more than 1000 transactions, which a full rebuild reads faster")
    }

    @Test("the join alone refuses a store nothing was normalized into, naming the command")
    func joinRefusesUnnormalizedStore() throws {
        let scenario = try Scenario()
        try scenario.write("server/s.jsonl", [Line.order("2026-11-20T10:00:00Z", "o1", "u1", "gems60")])
        let database = try scenario.open()
        _ = try Pipeline.ingest(input: scenario.input, database: database, jobs: 1, rules: Scenario.rules(asOf: nil), progress: nil)
        #expect(throws: NotNormalized.self) { try Pipeline.join(database: database, settings: ReconcileSettings()) }
        try Pipeline.normalize(database: database)
        // Normalized, the same store joins: in full, the first time.
        #expect(try Pipeline.join(database: database, settings: ReconcileSettings()).recomputedTransactions == nil)
    }

    @Test("run leaves a first load's indexes to the join, which rebuilds in full and builds every one of them; a second run finds them")
    func runLeavesIndexesToAFullRebuild() throws {
        let scenario = try Scenario()
        try scenario.write("server/s.jsonl", [Line.order("2026-11-20T10:00:00Z", "o1", "u1", "gems60")])
        let first = try scenario.run()
        #expect(first.join.recomputedTransactions == nil)
        #expect(first.join.fullRebuildReason == "no earlier join to update (a new store, or results of an older iaprecon)")
        #expect(first.join.rawIndexesBuilt == RawIndexes.all.count)
        let database = try scenario.open()
        #expect(try SQLiteRawIndexStore(database).missingRawIndexes().isEmpty)
        #expect(first.timings.map(\.0) == ["ingest", "normalize", "join", "report"])
        // Nothing new: no index is missing, none is built again.
        let second = try scenario.run()
        #expect(second.join.rawIndexesBuilt == 0)
        #expect(second.join.recomputedTransactions != nil)
    }

    @Test("a join that may update, left a store without its indexes, builds them before it reads by key")
    func joinThatMayUpdateBuildsIndexesFirst() throws {
        let scenario = try Scenario()
        try scenario.write("server/s1.jsonl", [Line.order("2026-11-20T10:00:00Z", "o1", "u1", "gems60")])
        _ = try scenario.run()
        // A delivery Apple never sold: an orphan, which the night must find through the indexes it builds.
        try scenario.write("server/s2.jsonl", [Line.delivered("2026-11-21T10:00:00Z", "u1", "t_9", "gems60", orderID: "o1")])
        let database = try scenario.open()
        _ = try Pipeline.ingest(input: scenario.input, database: database, jobs: 1, rules: Scenario.rules(asOf: nil), progress: nil)
        try RawIndexes.drop(database)
        #expect(throws: NotNormalized.self) { try Pipeline.join(database: database, settings: ReconcileSettings()) }
        let night = try Pipeline.join(database: database, settings: ReconcileSettings(), missingRawIndexes: .builtByTheJoin)
        #expect(night.recomputedTransactions != nil, "an incremental join, by key, through the indexes it built first")
        #expect(night.rawIndexesBuilt == RawIndexes.all.count)
        #expect(try SQLiteRawIndexStore(database).missingRawIndexes().isEmpty)
        #expect(try Scenario.findings(database).filter { $0.kind == .orphanDelivery }.map(\.transactionID) == ["t_9"])
    }

    @Test("a store an older iaprecon wrote (every MMP column, staged MMP rows and first sign-ups) is migrated: each row kept once, attribution unchanged")
    func mmpRowsFromAnOlderStore() throws {
        let files = try SourceFile.list(in: Self.sampleData)
        try #require(files.contains { $0.kind == .attribution })
        let scenario = try Scenario()
        for file in files { try scenario.link(file) }
        _ = try run(scenario, input: scenario.input)
        let current = try scenario.open()
        let rowCount = try current.scalar("SELECT count(*) FROM raw_mmp__events")
        #expect(rowCount.integerValue > 0)
        let reference = try Scenario()
        for file in files { try reference.link(file) }
        _ = try run(reference, input: reference.input)
        // Back to what schema 7 held: migration 1's MMP columns, an install time on every row, the
        // staged MMP tables (with a pending MMP rebuild), the staged first sign-ups, and an index
        // of resolved transactions by order.
        try current.execute("""
            CREATE TABLE wide (
              file_id INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE, line INTEGER NOT NULL, item INTEGER NOT NULL,
              event_wall_ms INTEGER, install_wall_ms INTEGER, event_name TEXT, media_source TEXT, channel TEXT, campaign TEXT,
              campaign_id TEXT, adset TEXT, ad TEXT, country TEXT, customer_user_id TEXT, idfv TEXT, idfa TEXT, appsflyer_id TEXT,
              revenue TEXT, revenue_currency TEXT, revenue_usd TEXT, is_retargeting_n INTEGER, platform TEXT, touch_type TEXT,
              event_value_key TEXT, PRIMARY KEY (file_id, line, item)
            ) WITHOUT ROWID;
            INSERT INTO wide SELECT file_id, line, item, event_wall_ms, CASE WHEN event_name = 'install' THEN install_wall_ms
                   ELSE event_wall_ms - 60000 END, coalesce(event_name, 'af_login'),
                   media_source, 'Facebook', campaign, 'c1', 'set', 'ad', 'US', customer_user_id, idfv, idfa, appsflyer_id, revenue,
                   revenue_currency, revenue_usd, is_retargeting_n, 'ios', 'click', event_value_key
              FROM raw_mmp__events;
            DROP TABLE raw_mmp__events;
            ALTER TABLE wide RENAME TO raw_mmp__events;
            CREATE TABLE stg_mmp__identities (event_wall_ms INTEGER, first INTEGER, second INTEGER);
            CREATE TABLE stg_mmp__installs (install_wall_ms INTEGER);
            CREATE TABLE stg_mmp__purchases (event_wall_ms INTEGER);
            CREATE TABLE stg_mmp__links (customer_user_id TEXT, appsflyer_id TEXT);
            CREATE TABLE stg_registrations__first (user_id TEXT PRIMARY KEY, ts_ms INTEGER NOT NULL, idfv TEXT) WITHOUT ROWID;
            CREATE TABLE normalize__changed_registrations (key TEXT PRIMARY KEY) WITHOUT ROWID;
            CREATE INDEX int_transactions_by_order__2 ON int_transactions_resolved(order_id);
            INSERT INTO dirty_keys VALUES ('mmp_rebuild', '');
            DELETE FROM schema_migrations WHERE id >= 8;
            """)
        _ = try run(scenario, input: scenario.input)

        let database = try scenario.open()
        #expect(try database.scalar("SELECT count(*) FROM raw_mmp__events") == rowCount)
        let columns = try database.scalar("SELECT group_concat(name, ',') FROM pragma_table_info('raw_mmp__events')")
        #expect(columns == .text("file_id,line,item," + RawTable.mmpEvents.columns.joined(separator: ",")))
        #expect(try database.scalar("""
            SELECT count(*) FROM sqlite_master
            WHERE name LIKE 'stg_mmp%' OR name LIKE 'stg_registrations%' OR name = 'normalize__changed_registrations'
               OR name LIKE 'int_transactions_by_order%'
            """) == .integer(0))
        // An install time is kept where it is read: on installs.
        #expect(try database.scalar("""
            SELECT count(*) FROM raw_mmp__events WHERE install_wall_ms IS NOT NULL AND event_name IS NOT 'install'
            """) == .integer(0))
        try expectSame(scenario, reference, "migrated MMP rows")
    }

    @Test("a store that kept device-id pseudonyms and MMP event values as hex (an older iaprecon) is migrated to the bytes a fresh ingest keeps; outputs are unchanged")
    func hexPseudonymsFromAnOlderStore() throws {
        let (scenario, reference) = try twoSampleStores(having: [.attribution, .registrations])
        let database = try scenario.open()
        // Back to what schema 10 held: each pseudonym as 32 hex digits, `…` and the id's tail; each
        // event value's hash as 16 hex digits, an empty value's too; and rows that are not installs
        // (or not purchases) with the campaign, device ids and revenue no reader takes of them.
        func hexPseudonym(_ column: String) -> String {
            "\(column) = lower(hex(substr(\(column), 1, 16))) || '…' || CAST(substr(\(column), 17) AS TEXT)"
        }
        try database.execute("""
            UPDATE raw_registrations__users SET \(hexPseudonym("idfv")), \(hexPseudonym("idfa")), \(hexPseudonym("appsflyer_id"));
            UPDATE raw_mmp__events SET \(hexPseudonym("idfv")), \(hexPseudonym("idfa")), \(hexPseudonym("appsflyer_id")),
              event_value_key = CASE WHEN event_value_key IS NULL THEN 'cbf29ce484222325' ELSE lower(hex(event_value_key)) END,
              event_name = coalesce(event_name, 'af_login');
            UPDATE raw_mmp__events SET media_source = 'Facebook Ads', campaign = 'c1', idfv = '0123456789abcdef0123456789abcdef…4C5D'
              WHERE event_name != 'install';
            UPDATE raw_mmp__events SET revenue = '1.00', revenue_currency = 'USD', revenue_usd = '1' WHERE event_name != 'af_purchase';
            DELETE FROM schema_migrations WHERE id >= 11;
            """)
        #expect(try database.scalar("SELECT count(*) FROM raw_mmp__events WHERE typeof(appsflyer_id) = 'text'").integerValue > 0)
        try Schema.migrate(database)
        // Row for row, what the migration left is what a fresh ingest keeps.
        try expectSameRows([.mmpEvents, .registrations], database, try reference.open())
        #expect(try database.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'raw_registrations_by_user'") == .integer(1))
        _ = try run(scenario, input: scenario.input)
        try expectSame(scenario, reference, "migrated pseudonyms")
    }

    @Test("a store that kept every MMP event's name and event value, and revenue beside revenue in USD (an older iaprecon), keeps what attribution reads once migrated; outputs are unchanged")
    func mmpEventNamesFromAnOlderStore() throws {
        let (scenario, reference) = try twoSampleStores(having: [.attribution])
        let database = try scenario.open()
        // Back to what schema 16 held: a name and an event value's hash on every event, and a
        // purchase's revenue and currency beside its revenue in USD.
        try database.execute("""
            UPDATE raw_mmp__events SET event_name = 'af_login', event_value_key = X'0102030405060708' WHERE event_name IS NULL;
            UPDATE raw_mmp__events SET revenue = '1.00', revenue_currency = 'EUR' WHERE revenue_usd IS NOT NULL;
            DELETE FROM schema_migrations WHERE id >= 17;
            """)
        let others = try database.scalar("SELECT count(*) FROM raw_mmp__events WHERE event_name = 'af_login'")
        #expect(others.integerValue > 0)
        #expect(try database.scalar("SELECT count(*) FROM raw_mmp__events WHERE revenue_currency = 'EUR'").integerValue > 0)
        try Schema.migrate(database)
        try expectSameRows([.mmpEvents], database, try reference.open())
        #expect(try database.scalar("SELECT count(*) FROM raw_mmp__events WHERE event_name IS NULL AND event_value_key IS NULL") == others)
        _ = try run(scenario, input: scenario.input)
        try expectSame(scenario, reference, "migrated MMP event names")
    }

    @Test("a notification keeps its signing time and version; a consumption request its uuid, type and transaction too; a store that kept more (an older iaprecon) is migrated to the same, outputs unchanged")
    func notificationsKeptAndMigrated() throws {
        let (scenario, reference) = try twoSampleStores(having: [.notifications])
        let database = try scenario.open()
        // What the sample's notifications keep: requests all an answer names, the rest their time and version.
        let requests = try database.scalar("""
            SELECT count(*) FROM raw_notifications__notifications WHERE notification_type = 'CONSUMPTION_REQUEST'
              AND notification_uuid IS NOT NULL AND transaction_id IS NOT NULL AND signed_ms IS NOT NULL
            """)
        let others = try database.scalar("""
            SELECT count(*) FROM raw_notifications__notifications WHERE notification_type IS NULL AND notification_uuid IS NULL
              AND subtype IS NULL AND environment IS NULL AND transaction_id IS NULL AND version IS NOT NULL
            """)
        #expect(requests.integerValue > 0 && others.integerValue > 0)
        #expect(try database.scalar("SELECT count(*) FROM raw_notifications__notifications") == .integer(requests.integerValue + others.integerValue))
        #expect(try scenario.output("consumption_requests.jsonl").contains("0a3cee3d-920a-4658-8128-61d634efc3d1"))
        // Back to what schema 17 held: every notification's uuid, type, subtype, environment and transaction.
        try database.execute("""
            UPDATE raw_notifications__notifications SET notification_uuid = 'n-' || line, notification_type = 'DID_RENEW',
              subtype = 'AUTO_RENEW_ENABLED', environment = 'Production', transaction_id = 't-' || line WHERE notification_type IS NULL;
            DELETE FROM schema_migrations WHERE id >= 18;
            """)
        try Schema.migrate(database)
        // Migration 22 (after 18) keeps each notification's app from then on: those stored before name none.
        try expectSameRows([.notifications], database, try reference.open(), except: ["bundle_id"])
        #expect(try database.scalar("SELECT count(*) FROM raw_notifications__notifications WHERE bundle_id IS NOT NULL") == .integer(0))
        _ = try run(scenario, input: scenario.input)
        try expectSame(scenario, reference, "migrated notifications")
    }

    /// Two stores run over the sample data with the same device-id key: one to take back to what
    /// an older iaprecon kept, one fresh to hold it to. The sample data must have files of `kinds`.
    private func twoSampleStores(having kinds: [SourceKind]) throws -> (Scenario, Scenario) {
        let files = try SourceFile.list(in: Self.sampleData)
        for kind in kinds { try #require(files.contains { $0.kind == kind }, "\(kind)") }
        let scenario = try Scenario(), reference = try Scenario()
        for store in [scenario, reference] {
            for file in files { try store.link(file) }
            try store.fixDeviceIDKey()
            _ = try run(store, input: store.input)
        }
        return (scenario, reference)
    }

    /// Expects `tables` to hold the same rows in `migrated` as in `fresh`, each named by its file's path and line,
    /// in every column but `except`.
    private func expectSameRows(_ tables: [RawTable], _ migrated: Database, _ fresh: Database, except: Set<String> = []) throws {
        for table in tables {
            let columns = table.columns.filter { !except.contains($0) }
            let select = "SELECT f.path, r.line, r.item, \(columns.map { "r." + $0 }.joined(separator: ", ")) FROM \(table.name) r "
                + "JOIN files f USING (file_id) ORDER BY f.path, r.line, r.item"
            func rows(_ store: Database) throws -> [[SQLValue]] {
                var rows: [[SQLValue]] = []
                try store.forEach(select) { row in rows.append((0..<(3 + columns.count)).map { row.value($0) }) }
                return rows
            }
            let migratedRows = try rows(migrated), freshRows = try rows(fresh)
            #expect(migratedRows.count == freshRows.count && !freshRows.isEmpty, "\(table.name)")
            let difference = zip(migratedRows, freshRows).first { $0 != $1 }
            #expect(difference == nil, "\(table.name)")
        }
    }

    @Test("a store an older iaprecon left with staged rows and a night's changes pending is migrated: what they linked is revisited")
    func stagedServerLinesFromAnOlderStore() throws {
        let scenario = try Scenario()
        try scenario.catalog()
        _ = try scenario.write("server/a.jsonl", [Line.order("2026-11-01T10:00:00Z", "o_1", "u_1", "gems60")])
        _ = try run(scenario, input: scenario.input)
        let database = try scenario.open()
        // What schema 9 held, after an ingest whose normalize never ran: t_1 and o_2 changed; the
        // staged rows (which only the older normalize read) link them to users and orders.
        try database.execute("""
            CREATE TABLE stg_server__orders (order_id TEXT PRIMARY KEY, ts_ms INTEGER, user_id TEXT, product_id TEXT, price TEXT,
              currency TEXT, storefront TEXT, file_id INTEGER, line INTEGER);
            INSERT INTO stg_server__orders VALUES ('o_2', 0, 'u_order', 'gems60', NULL, NULL, NULL, 1, 1),
              ('o_3', 0, 'u_unchanged', 'gems60', NULL, NULL, NULL, 1, 2);
            CREATE TABLE stg_server__deliveries (delivery_key TEXT PRIMARY KEY, ts_ms INTEGER, user_id TEXT, transaction_id TEXT,
              product_id TEXT, order_id TEXT, quantity INTEGER, delivery_id TEXT, copies INTEGER, file_id INTEGER, line INTEGER);
            INSERT INTO stg_server__deliveries VALUES ('k1', 0, 'u_delivered', 't_1', 'gems60', 'o_delivered', 1, NULL, 1, 1, 3),
              ('k2', 0, 'u_other', 't_9', 'gems60', 'o_other', 1, NULL, 1, 1, 4);
            CREATE TABLE stg_receipts__claims (order_id TEXT, transaction_id TEXT, received_ms INTEGER, file_id INTEGER, line INTEGER);
            INSERT INTO stg_receipts__claims VALUES ('o_claimed', 't_1', 0, 1, 5), ('o_claimed_elsewhere', 't_9', 0, 1, 6);
            CREATE TABLE stg_apple__transactions (transaction_id TEXT PRIMARY KEY, original_transaction_id TEXT NOT NULL,
              app_account_token TEXT, file_id INTEGER, line INTEGER, offer TEXT, file_id_3 INTEGER);
            INSERT INTO stg_apple__transactions VALUES ('t_1', 't_chain', 'o_token', 1, 7, NULL, NULL),
              ('t_9', 't_other_chain', 'o_other_token', 1, 8, NULL, NULL);
            CREATE TABLE stg_apple__refunds (transaction_id TEXT, kind TEXT);
            CREATE TABLE stg_receipts__senders (transaction_id TEXT NOT NULL, user_id TEXT NOT NULL, first_ms INTEGER,
              file_id INTEGER, line INTEGER, PRIMARY KEY (transaction_id, user_id)) WITHOUT ROWID;
            INSERT INTO stg_receipts__senders VALUES ('t_1', 'u_sender', 0, 1, 9), ('t_9', 'u_other_sender', 0, 1, 10);
            CREATE TABLE stg_server__orders__next (order_id TEXT);
            CREATE TABLE stg_apple__transactions__next (transaction_id TEXT);
            CREATE TABLE normalize__changed_orders (key TEXT PRIMARY KEY) WITHOUT ROWID;
            CREATE TABLE normalize__changed_transactions (key TEXT PRIMARY KEY) WITHOUT ROWID;
            INSERT INTO dirty_keys VALUES ('transaction', 't_1'), ('order', 'o_2');
            DELETE FROM schema_migrations WHERE id >= 10;
            """)
        try Schema.migrate(database)
        #expect(try database.scalar("SELECT count(*) FROM sqlite_master WHERE name LIKE 'stg%' OR name LIKE 'normalize%'") == .integer(0))
        var pending: [String] = []
        // Migration 10's keys; a later migration that asks for a full rebuild adds `all` beside them.
        try database.forEach("SELECT kind || ' ' || key FROM dirty_keys WHERE kind != 'all' ORDER BY 1") { pending.append($0.string(0)) }
        #expect(pending == [
            "chain t_chain", "order o_2", "order o_claimed", "order o_delivered", "order o_token", "transaction t_1",
            "user u_delivered", "user u_order", "user u_sender",
        ])

        // A store that never had the tables migrates too.
        let fresh = try Scenario()
        _ = try fresh.write("server/a.jsonl", [Line.order("2026-11-01T10:00:00Z", "o_1", "u_1", "gems60")])
        _ = try run(fresh, input: fresh.input)
        let freshStore = try fresh.open()
        try freshStore.execute("DELETE FROM schema_migrations WHERE id >= 10")
        try Schema.migrate(freshStore)
        #expect(try freshStore.scalar("SELECT max(id) FROM schema_migrations") == .integer(Int64(Schema.latestVersion)))
    }

    @Test("a store whose staged rows name their sources as path:line text (an older iaprecon) is migrated, never misread, then equals a full rebuild")
    func sourcesAsTextFromAnOlderStore() throws {
        let files = try SourceFile.list(in: Self.sampleData)
        let late = try #require(files.last { $0.kind == .server })
        let scenario = try Scenario()
        for file in files where file != late { try scenario.link(file) }
        try scenario.fixDeviceIDKey()
        _ = try run(scenario, input: scenario.input)
        let database = try scenario.open()
        // What an older iaprecon left: staged rows with each source as `path:line`, one of them a
        // transaction, a refund and a sender no input line holds (what a misreading would show).
        try database.execute("""
            CREATE TABLE stg_apple__transactions (
              transaction_id TEXT PRIMARY KEY, original_transaction_id TEXT NOT NULL, product_id TEXT NOT NULL,
              purchase_ms INTEGER NOT NULL, expires_ms INTEGER, environment TEXT, price_milli INTEGER, currency TEXT,
              storefront TEXT, app_account_token TEXT, type TEXT, quantity INTEGER NOT NULL, ownership TEXT,
              subscription_group TEXT, first_seen_ms INTEGER, sightings INTEGER NOT NULL, sources TEXT NOT NULL, offer TEXT);
            INSERT INTO stg_apple__transactions VALUES ('t_ghost', 't_ghost', 'gems60', 0, NULL, 'Production', 990, 'USD', 'USA', NULL,
              'Consumable', 1, 'PURCHASED', NULL, 0, 1, 'server/ghost.jsonl:1', NULL);
            CREATE TABLE stg_apple__refunds (
              transaction_id TEXT NOT NULL, kind TEXT NOT NULL, event_ms INTEGER NOT NULL, revocation_type TEXT,
              revocation_percentage INTEGER, reason TEXT, source TEXT NOT NULL, PRIMARY KEY (transaction_id, kind, event_ms, source)
            ) WITHOUT ROWID;
            INSERT INTO stg_apple__refunds VALUES ('t_ghost', 'refund', 1, NULL, NULL, NULL, 'server/ghost.jsonl:2');
            CREATE TABLE stg_receipts__senders (
              transaction_id TEXT NOT NULL, user_id TEXT NOT NULL, first_ms INTEGER NOT NULL, source TEXT NOT NULL,
              PRIMARY KEY (transaction_id, user_id)
            ) WITHOUT ROWID;
            INSERT INTO stg_receipts__senders VALUES ('t_ghost', 'u_1005', 0, 'server/ghost.jsonl:3');
            DELETE FROM schema_migrations WHERE id >= 10;
            """)

        try scenario.link(late)
        _ = try run(scenario, input: scenario.input)
        #expect(try database.scalar("SELECT count(*) FROM sqlite_master WHERE name LIKE 'stg%'") == .integer(0))
        let full = try Scenario()
        for file in files { try full.link(file) }
        try full.fixDeviceIDKey()
        _ = try run(full, input: full.input)
        try expectSame(scenario, full, "sources as text")
        #expect(try UserHistory.load(database, .user("u_1005")).events == UserHistory.load(full.open(), .user("u_1005")).events)
    }

    /// The same outputs and the same join tables, row for row.
    /// Nights as operations run them: each brings the next day's files, but a file may come a
    /// night or two late, an older file may be re-exported shorter (lines lost) and later whole
    /// again, and fx.csv may be revised. After every night the store and every output equal a
    /// full rebuild of the same folder; the report patches `transactions.csv` when it can.
    @Test("random nights of late files, files replaced shorter then whole again, and revised fx rates each equal a full rebuild",
          arguments: [UInt64(41), 42])
    func randomNights(seed: UInt64) throws {
        var random = SplitMix64(state: seed)
        let generated = try Scenario()
        let options = GeneratorOptions(users: 300, days: 9, seed: seed)
        _ = try InputGenerator.write(options, to: generated.input)
        let files = try SourceFile.list(in: generated.input)
        // The day a file belongs to (`YYYY-MM-DD` in its name); undated files (catalog, fx) come on the first night.
        func day(_ file: SourceFile) -> String {
            let name = (file.relativePath as NSString).lastPathComponent
            guard let range = name.range(of: #"\d{4}-\d{2}-\d{2}"#, options: .regularExpression) else { return "" }
            return String(name[range])
        }
        let days = Set(files.map(day)).sorted()
        let nights = try Scenario()
        var late: [SourceFile] = []
        var shortened: [SourceFile] = []
        var (patched, lateCount, replacedCount, fxRevisions) = (0, 0, 0, 0)
        for (number, today) in days.enumerated() {
            // Today's files, each kept back a night with a chance of one in five; yesterday's late ones arrive.
            var arriving = late
            late = []
            for file in files where day(file) == today {
                if number > 0, Int.random(in: 0..<5, using: &random) == 0 { late.append(file) } else { arriving.append(file) }
            }
            lateCount += late.count
            for file in arriving { try nights.link(file) }
            // A file shortened on an earlier night comes back whole; another plain one loses a few lines.
            for file in shortened { try FileManager.default.removeItem(atPath: nights.input + "/" + file.relativePath); try nights.link(file) }
            shortened = []
            let present = try SourceFile.list(in: nights.input).filter { !$0.absolutePath.hasSuffix(".gz") && !day($0).isEmpty && day($0) < today }
            if let victim = present.randomElement(using: &random), Int.random(in: 0..<4, using: &random) != 0 {
                let lines = try String(contentsOfFile: victim.absolutePath, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
                let keepHeader = victim.kind.isCSV ? 1 : 0
                let kept = lines.enumerated().filter { $0.offset < keepHeader || $0.element.isEmpty || Int.random(in: 0..<4, using: &random) != 0 }
                try kept.map(\.element).joined(separator: "\n").write(toFile: victim.absolutePath, atomically: true, encoding: .utf8)
                shortened.append(try #require(files.first { $0.relativePath == victim.relativePath }))
                replacedCount += 1
            }
            // fx.csv revised: one rate of an earlier day moves by a basis point.
            if number > 0, Int.random(in: 0..<3, using: &random) == 0 {
                let path = nights.input + "/fx.csv"
                var lines = try String(contentsOfFile: path, encoding: .utf8).components(separatedBy: "\n")
                let rows = lines.indices.filter { $0 > 0 && lines[$0].split(separator: ",").count == 3 && !lines[$0].hasSuffix(",1") }
                if let row = rows.randomElement(using: &random), let rate = Decimal(string: String(lines[row].split(separator: ",")[2])) {
                    let fields = lines[row].split(separator: ",")
                    lines[row] = "\(fields[0]),\(fields[1]),\(rate + Decimal(1) / 10_000)"
                    try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
                    fxRevisions += 1
                }
            }
            let night = try run(nights, input: nights.input)
            if night.report.transactionsPatched != nil { patched += 1 }

            let full = try Scenario()
            for file in try SourceFile.list(in: nights.input) { try full.link(file) }
            _ = try run(full, input: full.input)
            try expectSame(nights, full, "seed \(seed), night \(number + 1) (\(today))")
        }
        // The nights did what they were meant to: late files, replacements and patched reports all happened.
        #expect(lateCount > 0 && replacedCount > 1 && patched > 1, "late \(lateCount), replaced \(replacedCount), patched \(patched), fx \(fxRevisions)")
    }

    private func expectSame(_ a: Scenario, _ b: Scenario, _ label: String) throws {
        for name in SampleDataTests.outputs {
            // apple_tieout.csv is written only when apple/ has reports: then by both runs.
            let exists = (FileManager.default.fileExists(atPath: a.out + "/" + name), FileManager.default.fileExists(atPath: b.out + "/" + name))
            #expect(exists.0 == exists.1, "\(label): \(name)")
            guard exists.0, exists.1 else { continue }
            #expect(SampleDataTests.withoutHistory(name, try a.output(name)) == SampleDataTests.withoutHistory(name, try b.output(name)), "\(label): \(name)")
        }
        for table in ["int_transactions_resolved", "fct_findings", "fct_finding_chains", "fct_user_installs", "fct_apple_tieout",
                      "fct_apple_report_overlaps", "fct_apple_mixed_proceeds"] {
            #expect(try rows(a, table) == rows(b, table), "\(label): \(table)")
        }
    }

    /// `table`'s rows, a file named by its path: two stores number the same files alike only when
    /// they ingested them in the same order.
    private func rows(_ scenario: Scenario, _ table: String) throws -> [[SQLValue]] {
        var rows: [[SQLValue]] = []
        let database = try scenario.open()
        var columns: [String] = []
        try database.forEach("SELECT name FROM pragma_table_info('\(table)')") { columns.append($0.string(0)) }
        let values = columns.map { $0 == "file_id" ? "(SELECT path FROM files WHERE files.file_id = t.file_id)" : $0 }
        // By every column: a table may hold several rows of one day and file (a file overlapping two others).
        let order = values.indices.map { String($0 + 1) }.joined(separator: ", ")
        try database.forEach("SELECT \(values.joined(separator: ", ")) FROM \(table) t ORDER BY \(order)") { row in
            rows.append(columns.indices.map { row.value($0) })
        }
        return rows
    }

    private func run(_ scenario: Scenario, input: String) throws -> RunResult {
        try Pipeline.run(RunOptions(input: input, databasePath: scenario.databasePath, outFolder: scenario.out, jobs: 2,
                                    lineRules: LineRules(signatures: .testChain), reconcile: ReconcileSettings(), report: ReportSettings(outFolder: scenario.out)), progress: nil)
    }

    /// A run by the clock `now`, judging as of `asOf`.
    private func run(_ scenario: Scenario, input: String, now: String, asOf: String) throws -> RunResult {
        var rules = LineRules(signatures: .testChain)
        rules.nowMs = Timestamp.parse(now) ?? 0
        return try Pipeline.run(RunOptions(input: input, databasePath: scenario.databasePath, outFolder: scenario.out, jobs: 2, lineRules: rules,
                                           reconcile: ReconcileSettings(asOfMs: Timestamp.parse(asOf)), report: ReportSettings(outFolder: scenario.out)),
                                progress: nil)
    }
}
