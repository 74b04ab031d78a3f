import Foundation
import Testing
@testable import IAPRecon
@testable import IAPReconCLI

/// What `--input` may hold: only regular files inside it are read, the rest is named, nothing in silence.
@Suite("Input folder")
struct InputFolderTests {
    /// A copy of sample-data (its sources only) to change.
    private func sampleCopy(_ work: Workspace) throws -> String {
        let input = work.path("in")
        try FileManager.default.createDirectory(atPath: input, withIntermediateDirectories: true)
        for name in ["apple", "attribution", "notifications", "receipts", "registrations", "server", "spend", "catalog.csv", "fx.csv"] {
            try FileManager.default.copyItem(atPath: Workspace.sampleData + "/" + name, toPath: input + "/" + name)
        }
        return input
    }

    private func summary(_ work: Workspace, _ out: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: work.path(out + "/summary.json")))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test("a FIFO among the inputs exits 3 naming it instead of waiting for a writer")
    func fifo() throws {
        let work = try Workspace()
        let input = try sampleCopy(work)
        let fifo = input + "/receipts/live.jsonl"
        #expect(mkfifo(fifo, 0o600) == 0)
        let run = work.iaprecon(["run", "--input", input, "--trust-root", Workspace.sampleRoot, "--db", work.path("s.sqlite"), "--out", work.path("out")],
                                within: 30)
        guard let result = run else {
            // Lets a run that waits for a writer reach the end of the FIFO, so it ends.
            let writer = open(fifo, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
            Issue.record("the run was still waiting after 30 s")
            return
        }
        #expect(result.code == 3)
        #expect(result.err == "Error: cannot read \(input)/receipts/live.jsonl: not a regular file (a FIFO)\n")
    }

    @Test("a symlink to /dev/zero exits 3 naming it instead of reading forever")
    func deviceLink() throws {
        let work = try Workspace()
        let input = try sampleCopy(work)
        try FileManager.default.createSymbolicLink(atPath: input + "/server/zero.jsonl", withDestinationPath: "/dev/zero")
        let result = try #require(work.iaprecon(["validate", "--input", input], within: 30), "the run was still reading after 30 s")
        #expect(result.code == 3)
        #expect(result.err == "Error: cannot read \(input)/server/zero.jsonl: not a regular file (a device)\n")
    }

    @Test("a symlink leading outside the input folder exits 3; one inside it is read")
    func outsideLink() throws {
        let work = try Workspace()
        let input = try sampleCopy(work)
        try FileManager.default.createDirectory(atPath: input + "/archive", withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: input + "/spend/spend.csv", toPath: input + "/archive/spend.csv")
        try FileManager.default.createSymbolicLink(atPath: input + "/spend/spend.csv", withDestinationPath: "../archive/spend.csv")
        let inside = work.iaprecon(["run", "--input", input, "--trust-root", Workspace.sampleRoot, "--db", work.path("s.sqlite"), "--out", work.path("out"), "--quiet"])
        #expect(inside.code == 0)
        try "date,media_source,campaign,spend,currency\n".write(toFile: work.path("elsewhere.csv"), atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: input + "/spend/more.csv", withDestinationPath: work.path("elsewhere.csv"))
        let outside = work.iaprecon(["run", "--input", input, "--trust-root", Workspace.sampleRoot, "--db", work.path("s.sqlite"), "--out", work.path("out"), "--quiet"])
        #expect(outside.code == 3)
        #expect(outside.err == "Error: cannot read \(input)/spend/more.csv: a symlink leading outside the input folder (to \(work.path("elsewhere.csv")))\n")
    }

    @Test("files matching no source are not read, are listed in summary.json and named on stderr")
    func ignoredFiles() throws {
        let work = try Workspace()
        let input = try sampleCopy(work)
        try FileManager.default.createDirectory(atPath: input + "/receipts/sub", withIntermediateDirectories: true)
        let line = try String(contentsOfFile: input + "/receipts/verify-2026-11.jsonl", encoding: .utf8).split(separator: "\n")[0] + "\n"
        try line.write(toFile: input + "/receipts/sub/y.jsonl", atomically: true, encoding: .utf8)
        try line.write(toFile: input + "/server/x.json", atomically: true, encoding: .utf8)
        try FileManager.default.copyItem(atPath: input + "/catalog.csv", toPath: input + "/Catalog.csv")
        let result = work.iaprecon(["run", "--input", input, "--trust-root", Workspace.sampleRoot, "--db", work.path("s.sqlite"), "--out", work.path("out"),
                                    "--bundle-id", "com.example.game"])
        #expect(result.code == 0)
        let warnings = result.err.split(separator: "\n").filter { $0.hasPrefix("Warning: ") }
        #expect(warnings == ["Catalog.csv", "receipts/sub/y.jsonl", "server/x.json"].map { "Warning: not read, matches no source: \(input)/\($0)" })
        let summary = try summary(work, "out")
        #expect(summary["ignored_files"] as? [String] == ["Catalog.csv", "receipts/sub/y.jsonl", "server/x.json"])
        let files = (summary["inputs"] as? [String: Any])?["files"] as? [[String: Any]] ?? []
        #expect(files.map { $0["file"] as? String ?? "" } == [
            "apple/S_D_85012345_20261124.txt.gz", "apple/S_D_85012345_20261125.txt", "apple/S_D_85012345_20261126.txt.gz",
            "attribution/in_app_events_2026-11-20_2026-11-29.csv", "attribution/installs_2026-11-20_2026-11-29.csv", "catalog.csv",
            "fx.csv", "notifications/asn-2026-11.jsonl", "receipts/verify-2026-11.jsonl", "registrations/signups.jsonl",
            "server/server-2026-11-27.jsonl.gz", "server/server-2026-11-28.jsonl", "spend/spend.csv",
        ])
        #expect(try work.read("out/findings.csv") == String(contentsOfFile: Workspace.sampleData + "/expected/findings.csv", encoding: .utf8))
    }

    @Test("a source file whose name is not UTF-8 exits 3 saying so, not that it does not exist; a UTF-8 name is read")
    func nameNotUTF8() throws {
        let work = try Workspace()
        let input = work.path("in")
        try FileManager.default.createDirectory(atPath: input + "/spend", withIntermediateDirectories: true)
        let spend = "date,media_source,campaign,spend,currency\n2026-11-20,fb,c1,10,USD\n"
        // `campaña.csv` as a Windows tool in Latin-1 names it: the ñ is the one byte F1.
        let latin1 = Array((input + "/spend/campa").utf8) + [0xF1] + Array("a.csv".utf8)
        let file = fopen(latin1.map { CChar(bitPattern: $0) } + [0], "w")
        #expect(file != nil)
        fputs(spend, file)
        fclose(file)
        let run = work.iaprecon(["run", "--input", input, "--db", work.path("s.sqlite"), "--out", work.path("out"), "--now", "2026-11-30T00:00:00Z"])
        #expect(run.code == 3)
        #expect(run.err == "Error: cannot read \(input)/spend/campa\u{FFFD}a.csv: its name is not UTF-8 (rename it)\n")
        // Near miss: the same name in UTF-8 is read, and a name that is not UTF-8 but matches no source is only listed.
        #expect(unlink(latin1.map { CChar(bitPattern: $0) } + [0]) == 0)
        try spend.write(toFile: input + "/spend/campaña.csv", atomically: true, encoding: .utf8)
        let notes = Array((input + "/notes").utf8) + [0xF1, 0]
        fclose(fopen(notes.map { CChar(bitPattern: $0) }, "w"))
        let read = work.iaprecon(["run", "--input", input, "--db", work.path("s.sqlite"), "--out", work.path("out"), "--now", "2026-11-30T00:00:00Z"])
        #expect(read.code == 0, "\(read.err)")
        #expect(read.err.contains("Warning: not read, matches no source: \(input)/notes\u{FFFD}\n"), "\(read.err)")
        let files = (try summary(work, "out")["inputs"] as? [String: Any])?["files"] as? [[String: Any]] ?? []
        #expect(files.map { $0["file"] as? String ?? "" } == ["spend/campaña.csv"])
    }

    @Test("an input folder with no source file exits 3; a folder of day partitions is not empty")
    func noSourceFile() throws {
        let work = try Workspace()
        try FileManager.default.createDirectory(atPath: work.path("in/Server"), withIntermediateDirectories: true)
        try "{}\n".write(toFile: work.path("in/Server/a.jsonl"), atomically: true, encoding: .utf8)
        let result = work.iaprecon(["run", "--input", work.path("in"), "--db", work.path("s.sqlite"), "--out", work.path("out")])
        #expect(result.code == 3)
        #expect(result.err.hasPrefix("Error: cannot read \(work.path("in")): no source file ("))
        #expect(!FileManager.default.fileExists(atPath: work.path("out/findings.csv")))
        let validate = work.iaprecon(["validate", "--input", work.path("in")])
        #expect(validate.code == 3)
        #expect(validate.err.hasSuffix("Error: cannot read \(work.path("in")): no source file (server/, receipts/, notifications/, "
                                       + "registrations/, attribution/, spend/, apple/, catalog.csv, fx.csv, or YYYY-MM-DD folders holding them)\n"))
    }

    @Test("a file that leaves the folder keeps its rows and is marked not present; forget removes them as if never read")
    func presentAndForget() throws {
        let work = try Workspace()
        let input = try sampleCopy(work)
        let db = work.path("s.sqlite")
        #expect(work.iaprecon(["run", "--input", input, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path("out1"), "--quiet"]).code == 0)
        try FileManager.default.moveItem(atPath: input + "/server/server-2026-11-28.jsonl", toPath: work.path("archived.jsonl"))

        #expect(work.iaprecon(["run", "--input", input, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path("out2"), "--quiet"]).code == 0)
        #expect(try work.readWithoutHistory("out2/findings.csv") == work.readWithoutHistory("out1/findings.csv"))
        let files = (try summary(work, "out2")["inputs"] as? [String: Any])?["files"] as? [[String: Any]] ?? []
        #expect(files.filter { $0["present"] as? Bool == false }.map { $0["file"] as? String } == ["server/server-2026-11-28.jsonl"])
        #expect(files.filter { $0["present"] as? Bool == true }.count == 12)

        let unknown = work.iaprecon(["forget", "--db", db, "server/server-2026-11-28.jsonl", "server/nope.jsonl"])
        #expect(unknown.code == 1)
        #expect(unknown.err == "Error: no stored file 'server/nope.jsonl' (nothing was removed; summary.json lists the stored files)\n")
        // A path given as the shell sees it (with the input folder, or absolute) names the stored file it ends in:
        // the store keeps paths relative to the input folder, and the error says which one was meant.
        let spelled = work.iaprecon(["forget", "--db", db, input + "/server/server-2026-11-28.jsonl", "./spend/spend.csv"])
        #expect(spelled.code == 1)
        #expect(spelled.err == "Error: no stored file '\(input)/server/server-2026-11-28.jsonl', './spend/spend.csv' (nothing was "
                + "removed; name them as summary.json does, relative to the input folder: 'server/server-2026-11-28.jsonl', "
                + "'spend/spend.csv')\n")
        let forget = work.iaprecon(["forget", "--db", db, "server/server-2026-11-28.jsonl"])
        #expect(forget.code == 0)
        #expect(work.iaprecon(["run", "--input", input, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path("out3"), "--quiet"]).code == 0)
        #expect(work.iaprecon(["run", "--input", input, "--trust-root", Workspace.sampleRoot, "--db", work.path("fresh.sqlite"), "--out", work.path("fresh"), "--quiet"]).code == 0)
        #expect(try work.readWithoutHistory("out3/findings.csv") != work.readWithoutHistory("out1/findings.csv"))
        for name in ["findings.csv", "revenue_daily.csv", "attribution.csv", "rejects.csv"] {
            #expect(try work.readWithoutHistory("out3/" + name) == work.readWithoutHistory("fresh/" + name), "\(name)")
        }
    }

    /// Each stored file's entry in `summary.json`, by path.
    private func inputFiles(_ work: Workspace, _ out: String) throws -> [String: [String: Any]] {
        let files = (try summary(work, out)["inputs"] as? [String: Any])?["files"] as? [[String: Any]] ?? []
        return Dictionary(files.map { ($0["file"] as? String ?? "", $0) }, uniquingKeysWith: { first, _ in first })
    }

    @Test("a file emptied since it was read keeps its rows: named on stderr even under --quiet, marked not present, findings unchanged")
    func emptiedFileKeepsItsRows() throws {
        let work = try Workspace()
        let input = try sampleCopy(work)
        let db = work.path("s.sqlite")
        func run(_ out: String) -> Workspace.Ending {
            work.iaprecon(["run", "--input", input, "--trust-root", Workspace.sampleRoot, "--bundle-id", "com.example.game", "--db", db,
                           "--out", work.path(out), "--now", "2026-11-30T12:00:00Z", "--quiet"])
        }
        #expect(run("out1").code == 0)
        let emptied = ["server/server-2026-11-27.jsonl.gz", "server/server-2026-11-28.jsonl"]
        let stored = try inputFiles(work, "out1").mapValues { $0["read"] as? Int ?? -1 }
        // A .gz cut to no byte, and a live log cut in place once logrotate's copytruncate copied it aside.
        try FileManager.default.copyItem(atPath: input + "/" + emptied[0], toPath: work.path("kept.jsonl.gz"))
        try FileManager.default.copyItem(atPath: input + "/" + emptied[1], toPath: work.path("kept.jsonl"))
        for path in emptied { #expect(truncate(input + "/" + path, 0) == 0) }

        let second = run("out2")
        #expect(second.code == 0)
        #expect(second.err == emptied.map { path in
            "Warning: \(input)/\(path) is empty now; its \(stored[path] ?? -1) stored lines are kept (iaprecon forget \(path) drops them)\n"
        }.joined())
        #expect(try work.readWithoutHistory("out2/findings.csv") == work.readWithoutHistory("out1/findings.csv"))
        let files = try inputFiles(work, "out2")
        #expect(files.filter { $0.value["present"] as? Bool == false }.keys.sorted() == emptied)
        #expect(files.mapValues { $0["read"] as? Int ?? -1 } == stored)
        // The run's row in `runs` says so too: an ok that someone should read.
        #expect(work.iaprecon(["runs", "--db", db]).out.contains("\(input)/\(emptied[1]) is empty now"))

        // Near miss: the lines back as they were are the stored ones: present, nothing said.
        for (path, kept) in zip(emptied, ["kept.jsonl.gz", "kept.jsonl"]) {
            try FileManager.default.removeItem(atPath: input + "/" + path)
            try FileManager.default.copyItem(atPath: work.path(kept), toPath: input + "/" + path)
        }
        let third = run("out3")
        #expect(third.code == 0)
        #expect(third.err == "")
        #expect(try inputFiles(work, "out3").values.allSatisfy { $0["present"] as? Bool == true })
        #expect(try work.readWithoutHistory("out3/findings.csv") == work.readWithoutHistory("out1/findings.csv"))
    }

    @Test("forget says how many files it forgot, in words that agree with the number")
    func forgetCountsFiles() throws {
        let work = try Workspace()
        let input = try sampleCopy(work)
        let db = work.path("s.sqlite")
        #expect(work.iaprecon(["run", "--input", input, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path("out"), "--quiet"]).code == 0)
        let one = work.iaprecon(["forget", "--db", db, "server/server-2026-11-28.jsonl"])
        #expect(one.code == 0)
        #expect(one.out == "forgot 1 file; the next run reconciles without it\n")
        // A path named twice is one file.
        let twice = work.iaprecon(["forget", "--db", db, "catalog.csv", "catalog.csv"])
        #expect(twice.code == 0)
        #expect(twice.out == "forgot 1 file; the next run reconciles without it\n")
        // Near miss: more than one file is still plural.
        let two = work.iaprecon(["forget", "--db", db, "fx.csv", "registrations/signups.jsonl"])
        #expect(two.code == 0)
        #expect(two.out == "forgot 2 files; the next run reconciles without them\n")
    }
}
