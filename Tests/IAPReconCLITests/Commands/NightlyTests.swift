import Foundation
import Testing
@testable import IAPRecon
@testable import IAPReconCLI

/// The nightly entry point over day partitions built from sample-data.
@Suite("Nightly job")
struct NightlyTests {
    /// Two day partitions: the history up to 11-27, then the live log and everything Apple said.
    static func partitions(in work: Workspace) throws -> String {
        let manager = FileManager.default
        let root = work.path("data")
        let days: [String: [String]] = [
            "2026-11-28": ["server/server-2026-11-27.jsonl.gz", "registrations/signups.jsonl",
                           "attribution/installs_2026-11-20_2026-11-29.csv", "catalog.csv", "fx.csv"],
            "2026-11-29": ["server/server-2026-11-28.jsonl", "receipts/verify-2026-11.jsonl", "notifications/asn-2026-11.jsonl",
                           "attribution/in_app_events_2026-11-20_2026-11-29.csv", "spend/spend.csv",
                           "apple/S_D_85012345_20261124.txt.gz", "apple/S_D_85012345_20261125.txt", "apple/S_D_85012345_20261126.txt.gz"],
        ]
        for (day, files) in days {
            for file in files {
                let target = root + "/" + day + "/" + file
                try manager.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try manager.copyItem(atPath: Workspace.sampleData + "/" + file, toPath: target)
            }
        }
        return root
    }

    @Test("two nights: dated folders, latest, the runs table, logs, and exit codes with --fail-on")
    func twoNights() throws {
        let work = try Workspace()
        let root = try Self.partitions(in: work)
        let reports = work.path("reports")
        let common = ["--root", root, "--db", work.path("s.sqlite"), "--reports", reports, "--log-dir", work.path("logs"), "--quiet",
                      "--trust-root", Workspace.sampleRoot]

        let first = work.iaprecon(["nightly", "--date", "2026-11-28"] + common)
        #expect(first.code == 0)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: reports + "/latest") == "2026-11-28")
        #expect(FileManager.default.fileExists(atPath: reports + "/2026-11-28/findings.csv"))

        // The newest partition by default; a critical finding trips --fail-on after everything is written.
        let second = work.iaprecon(["nightly", "--fail-on", "critical"] + common)
        #expect(second.code == 1)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: reports + "/latest") == "2026-11-29")
        let findings = try work.read("reports/latest/findings.csv")
        #expect(findings.split(separator: "\r\n").count == 1 + 15)
        #expect(findings.contains(",lost_delivery,critical,u_1003,"))

        // The second night re-read nothing of the first: its files were already stored.
        let database = try Store.open(path: work.path("s.sqlite"), readOnly: true)
        #expect(try database.scalar("SELECT count(*) FROM files") == .integer(13))
        var runs: [String] = []
        try database.forEach("SELECT command || ':' || partition_date || ':' || status || ':' || exit_code || ':' || lines_read FROM runs ORDER BY run_id") {
            runs.append($0.string(0))
        }
        #expect(runs == ["nightly:2026-11-28:ok:0:161", "nightly:2026-11-29:findings:1:294"])
        let listed = work.iaprecon(["runs", "--db", work.path("s.sqlite")])
        #expect(listed.code == 0)
        let rows = listed.out.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        #expect(rows.first?.prefix(7) == ["run", "command", "date", "started", "seconds", "status", "exit"])
        #expect(rows.dropFirst(2).first?[1...2] == ["nightly", "2026-11-29"])
        #expect(rows.dropFirst(2).first?[5...6] == ["findings", "1"])
        #expect(listed.out.contains("see \(reports)/2026-11-29/findings.csv"))
        // Each night's stage timings, which summary.json leaves out.
        #expect(listed.out.contains("stage seconds"))
        #expect(listed.out.split(separator: "\n").filter { $0.contains("nightly") && $0.contains("ingest ") && $0.contains(", report ") }.count == 2)
        let logs = try FileManager.default.contentsOfDirectory(atPath: work.path("logs")).sorted()
        #expect(logs.count == 2)
        let log = try work.read("logs/" + logs[1])
        #expect(log.contains("ingest: ") && log.contains("report: ") && log.contains("exit 1"))

        // Same as one run over the whole sample: the same 14 findings by kind and transaction.
        let whole = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", work.path("whole.sqlite"), "--out", work.path("whole"), "--quiet"])
        #expect(whole.code == 0)
        func keys(_ text: String) -> [String] {
            text.split(separator: "\r\n").dropFirst().map { line in line.split(separator: ",", omittingEmptySubsequences: false).prefix(6).joined(separator: ",") }
        }
        #expect(keys(findings) == keys(try work.read("whole/findings.csv")))
    }

    @Test("backfill runs each day as that night saw it, oldest first; latest ends at the last day")
    func backfill() throws {
        let work = try Workspace()
        let root = try Self.partitions(in: work)
        let result = work.iaprecon(["backfill", "--root", root, "--trust-root", Workspace.sampleRoot, "--db", work.path("s.sqlite"), "--reports", work.path("reports"),
                                    "--log-dir", work.path("logs"), "--from", "2026-11-28", "--to", "2026-11-29", "--quiet"])
        #expect(result.code == 0)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: work.path("reports/latest")) == "2026-11-29")
        let early = try work.read("reports/2026-11-28/summary.json")
        #expect(early.contains("\"read\": 161"))
        let bad = work.iaprecon(["backfill", "--root", root, "--from", "2026-11-29", "--to", "2026-11-28"])
        #expect(bad.code == 2)
    }

    @Test("a backfill with --fail-on alerts for each night that trips it and exits 1 after the last day; replayed, --fail-on-new stays quiet")
    func backfillAlerts() throws {
        let work = try Workspace()
        let root = try Self.threeDays(in: work)
        let common = Self.commonArguments(root: root, db: work.path("s.sqlite"), in: work)
        let backfill = work.iaprecon(["backfill", "--from", "2026-11-27", "--to", "2026-11-29", "--fail-on", "critical"] + common)
        #expect(backfill.code == 1)
        // Every night has critical findings (11-27's deliveries have no receipts yet): one alert each, naming its folder.
        let alerts = Self.unrestated(backfill.err).split(separator: "\n")
        #expect(alerts.count == 3)
        for (alert, day) in zip(alerts, ["2026-11-27", "2026-11-28", "2026-11-29"]) {
            #expect(alert.hasPrefix("iaprecon: exit 1: ") && alert.hasSuffix("/reports/\(day)/findings.csv"))
        }
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: work.path("reports/latest")) == "2026-11-29")
        // Near miss: the same range again, replayed on a store whose nights already alerted, with --fail-on-new.
        let again = work.iaprecon(["backfill", "--from", "2026-11-27", "--to", "2026-11-29", "--fail-on-new", "critical"] + common)
        #expect(again.code == 0)
        #expect(Self.unrestated(again.err).isEmpty)
    }

    /// The files of the report folder `day` under `reports`, by name.
    static func reportFolder(_ work: Workspace, _ day: String) throws -> [String: String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: work.path("reports/" + day)).filter { !$0.hasPrefix(".") }
        return try Dictionary(uniqueKeysWithValues: names.map { ($0, try work.read("reports/\(day)/\($0)")) })
    }

    @Test("a night run again writes its folder byte for byte, restated revenue included, and does not say it again on stderr")
    func restatedNightRunAgain() throws {
        let work = try Workspace()
        let root = try Self.partitions(in: work)
        let common = Self.commonArguments(root: root, db: work.path("s.sqlite"), in: work)
        #expect(work.iaprecon(["nightly", "--date", "2026-11-28"] + common).code == 0)
        let night = work.iaprecon(["nightly", "--date", "2026-11-29"] + common)
        #expect(night.code == 0)
        let restated = "Warning: restated revenue: 13 days already reported changed: 2026-08-26 (USD gross 0 → 4.99, "
        #expect(night.err.hasPrefix(restated))
        let folder = try Self.reportFolder(work, "2026-11-29")
        #expect(folder["report.html"]?.contains("<p class=\"warn\">Restated revenue: 13 days already reported changed: 2026-08-26 ") == true)
        // cron's retry: the same inputs, the same options.
        let again = work.iaprecon(["nightly", "--date", "2026-11-29"] + common)
        #expect(again.code == 0)
        #expect(again.err == "", "the restatement was said by the night's first run")
        let rewritten = try Self.reportFolder(work, "2026-11-29")
        #expect(rewritten.keys.sorted() == folder.keys.sorted())
        for (name, text) in folder { #expect(rewritten[name] == text, "\(name)") }

        // The earlier night again, after the later one: it is compared with nothing later, so it restates nothing.
        let earlierPage = try work.read("reports/2026-11-28/report.html")
        let earlier = work.iaprecon(["nightly", "--date", "2026-11-28"] + common)
        #expect(earlier.code == 0)
        #expect(Self.unrestated(earlier.err) == earlier.err, "nothing restated by a night that sees fewer partitions")
        #expect(try work.read("reports/2026-11-28/report.html") == earlierPage)
        // And the later night once more still names what it restated, and stays quiet.
        let third = work.iaprecon(["nightly", "--date", "2026-11-29"] + common)
        #expect(third.err == "")
        #expect(try Self.reportFolder(work, "2026-11-29") == folder)
    }

    @Test("a night run again after a later one (replayed) writes its folder byte for byte, restated revenue included, and says nothing again")
    func restatedNightReplayed() throws {
        let work = try Workspace()
        let root = try Self.partitions(in: work)
        let common = Self.commonArguments(root: root, db: work.path("s.sqlite"), in: work)
        #expect(work.iaprecon(["nightly", "--date", "2026-11-28"] + common).code == 0)
        #expect(work.iaprecon(["nightly", "--date", "2026-11-29"] + common).err.hasPrefix("Warning: restated revenue: 13 days already reported changed: "))
        let folder = try Self.reportFolder(work, "2026-11-29")
        // 11-30 brings a sign-up and no revenue: nothing restated.
        try FileManager.default.createDirectory(atPath: root + "/2026-11-30/registrations", withIntermediateDirectories: true)
        try #"{"ts":"2026-11-30T10:00:00Z","user_id":"u_9001","method":"apple"}"#.write(toFile: root + "/2026-11-30/registrations/signups-30.jsonl",
                                                                                        atomically: true, encoding: .utf8)
        #expect(work.iaprecon(["nightly", "--date", "2026-11-30"] + common).err == "")
        // 11-29 again, replayed in a scratch store as that night saw it: compared with what the store published before it.
        let again = work.iaprecon(["nightly", "--date", "2026-11-29"] + common)
        #expect(again.code == 0)
        #expect(again.err == "")
        let rewritten = try Self.reportFolder(work, "2026-11-29")
        #expect(rewritten.keys.sorted() == folder.keys.sorted())
        for (name, text) in folder { #expect(rewritten[name] == text, "\(name)") }
    }

    @Test("a night with nothing restated run again says nothing and shows nothing")
    func unrestatedNightRunAgain() throws {
        let work = try Workspace()
        let root = try Self.partitions(in: work)
        let common = Self.commonArguments(root: root, db: work.path("s.sqlite"), in: work)
        #expect(work.iaprecon(["nightly", "--date", "2026-11-28"] + common).err == "")
        let folder = try Self.reportFolder(work, "2026-11-28")
        #expect(folder["report.html"]?.contains("Restated revenue") == false)
        #expect(work.iaprecon(["nightly", "--date", "2026-11-28"] + common).err == "")
        #expect(try Self.reportFolder(work, "2026-11-28") == folder)
    }

    @Test("a night whose partition has not landed re-reports the newest one and says so, also under --quiet; a new day does not")
    func repeatedNightWarns() throws {
        let work = try Workspace()
        let root = try Self.partitions(in: work)
        let common = Self.commonArguments(root: root, db: work.path("s.sqlite"), in: work)
        #expect(work.iaprecon(["nightly", "--date", "2026-11-28"] + common).err == "")
        // 11-29 is new: nothing to warn about.
        let fresh = work.iaprecon(["nightly"] + common)
        #expect(fresh.code == 0)
        // 11-29 brings the receipts of purchases on days 11-28 reported: finance is told, also under --quiet.
        #expect(fresh.err.hasPrefix("Warning: restated revenue: 13 days already reported changed: 2026-08-26 (USD gross 0 → 4.99, "))
        #expect(Self.unrestated(fresh.err) == "")
        #expect(try work.read("reports/2026-11-29/report.html").contains("Night: ") == false)
        // The next night finds no 11-30: the same day again, with one line for cron's mail.
        let again = work.iaprecon(["nightly"] + common)
        #expect(again.code == 0)
        let lines = again.err.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("Warning: no partition after \(root)/2026-11-29, which run 2 (") == true)
        #expect(lines.first?.hasSuffix(" UTC) already reported; reporting it again") == true)
        // The page `latest` points to says so too: whoever opens it in the morning reads yesterday's night again.
        let stale = try work.read("reports/latest/report.html")
        #expect(stale.contains("<p class=\"warn\">Night: " + HTML.escape(String(lines.first?.dropFirst("Warning: ".count) ?? "")) + ".</p>"))
        // Asked for by --date, a day reported before is a deliberate re-run: no warning, on stderr or the page.
        #expect(work.iaprecon(["nightly", "--date", "2026-11-29"] + common).err == "")
        #expect(try work.read("reports/2026-11-29/report.html").contains("Night: ") == false)

        // A backfill over a gap names the missing day, also under --quiet, and so does the page of the night after it.
        let backfill = work.iaprecon(["backfill", "--from", "2026-11-27", "--to", "2026-11-28"] + common)
        #expect(backfill.code == 0)
        #expect(backfill.err == "Warning: no partition \(root)/2026-11-27; that night is skipped\n")
        #expect(try work.read("reports/2026-11-28/report.html").contains(
            "<p class=\"warn\">Night: " + HTML.escape("no partition \(root)/2026-11-27; that night is skipped") + ".</p>"))
    }

    /// The partitions of `partitions(in:)`, the store their nights fill, and the arguments those nights share.
    static func nights(in work: Workspace) throws -> (root: String, db: String, common: [String]) {
        let root = try partitions(in: work)
        let db = work.path("s.sqlite")
        return (root, db, commonArguments(root: root, db: db, in: work))
    }

    /// What every night over `root` into the store `db` is given, besides its dates.
    static func commonArguments(root: String, db: String, in work: Workspace) -> [String] {
        ["--root", root, "--db", db, "--reports", work.path("reports"), "--log-dir", work.path("logs"), "--quiet",
         "--trust-root", Workspace.sampleRoot]
    }

    /// The runs the store at `db` records, oldest first, as `date status exit: message`.
    static func runMessages(_ db: String) throws -> [String] {
        var runs: [String] = []
        try Store.open(path: db, readOnly: true).forEach("SELECT partition_date, status, exit_code, message FROM runs ORDER BY run_id") {
            runs.append("\($0.string(0)) \($0.string(1)) \($0.int(2)): \($0.optionalString(3) ?? "")")
        }
        return runs
    }

    /// The log files in `<work>/logs`, oldest first (their names end in the time they were opened).
    static func logs(_ work: Workspace) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: work.path("logs")).sorted { $0.suffix(26) < $1.suffix(26) }.map { try work.read("logs/" + $0) }
    }

    @Test("a night whose partition follows a day that never landed says so, also under --quiet, in its log and in runs: that day reads as a day without sales; near miss: once it lands, the night reported again says nothing of it")
    func dayMissingBeforeTheNight() throws {
        let work = try Workspace()
        let root = try Self.partitions(in: work)
        // The second day's files land as 2026-12-01's: 11-30 never came, and 11-29 came as an empty folder.
        try FileManager.default.moveItem(atPath: root + "/2026-11-29", toPath: root + "/2026-12-01")
        try FileManager.default.createDirectory(atPath: root + "/2026-11-29", withIntermediateDirectories: true)
        let db = work.path("s.sqlite")
        let common = Self.commonArguments(root: root, db: db, in: work)
        #expect(work.iaprecon(["nightly", "--date", "2026-11-28"] + common).err == "")
        let night = work.iaprecon(["nightly"] + common)
        #expect(night.code == 0)
        let warning = "no partition \(root)/2026-11-29 (the folder holds no source file), \(root)/2026-11-30 before \(root)/2026-12-01: "
            + "those days are reported without their partitions (a night after they land reads them, and restates their days)"
        // First, before the night's own warnings (its restated days).
        #expect(night.err.hasPrefix("Warning: " + warning + "\n"))
        #expect(try Self.logs(work).last?.contains("Warning: " + warning) == true)
        #expect(try Self.runMessages(db).last?.hasPrefix("2026-12-01 ok 0: " + warning) == true)
        // The same night asked for by its date says so too.
        #expect(work.iaprecon(["nightly", "--date", "2026-12-01"] + common).err.hasPrefix("Warning: " + warning + "\n"))
        // Reported again by default, it says so after the line that it is reported again, on stderr as in runs.
        let again = work.iaprecon(["nightly"] + common)
        let lines = again.err.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines.first?.hasPrefix("Warning: no partition after \(root)/2026-12-01, which run 3 (") == true)
        #expect(lines.last == "Warning: " + warning)
        #expect(try Self.runMessages(db).last?.hasSuffix("; reporting it again; " + warning) == true)
        // Near miss: once the days land, the night reported again names no missing day.
        for day in ["2026-11-29", "2026-11-30"] {
            try FileManager.default.createDirectory(atPath: root + "/" + day + "/registrations", withIntermediateDirectories: true)
            try "".write(toFile: root + "/" + day + "/registrations/r.jsonl", atomically: true, encoding: .utf8)
        }
        let landed = work.iaprecon(["nightly", "--date", "2026-12-01"] + common)
        #expect(landed.code == 0)
        #expect(!landed.err.contains("no partition"))
    }

    @Test("a night that re-reports the newest partition has its warning in its log and in runs, beside an alert; a new night's record has none")
    func repeatedNightRecorded() throws {
        let work = try Workspace()
        let (root, db, common) = try Self.nights(in: work)
        #expect(work.iaprecon(["nightly"] + common).err == "")
        let again = work.iaprecon(["nightly"] + common)
        #expect(again.code == 0)
        let warning = try #require(again.err.split(separator: "\n").first.map(String.init))
        #expect(warning.hasPrefix("Warning: no partition after \(root)/2026-11-29, which run 1 ("))
        // With --fail-on, the night's alert goes beside it.
        let alerting = work.iaprecon(["nightly", "--fail-on", "critical"] + common)
        #expect(alerting.code == 1)
        let lines = alerting.err.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix("Warning: no partition after \(root)/2026-11-29, which run 2 ("))
        #expect(lines[1].hasPrefix("iaprecon: exit 1: "))

        let logs = try Self.logs(work)
        #expect(logs.count == 3)
        #expect(!logs[0].contains("Warning: no partition"))
        #expect(logs[1].contains(" " + warning + "\n"))
        #expect(logs[2].contains(" " + lines[0] + "\n"))
        let stale = String(warning.dropFirst("Warning: ".count))
        #expect(try Self.runMessages(db) == [
            "2026-11-29 ok 0: ", "2026-11-29 ok 0: " + stale,
            "2026-11-29 findings 1: " + String(lines[0].dropFirst("Warning: ".count)) + "; " + lines[1],
        ])
        let listed = work.iaprecon(["runs", "--db", db])
        #expect(listed.out.split(separator: "\n").filter { $0.contains(" ok ") && $0.hasSuffix(stale) }.count == 1)
    }

    @Test("a backfill's skipped days are in the log and runs of the night after them, or of its last night; a range without a gap records none")
    func backfillGapsRecorded() throws {
        let work = try Workspace()
        let root = try Self.partitions(in: work)
        let db = work.path("s.sqlite")
        let common = ["--root", root, "--reports", work.path("reports"), "--log-dir", work.path("logs"), "--quiet", "--trust-root", Workspace.sampleRoot]
        let backfill = work.iaprecon(["backfill", "--db", db, "--from", "2026-11-26", "--to", "2026-11-30"] + common)
        #expect(backfill.code == 0)
        func skipped(_ day: String) -> String { "no partition \(root)/\(day); that night is skipped" }
        #expect(Self.unrestated(backfill.err) == ["2026-11-26", "2026-11-27", "2026-11-30"].map { "Warning: " + skipped($0) + "\n" }.joined())
        #expect(try Self.runMessages(db) == [
            "2026-11-28 ok 0: " + skipped("2026-11-26") + "; " + skipped("2026-11-27"),
            "2026-11-29 ok 0: " + skipped("2026-11-30"),
        ])
        let logs = try Self.logs(work)
        #expect(logs.count == 2)
        #expect(logs[0].contains(" Warning: \(skipped("2026-11-26"))\n") && logs[0].contains(" Warning: \(skipped("2026-11-27"))\n"))
        #expect(!logs[0].contains(skipped("2026-11-30")))
        #expect(logs[1].contains(" Warning: \(skipped("2026-11-30"))\n"))
        #expect(!logs[1].contains(skipped("2026-11-27")))

        // Near miss: the same days without a gap record nothing of the kind.
        let whole = work.iaprecon(["backfill", "--db", work.path("whole.sqlite"), "--from", "2026-11-28", "--to", "2026-11-29"] + common)
        #expect(whole.code == 0)
        #expect(Self.unrestated(whole.err) == "")
        #expect(try Self.runMessages(work.path("whole.sqlite")) == ["2026-11-28 ok 0: ", "2026-11-29 ok 0: "])
        #expect(try Self.logs(work).filter { $0.contains("Warning: no partition") }.count == 2)
    }

    @Test("a night after a backfill that reached the newest partition warns that the day was reported already")
    func nightAfterBackfillWarns() throws {
        let work = try Workspace()
        let root = try Self.partitions(in: work)
        let common = Self.commonArguments(root: root, db: work.path("s.sqlite"), in: work)
        // Near miss: a backfill that stops before the newest day leaves tonight's night a new day.
        #expect(work.iaprecon(["backfill", "--from", "2026-11-28", "--to", "2026-11-28"] + common).err == "")
        #expect(Self.unrestated(work.iaprecon(["backfill", "--from", "2026-11-29", "--to", "2026-11-29"] + common).err) == "")
        let again = work.iaprecon(["nightly"] + common)
        #expect(again.code == 0)
        let lines = again.err.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("Warning: no partition after \(root)/2026-11-29, which run 2 (") == true)
    }

    @Test("a damaged store is refused by nightly and by 'check', with exit 1 and the reason")
    func damagedStore() throws {
        let work = try Workspace()
        let root = try Self.partitions(in: work)
        let db = work.path("s.sqlite")
        let common = ["--root", root, "--db", db, "--reports", work.path("reports"), "--log-dir", work.path("logs"), "--quiet"]
        #expect(work.iaprecon(["nightly", "--date", "2026-11-28"] + common).code == 0)
        let healthy = work.iaprecon(["check", "--db", db])
        #expect(healthy.code == 0)
        #expect(healthy.out == "ok: \(db) passed SQLite's integrity check\n")

        // 4 KB of zeros over the last page of a table's b-tree: the schema still reads, the table does not.
        let page = try #require(try Self.lastPage(of: "raw_server__deliveries", in: db))
        try Self.zero(db, at: (page - 1) * 4096, count: 4096)

        let checked = work.iaprecon(["check", "--db", db])
        #expect(checked.code == 1)
        #expect(checked.err.hasPrefix("Error: cannot use store \(db): damaged"))
        #expect(checked.err.split(separator: "\n").count == 1)
        let night = work.iaprecon(["nightly", "--date", "2026-11-29"] + common)
        #expect(night.code == 1)
        // The night's turn of the check, or its own reading of the table, finds it.
        #expect(night.err.hasPrefix("Error: cannot use store \(db): damaged (SQLite"))
        #expect(night.err.hasSuffix(Store.damagedAdvice + "\n"))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: work.path("reports/latest")) == "2026-11-28")

        // The schema's first page zeroed past the file header: the store opens, its schema does not read.
        try Self.zero(db, at: 100, count: 4096 - 100)
        let unreadable = work.iaprecon(["nightly", "--date", "2026-11-29"] + common)
        #expect(unreadable.code == 1)
        #expect(unreadable.err.hasPrefix("Error: cannot use store \(db): damaged (SQLite: "))
        #expect(unreadable.err.contains("restore it from a backup"))
    }

    /// The last page of `table`'s b-tree in the store at `path`.
    static func lastPage(of table: String, in path: String) throws -> Int64? {
        let database = try Database(path: path, readOnly: true)
        guard case .integer(let page)? = try database.scalar("SELECT max(pageno) FROM dbstat WHERE name = ?", [.text(table)]) else { return nil }
        return page
    }

    static func zero(_ path: String, at offset: Int64, count: Int) throws {
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: UInt64(offset))
        handle.write(Data(repeating: 0, count: count))
        try handle.close()
    }

    @Test("a store in a folder that does not exist is named with its folder by the commands that create one, which create nothing")
    func storeInAMissingFolder() throws {
        let work = try Workspace()
        let db = work.path("no-such-folder/s.sqlite")
        for arguments in [["run", "--input", Workspace.sampleData, "--out", work.path("out")], ["ingest", "--input", Workspace.sampleData],
                          ["nightly", "--root", try Self.partitions(in: work), "--reports", work.path("reports"), "--log-dir", work.path("logs")]] {
            let result = work.iaprecon(arguments + ["--db", db, "--trust-root", Workspace.sampleRoot, "--quiet"])
            #expect(result.code == 1, "\(arguments)")
            #expect(result.err.hasSuffix("Error: cannot use store \(db): its folder \(work.path("no-such-folder")) does not exist\n"), "\(arguments): \(result.err)")
            // Nor a night's folders: it is refused before any work.
            for folder in ["out", "reports", "logs", "no-such-folder"] {
                #expect(!FileManager.default.fileExists(atPath: work.path(folder)), "\(arguments): \(folder)")
            }
        }
    }

    @Test("the stage commands, history and runs refuse a store that does not exist instead of creating one")
    func missingStore() throws {
        let work = try Workspace()
        let db = work.path("typo.sqlite")
        for arguments in [["normalize"], ["join"], ["report", "--out", work.path("out")], ["history", "u_1"], ["runs"], ["check"],
                          ["forget", "server/a.jsonl"]] {
            let result = work.iaprecon(arguments + ["--db", db])
            #expect(result.code == 1, "\(arguments)")
            #expect(result.err == "Error: cannot use store \(db): no such file; run 'iaprecon run' or 'iaprecon ingest' first\n", "\(arguments)")
            #expect(!FileManager.default.fileExists(atPath: db), "\(arguments)")
        }
    }

    @Test("history, runs and check on an empty store file say it is empty and what fills it, not SQLite's missing table; a real store still reads")
    func emptyStore() throws {
        let work = try Workspace()
        // A first run killed once it had the lock leaves the store file empty; so does one made ahead to set its owner.
        let db = work.path("empty.sqlite")
        #expect(FileManager.default.createFile(atPath: db, contents: nil))
        let readers = [["history", "u_1003"], ["runs"], ["check"]]
        for arguments in readers {
            let result = work.iaprecon(arguments + ["--db", db])
            #expect(result.code == 1, "\(arguments)")
            #expect(result.err == "Error: cannot use store \(db): it is empty, no run has completed on it yet; run 'iaprecon run' or 'iaprecon ingest' first\n",
                    "\(arguments)")
            #expect(result.out == "", "\(arguments)")
        }
        // A run that holds it now (a first night that has just started) is named instead.
        do {
            let lock = try RunLock(databasePath: db, command: "nightly")
            defer { withExtendedLifetime(lock) {} }
            for arguments in readers {
                let result = work.iaprecon(arguments + ["--db", db])
                #expect(result.code == 1, "\(arguments)")
                #expect(result.err.hasPrefix("Error: cannot use store \(db): it is empty, no run has completed on it yet; "
                                             + "the run that holds it (pid \(getpid()), iaprecon nightly, started "), "\(arguments): \(result.err)")
                #expect(result.err.hasSuffix(") has not written it yet\n"), "\(arguments): \(result.err)")
            }
        }
        // The stages that work on what a store holds have nothing to work on either: refused as a missing store is,
        // before they would make it a store and record a run in it.
        for arguments in [["normalize"], ["join"], ["report", "--out", work.path("stage-out")], ["forget", "server/s.jsonl"]] {
            let result = work.iaprecon(arguments + ["--db", db])
            #expect(result.code == 1, "\(arguments)")
            #expect(result.err == "Error: cannot use store \(db): it is empty, no run has completed on it yet; run 'iaprecon run' or 'iaprecon ingest' first\n",
                    "\(arguments)")
        }
        // The readers and the stages change nothing: the file is still empty.
        #expect(try FileManager.default.attributesOfItem(atPath: db)[.size] as? Int == 0)

        // Near miss: the same file once a run has filled it reads as any store.
        #expect(work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path("out"),
                               "--quiet"]).code == 0)
        let runs = work.iaprecon(["runs", "--db", db])
        #expect(runs.code == 0)
        #expect(runs.out.contains(" run ") && runs.out.contains(" ok "))
        let check = work.iaprecon(["check", "--db", db])
        #expect(check.code == 0)
        #expect(check.out == "ok: \(db) passed SQLite's integrity check\n")
        let history = work.iaprecon(["history", "u_1003", "--db", db])
        #expect(history.code == 0)
        #expect(history.out.contains("u_1003"))
    }

    @Test("the stages refused on a store that does not exist or that no run has written leave no file they did not find: no lock note, no --out folder",
          arguments: [nil] + UnwrittenStore.allCases)
    func refusedStagesLeaveNothing(_ unwritten: UnwrittenStore?) throws {
        let work = try Workspace()
        let manager = FileManager.default
        let db = work.path("s.sqlite")
        switch unwritten {
        case nil: break
        case .emptyFile?: #expect(manager.createFile(atPath: db, contents: nil))
        case .headerOnly?: try Database(path: db).enableWAL()
        }
        let found = try manager.contentsOfDirectory(atPath: work.root).sorted()
        let reason = unwritten == nil ? "no such file" : "it is empty, no run has completed on it yet"
        for arguments in [["normalize"], ["join"], ["report", "--out", work.path("reports/2026-11-29")], ["forget", "server/s.jsonl"]] {
            let result = work.iaprecon(arguments + ["--db", db])
            #expect(result.code == 1, "\(arguments)")
            #expect(result.err == "Error: cannot use store \(db): \(reason); run 'iaprecon run' or 'iaprecon ingest' first\n", "\(arguments)")
            #expect(result.out == "", "\(arguments)")
            #expect(try manager.contentsOfDirectory(atPath: work.root).sorted() == found, "\(arguments)")
        }
        // Near miss: on a store a run has written, report makes the folders of its --out and writes it; the stages leave the lock's note.
        #expect(work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path("out"),
                               "--quiet"]).code == 0)
        #expect(work.iaprecon(["report", "--out", work.path("reports/2026-11-29"), "--db", db, "--quiet"]).code == 0)
        #expect(manager.fileExists(atPath: work.path("reports/2026-11-29/findings.csv")))
        #expect(manager.fileExists(atPath: RunLock.notePath(db)))
    }

    /// The outputs that must be equal between two runs over the same inputs (summary.json without its timings).
    static func outputs(_ work: Workspace, _ folder: String) throws -> [String: String] {
        var texts: [String: String] = [:]
        for name in ["findings.csv", "findings.json", "revenue_daily.csv", "attribution.csv", "rejects.csv", "summary.json"] {
            // A replay's findings were first seen in the nights it replayed; everything else is as a fresh store's.
            texts[name] = try work.readWithoutHistory(folder + "/" + name)
        }
        return texts
    }

    @Test("a night replayed on a store that holds later days reports what a fresh store fed up to that day reports, and leaves the store alone")
    func replayEqualsFresh() throws {
        let work = try Workspace()
        let root = try Self.partitions(in: work)
        let db = work.path("s.sqlite")
        let common = ["--root", root, "--reports", work.path("reports"), "--log-dir", work.path("logs"), "--quiet"]
        #expect(work.iaprecon(["nightly", "--db", db] + common).code == 0)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: work.path("reports/latest")) == "2026-11-29")
        let before = try Self.outputs(work, "reports/2026-11-29")
        let storeBefore = try Data(contentsOf: URL(fileURLWithPath: db))

        let replayed = work.iaprecon(["nightly", "--db", db, "--date", "2026-11-28"] + common)
        #expect(replayed.code == 0)
        let fresh = work.iaprecon(["nightly", "--db", work.path("fresh.sqlite"), "--date", "2026-11-28", "--root", root,
                                   "--reports", work.path("fresh"), "--log-dir", work.path("logs"), "--quiet"])
        #expect(fresh.code == 0)
        let replayedOutputs = try Self.outputs(work, "reports/2026-11-28")
        #expect(replayedOutputs == (try Self.outputs(work, "fresh/2026-11-28")))
        #expect(replayedOutputs["summary.json"]?.contains("\"as_of\": \"2026-11-28T") == true)
        #expect(replayedOutputs["findings.csv"] != before["findings.csv"])

        // The store and latest are as they were; the scratch store is gone.
        #expect(try Data(contentsOf: URL(fileURLWithPath: db)) == storeBefore)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: work.path("reports/latest")) == "2026-11-29")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.root).filter { $0.contains("replay") } == [])
        // --force moves latest back.
        #expect(work.iaprecon(["nightly", "--db", db, "--date", "2026-11-28", "--force"] + common).code == 0)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: work.path("reports/latest")) == "2026-11-28")

        // A backfill over the same store replays both nights, each equal to its fresh night.
        let backfill = work.iaprecon(["backfill", "--db", db, "--from", "2026-11-28", "--to", "2026-11-29", "--root", root,
                                      "--reports", work.path("backfill"), "--log-dir", work.path("logs"), "--quiet"])
        #expect(backfill.code == 0)
        #expect(try Self.outputs(work, "backfill/2026-11-28") == replayedOutputs)
        #expect(try Self.outputs(work, "backfill/2026-11-29") == before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: db)) == storeBefore)
    }

    @Test("a night replayed after one of its files was archived exits 3 naming the file, and leaves that night's reports as they were")
    func replayRefusesArchivedFiles() throws {
        let work = try Workspace()
        let root = try Self.partitions(in: work)
        let db = work.path("s.sqlite")
        let common = ["--db", db, "--root", root, "--reports", work.path("reports"), "--log-dir", work.path("logs"), "--quiet"]
        #expect(work.iaprecon(["nightly", "--date", "2026-11-28"] + common).code == 0)
        #expect(work.iaprecon(["nightly"] + common).code == 0)
        let before = try Self.outputs(work, "reports/2026-11-28")
        // The store keeps an archived file's rows; a replay fed the folder alone would lose them.
        try FileManager.default.moveItem(atPath: root + "/2026-11-28/server/server-2026-11-27.jsonl.gz", toPath: work.path("archived.gz"))
        let night = work.iaprecon(["nightly", "--date", "2026-11-28"] + common)
        #expect(night.code == 3)
        #expect(night.err == "Error: cannot replay 2026-11-28: 1 file the store holds for it is no longer under \(root) "
            + "(2026-11-28/server/server-2026-11-27.jsonl.gz); put it back\n")
        #expect(try Self.outputs(work, "reports/2026-11-28") == before)
        let backfill = work.iaprecon(["backfill", "--from", "2026-11-28", "--to", "2026-11-29"] + common)
        #expect(backfill.code == 3)
        #expect(backfill.err.hasPrefix("Error: cannot replay 2026-11-28: 1 file "))
        // A night the store has not gone past is no replay: the archived file keeps its rows.
        #expect(work.iaprecon(["nightly"] + common).code == 0)
        #expect(try work.read("reports/2026-11-29/findings.csv").contains(",lost_delivery,critical,u_1003,"))
        // Put back, the replay runs.
        try FileManager.default.moveItem(atPath: work.path("archived.gz"), toPath: root + "/2026-11-28/server/server-2026-11-27.jsonl.gz")
        #expect(work.iaprecon(["nightly", "--date", "2026-11-28"] + common).code == 0)
    }

    @Test("a replayed night or backfill on a store another run holds exits 4 naming the holder, and writes no report")
    func replayWaitsForTheStoreLock() throws {
        let work = try Workspace()
        let root = try Self.partitions(in: work)
        let db = work.path("s.sqlite")
        let common = ["--db", db, "--root", root, "--reports", work.path("reports"), "--log-dir", work.path("logs"), "--quiet"]
        #expect(work.iaprecon(["nightly"] + common).code == 0)
        // The store holds 11-29, so 11-28 is replayed in a scratch store: the store's own lock still counts.
        do {
            let lock = try RunLock(databasePath: db, command: "nightly")
            defer { withExtendedLifetime(lock) {} }
            let night = work.iaprecon(["nightly", "--date", "2026-11-28"] + common)
            #expect(night.code == 4)
            #expect(night.err.hasPrefix("Error: another run holds the database (pid \(getpid()), iaprecon nightly, started "))
            let backfill = work.iaprecon(["backfill", "--from", "2026-11-28", "--to", "2026-11-29"] + common)
            #expect(backfill.code == 4)
            #expect(!FileManager.default.fileExists(atPath: work.path("reports/2026-11-28")))
        }
        // Released, the replay runs.
        #expect(work.iaprecon(["nightly", "--date", "2026-11-28"] + common).code == 0)
    }

    /// How a first run can leave the store file it stopped in: made, locked and empty; or with SQLite's
    /// header page once it turned on WAL, and still no table.
    enum UnwrittenStore: String, CaseIterable, Sendable {
        case emptyFile = "an empty file", headerOnly = "a header and no table"
    }

    @Test("a store file no run has written a table to (a first night stopped once it had the lock or had turned on WAL, a file made ahead for its owner) is a new store to a night and a backfill",
          arguments: UnwrittenStore.allCases)
    func unwrittenStoreFile(_ unwritten: UnwrittenStore) throws {
        let work = try Workspace()
        let root = try Self.partitions(in: work)
        for (name, arguments) in [("night", ["nightly"]), ("backfill", ["backfill", "--from", "2026-11-28", "--to", "2026-11-29"])] {
            let db = work.path(name + ".sqlite")
            switch unwritten {
            case .emptyFile:
                #expect(FileManager.default.createFile(atPath: db, contents: nil))
            case .headerOnly:
                try Database(path: db).enableWAL()
                #expect(try FileManager.default.attributesOfItem(atPath: db)[.size] as? Int ?? 0 > 0, "\(arguments)")
            }
            // Near miss: a reader still says it is empty.
            #expect(work.iaprecon(["runs", "--db", db]).err
                    == "Error: cannot use store \(db): it is empty, no run has completed on it yet; run 'iaprecon run' or 'iaprecon ingest' first\n")
            let common = ["--db", db, "--root", root, "--reports", work.path(name + "-reports"), "--log-dir", work.path("logs"), "--quiet"]
            let result = work.iaprecon(arguments + common)
            #expect(result.code == 0, "\(arguments): \(result.err)")
            #expect(FileManager.default.fileExists(atPath: work.path(name + "-reports/2026-11-29/findings.csv")), "\(arguments)")
        }
    }

    @Test("a night or backfill refused because another run holds the store exits 4 and makes no folder: no log folder, no report folder")
    func lockedNightMakesNothing() throws {
        let work = try Workspace()
        let root = try Self.partitions(in: work)
        let db = work.path("s.sqlite")
        let common = ["--db", db, "--root", root, "--reports", work.path("reports"), "--log-dir", work.path("logs"), "--quiet"]
        do {
            let lock = try RunLock(databasePath: db, command: "nightly")
            defer { withExtendedLifetime(lock) {} }
            for arguments in [["nightly"], ["nightly", "--date", "2026-11-28"], ["backfill", "--from", "2026-11-28", "--to", "2026-11-29"]] {
                let refused = work.iaprecon(arguments + common)
                #expect(refused.code == 4, "\(arguments)")
                #expect(refused.err.hasPrefix("Error: another run holds the database (pid \(getpid()), iaprecon nightly, started "), "\(arguments)")
                #expect(!FileManager.default.fileExists(atPath: work.path("reports")), "\(arguments)")
                #expect(!FileManager.default.fileExists(atPath: work.path("logs")), "\(arguments)")
            }
        }
        // Near miss: released, the same night makes both, and its report and log in them.
        #expect(work.iaprecon(["nightly"] + common).code == 0)
        #expect(FileManager.default.fileExists(atPath: work.path("reports/2026-11-29/findings.csv")))
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.path("logs")).count == 1)
    }

    @Test("a night and a backfill hold the store's lock from their first look at the store to their end: no other run can take it in between")
    func oneLockThroughTheNight() throws {
        let work = try Workspace()
        let root = try Self.partitions(in: work)
        /// Runs a command on the store `db`, trying at each point of its work to take the store's lock as another run starting
        /// then would (creating the store when there is none); returns the exit code, stderr, the points, and where the lock was free.
        func probed(_ arguments: [String], db: String) -> (code: Int32, err: String, reached: [String], free: [String]) {
            let console = Console.capturing()
            var reached: [String] = []
            var free: [String] = []
            console.checkpoint = { point in
                reached.append(point)
                // Before its first look at the store the night holds nothing, and a probe there would make the store.
                guard point != "day chosen" else { return }
                do {
                    let other = try RunLock(databasePath: db, command: "run")
                    withExtendedLifetime(other) { free.append(point) }
                } catch is LockedError {
                } catch {
                    free.append("\(point): \(error)")
                }
            }
            let common = ["--db", db, "--root", root, "--reports", work.path("reports-" + (db as NSString).lastPathComponent),
                          "--log-dir", work.path("logs"), "--quiet"]
            let code = IAPReconCLI.run(arguments + common, console: console)
            return (code, console.stderr, reached, free)
        }
        let prepared = ["store checked", "folders made"]
        let night = ["log opened", "run starts", "outputs written", "run done", "night done"]
        let db = work.path("s.sqlite")
        // A first night (no store yet), then a night on a store that holds the day before: neither is a replay.
        for arguments in [["nightly", "--date", "2026-11-28"], ["nightly"]] {
            let result = probed(arguments, db: db)
            #expect(result.code == 0, "\(arguments): \(result.err)")
            #expect(Self.unrestated(result.err) == "", "\(arguments)")
            #expect(result.reached == ["day chosen"] + prepared + night, "\(arguments)")
            #expect(result.free == [], "\(arguments)")
        }
        // A backfill on a new store holds it across its nights too, and between them.
        let backfill = probed(["backfill", "--from", "2026-11-28", "--to", "2026-11-29"], db: work.path("b.sqlite"))
        #expect(backfill.code == 0, "\(backfill.err)")
        #expect(backfill.reached == prepared + night + night)
        #expect(backfill.free == [])

        // Near miss: a replayed night (the store holds 11-29) held the store's lock throughout already, and still does.
        let replay = probed(["nightly", "--date", "2026-11-28"], db: db)
        #expect(replay.code == 0, "\(replay.err)")
        #expect(replay.reached == ["day chosen"] + prepared + night)
        #expect(replay.free == [])
        // Once a night ends, the store is free again, and a run takes its own lock as before.
        #expect(RunLock.holder(databasePath: db) == nil)
        #expect(throws: Never.self) { withExtendedLifetime(try RunLock(databasePath: db, command: "run")) {} }
    }

    @Test("a first night and backfill lock the store before they make a folder: a run starting once their folders are made is refused, not the night",
          arguments: [["nightly"], ["backfill", "--from", "2026-11-28", "--to", "2026-11-29"]])
    func firstNightLocksBeforeItsFolders(_ arguments: [String]) throws {
        let work = try Workspace()
        let root = try Self.partitions(in: work)
        let db = work.path("s.sqlite")
        let console = Console.capturing()
        // Another run starting there, as a run would: it makes the store when there is none, and keeps it to the night's end.
        var other: RunLock?
        var refused: [String] = []
        console.checkpoint = { point in
            guard point == "folders made" else { return }
            do {
                other = try RunLock(databasePath: db, command: "run")
            } catch {
                refused.append("\(error)")
            }
        }
        let common = ["--root", root, "--db", db, "--reports", work.path("reports"), "--log-dir", work.path("logs"), "--quiet"]
        let code = IAPReconCLI.run(arguments + common, console: console)
        withExtendedLifetime(other) {}
        #expect(refused.count == 1)
        #expect(refused.first?.hasPrefix("another run holds the database (pid \(getpid()), iaprecon \(arguments[0]), started ") == true, "\(refused)")
        // Near miss: the first night runs as before, making its store, its folders, and its report and log in them.
        #expect(code == 0, "\(console.stderr)")
        #expect(Self.unrestated(console.stderr) == "")
        #expect(try Self.runMessages(db).count == (arguments[0] == "nightly" ? 1 : 2))
        #expect(FileManager.default.fileExists(atPath: work.path("reports/2026-11-29/findings.csv")))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: work.path("reports/latest")) == "2026-11-29")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.path("logs")).count == (arguments[0] == "nightly" ? 1 : 2))
    }

    @Test("a first night or backfill refused by a day folder iaprecon did not write (exit 2) leaves no store, no lock note and no folder; a store file made ahead stays")
    func refusedFirstNightLeavesNothing() throws {
        let work = try Workspace()
        let root = try Self.partitions(in: work)
        let manager = FileManager.default
        try manager.createDirectory(atPath: work.path("reports/2026-11-29"), withIntermediateDirectories: true)
        try "kept by hand\n".write(toFile: work.path("reports/2026-11-29/notes.txt"), atomically: true, encoding: .utf8)
        let db = work.path("s.sqlite")
        let common = ["--root", root, "--db", db, "--reports", work.path("reports"), "--log-dir", work.path("logs"), "--quiet"]
        let refusal = "Error: will not write into \(work.path("reports/2026-11-29")): it holds files iaprecon did not write ('notes.txt'); "
            + "name a new or empty folder\n"
        for arguments in [["nightly"], ["backfill", "--from", "2026-11-28", "--to", "2026-11-29"]] {
            let refused = work.iaprecon(arguments + common)
            #expect(refused.code == 2, "\(arguments)")
            #expect(refused.err == refusal, "\(arguments)")
            for leftover in [db, RunLock.notePath(db), work.path("logs"), work.path("reports/2026-11-28")] {
                #expect(!manager.fileExists(atPath: leftover), "\(arguments): \(leftover)")
            }
            #expect(try manager.contentsOfDirectory(atPath: work.root).sorted() == ["data", "reports"], "\(arguments)")
            #expect(try manager.contentsOfDirectory(atPath: work.path("reports")) == ["2026-11-29"], "\(arguments)")
            #expect(try manager.contentsOfDirectory(atPath: work.path("reports/2026-11-29")) == ["notes.txt"], "\(arguments)")
        }
        // Near miss: a store file made ahead (to set its owner) is not the night's to remove.
        #expect(manager.createFile(atPath: db, contents: nil))
        #expect(work.iaprecon(["nightly"] + common).err == refusal)
        #expect(manager.fileExists(atPath: db))
        #expect(!manager.fileExists(atPath: work.path("logs")))
        // Once the folder is moved away, the night runs on that file.
        try manager.moveItem(atPath: work.path("reports/2026-11-29"), toPath: work.path("notes"))
        #expect(work.iaprecon(["nightly"] + common).code == 0)
        #expect(try Self.runMessages(db) == ["2026-11-29 ok 0: "])
    }

    @Test("a first night whose --db is a symlink to a store not made yet, refused by a day folder iaprecon did not write, leaves no store where the symlink leads, and no lock note; the symlink stays")
    func refusedFirstNightThroughASymlink() throws {
        let work = try Workspace()
        let root = try Self.partitions(in: work)
        let manager = FileManager.default
        try manager.createDirectory(atPath: work.path("stores"), withIntermediateDirectories: true)
        let store = work.path("stores/s.sqlite")
        let db = work.path("s.sqlite")
        try manager.createSymbolicLink(atPath: db, withDestinationPath: "stores/s.sqlite")
        try manager.createDirectory(atPath: work.path("reports/2026-11-29"), withIntermediateDirectories: true)
        try "kept by hand\n".write(toFile: work.path("reports/2026-11-29/notes.txt"), atomically: true, encoding: .utf8)
        let common = ["--root", root, "--db", db, "--reports", work.path("reports"), "--log-dir", work.path("logs"), "--quiet"]
        let refused = work.iaprecon(["nightly"] + common)
        #expect(refused.code == 2)
        #expect(refused.err.hasPrefix("Error: will not write into \(work.path("reports/2026-11-29")): it holds files iaprecon did not write"))
        #expect(try manager.contentsOfDirectory(atPath: work.path("stores")) == [])
        #expect(try manager.destinationOfSymbolicLink(atPath: db) == "stores/s.sqlite")
        #expect(!manager.fileExists(atPath: work.path("logs")))
        // Near miss: once the folder is moved away, the night makes the store where the symlink leads, and runs on it.
        try manager.moveItem(atPath: work.path("reports/2026-11-29"), toPath: work.path("notes"))
        #expect(work.iaprecon(["nightly"] + common).code == 0)
        #expect(try manager.destinationOfSymbolicLink(atPath: db) == "stores/s.sqlite")
        #expect(manager.fileExists(atPath: store))
        #expect(try Self.runMessages(db) == ["2026-11-29 ok 0: "])
    }

    /// How a first night can stop once it has made its folders, before it stores anything it read.
    enum FirstNightFailure: String, CaseIterable, Sendable {
        case logCannotOpen = "its log cannot be opened", reportFolderRefused = "its report folder is refused once it runs",
             currencyMismatch = "its fx.csv does not convert into --currency"
    }

    @Test("a first night or backfill that stops after making its folders and before storing anything it read leaves no store, journal, lock note or empty report folder; its log stays, saying why",
          arguments: FirstNightFailure.allCases)
    func failedFirstNightLeavesNoStore(_ failure: FirstNightFailure) throws {
        let manager = FileManager.default
        for arguments in [["nightly"], ["backfill", "--from", "2026-11-28", "--to", "2026-11-29"]] {
            let work = try Workspace()
            let root = try Self.partitions(in: work)
            let db = work.path("s.sqlite")
            // The night that stops: a nightly's newest day, a backfill's first.
            let day = arguments[0] == "nightly" ? "2026-11-29" : "2026-11-28"
            let console = Console.capturing()
            console.checkpoint = { point in
                switch (failure, point) {
                case (.logCannotOpen, "folders made"):
                    // A file where the log folder the night made was: no log can be made in it.
                    #expect(throws: Never.self) { try manager.removeItem(atPath: work.path("logs")) }
                    #expect(manager.createFile(atPath: work.path("logs"), contents: Data("in the way\n".utf8)))
                case (.reportFolderRefused, "log opened"):
                    #expect(throws: Never.self) {
                        try manager.createDirectory(atPath: work.path("reports/" + day), withIntermediateDirectories: true)
                        try "kept by hand\n".write(toFile: work.path("reports/\(day)/notes.txt"), atomically: true, encoding: .utf8)
                    }
                default: break
                }
            }
            let currency = failure == .currencyMismatch ? ["--currency", "JPY"] : []
            let common = Self.commonArguments(root: root, db: db, in: work)
            let code = IAPReconCLI.run(arguments + common + currency, console: console)
            switch failure {
            case .logCannotOpen:
                #expect(code == 1, "\(arguments)")
                #expect(console.stderr.hasPrefix("Error: cannot write \(work.path("logs"))/iaprecon-\(day)-"), "\(arguments): \(console.stderr)")
                #expect(console.stderr.hasSuffix(".log: Not a directory\n"), "\(arguments): \(console.stderr)")
            case .reportFolderRefused:
                #expect(code == 2, "\(arguments)")
                #expect(console.stderr == "Error: will not write into \(work.path("reports/" + day)): it holds files iaprecon did not write "
                        + "('notes.txt'); name a new or empty folder\n", "\(arguments)")
            case .currencyMismatch:
                #expect(code == 2, "\(arguments)")
                #expect(console.stderr == "Error: 2026-11-28/fx.csv converts into USD, not JPY\n", "\(arguments)")
            }
            // What is left is what the test put there (the file in the log folder's place, the folder with the
            // hand-kept notes) and the log of a night that opened one, which says why it failed.
            let left: [String] = switch failure {
            case .logCannotOpen: ["data", "logs"]
            case .reportFolderRefused: ["data", "logs", "reports"]
            case .currencyMismatch: ["data", "logs"]
            }
            #expect(try manager.contentsOfDirectory(atPath: work.root).sorted() == left, "\(arguments)")
            if failure != .logCannotOpen {
                let logs = try Self.logs(work)
                #expect(logs.count == 1, "\(arguments)")
                let reason = failure == .currencyMismatch ? "2026-11-28/fx.csv converts into USD, not JPY"
                    : "will not write into \(work.path("reports/" + day))"
                #expect(logs.first?.contains("failed: " + reason) == true, "\(arguments): \(logs)")
            }
            if failure == .reportFolderRefused {
                #expect(try manager.contentsOfDirectory(atPath: work.path("reports")) == [day], "\(arguments)")
                #expect(try manager.contentsOfDirectory(atPath: work.path("reports/" + day)) == ["notes.txt"], "\(arguments)")
            }
        }
    }

    @Test("a night, or an ingest, that fails after its turn of the store's check notes that turn, so that the next turn checks other tables")
    func failedNightNotesItsCheckTurn() throws {
        let work = try Workspace()
        let root = try Self.partitions(in: work)
        let db = work.path("s.sqlite")
        let common = ["--root", root, "--reports", work.path("reports"), "--log-dir", work.path("logs"), "--quiet",
                      "--trust-root", Workspace.sampleRoot, "--db", db]
        func lastTurn() throws -> (turn: Int64, tables: Set<String>) {
            let database = try Store.open(path: db, readOnly: true)
            let turn = try database.scalar("SELECT coalesce(max(turn), 0) FROM store_checks").integerValue
            var tables: Set<String> = []
            try database.forEach("SELECT table_name FROM store_checks WHERE turn = ?", [.integer(turn)]) { tables.insert($0.string(0)) }
            return (turn, tables)
        }
        #expect(work.iaprecon(["nightly", "--date", "2026-11-28"] + common).code == 0)
        let ok = try lastTurn()
        // A first night checks the store it made, which holds nothing yet: all of it.
        #expect(ok.turn == 1 && !ok.tables.isEmpty)
        // The next night cannot read all of its input, night after night: the rotation goes on all the same.
        let broken = root + "/2026-11-29/server/broken.jsonl.gz"
        try FileManager.default.createDirectory(atPath: broken, withIntermediateDirectories: true)
        var seen: Set<String> = []
        for night in 2...3 {
            #expect(work.iaprecon(["nightly", "--date", "2026-11-29"] + common).code == 3)
            let failed = try lastTurn()
            #expect(failed.turn == Int64(night), "night \(night)")
            #expect(failed.tables.isDisjoint(with: seen), "night \(night) checked again \(failed.tables.intersection(seen))")
            seen.formUnion(failed.tables)
        }
        // A stage run alone, beside its own reader of the store.
        #expect(work.iaprecon(["ingest", "--input", root + "/2026-11-29", "--db", db, "--quiet", "--trust-root", Workspace.sampleRoot]).code == 3)
        #expect(try lastTurn().turn == 4)
        // Near miss: a night refused before it looked at the store checks no turn.
        #expect(work.iaprecon(["nightly", "--date", "2026-11-30"] + common).code == 3)
        #expect(try lastTurn().turn == 4)
    }

    @Test("a first night that stops once it stored what it read, and a night that stops on a store it did not make, keep the store, its runs, the log and the folders")
    func failedNightKeepsAStoreWithData() throws {
        let work = try Workspace()
        let root = try Self.partitions(in: work)
        let manager = FileManager.default
        let db = work.path("s.sqlite")
        let options = ["--root", root, "--reports", work.path("reports"), "--log-dir", work.path("logs"), "--quiet", "--trust-root", Workspace.sampleRoot]
        let common = options + ["--db", db]
        // A first night whose input cannot all be read stores the files it could read, then stops: the next night reads on from them.
        let broken = root + "/2026-11-29/server/broken.jsonl.gz"
        try manager.createDirectory(atPath: broken, withIntermediateDirectories: true)
        let unreadable = work.iaprecon(["nightly"] + common)
        #expect(unreadable.code == 3)
        #expect(unreadable.err == "Error: cannot read \(broken): Is a directory\n")
        #expect(try Store.open(path: db, readOnly: true).scalar("SELECT count(*) FROM files") == .integer(13))
        #expect(try Self.runMessages(db) == ["2026-11-29 failed 3: cannot read \(broken): Is a directory"])
        #expect(try Self.logs(work).count == 1)
        #expect(manager.fileExists(atPath: work.path("reports")))

        // A night that stops before it reads anything on a store that holds earlier nights is recorded in it.
        try manager.removeItem(atPath: broken)
        let mismatch = work.iaprecon(["nightly", "--currency", "JPY"] + common)
        #expect(mismatch.code == 2)
        #expect(mismatch.err == "Error: 2026-11-28/fx.csv converts into USD, not JPY\n")
        #expect(try Self.runMessages(db).last == "2026-11-29 failed 2: 2026-11-28/fx.csv converts into USD, not JPY")
        let logs = try Self.logs(work)
        #expect(logs.count == 2)
        #expect(logs.last?.contains("failed: 2026-11-28/fx.csv converts into USD, not JPY\n") == true)

        // So is one on a store file made ahead (to set its owner): the file was not the night's to remove.
        let ahead = work.path("ahead.sqlite")
        #expect(manager.createFile(atPath: ahead, contents: nil))
        let onAhead = work.iaprecon(["nightly", "--currency", "JPY", "--db", ahead] + options)
        #expect(onAhead.code == 2)
        #expect(try Self.runMessages(ahead) == ["2026-11-29 failed 2: 2026-11-28/fx.csv converts into USD, not JPY"])
        #expect(try Self.logs(work).count == 3)

        // A first backfill whose second night stops before it reads anything keeps what its first night stored and wrote.
        let backfilled = work.path("backfill.sqlite")
        let console = Console.capturing()
        console.checkpoint = { point in
            guard point == "log opened", manager.fileExists(atPath: work.path("backfill-reports/2026-11-28/findings.csv")) else { return }
            #expect(throws: Never.self) {
                try manager.createDirectory(atPath: work.path("backfill-reports/2026-11-29"), withIntermediateDirectories: true)
                try "kept by hand\n".write(toFile: work.path("backfill-reports/2026-11-29/notes.txt"), atomically: true, encoding: .utf8)
            }
        }
        let code = IAPReconCLI.run(["backfill", "--from", "2026-11-28", "--to", "2026-11-29", "--root", root, "--db", backfilled,
                                    "--reports", work.path("backfill-reports"), "--log-dir", work.path("logs"), "--quiet",
                                    "--trust-root", Workspace.sampleRoot], console: console)
        #expect(code == 2)
        #expect(console.stderr.hasPrefix("Error: will not write into \(work.path("backfill-reports/2026-11-29")): "))
        #expect(try Self.runMessages(backfilled) == ["2026-11-28 ok 0: "])
        #expect(manager.fileExists(atPath: work.path("backfill-reports/2026-11-28/findings.csv")))
        #expect(try Self.logs(work).count == 5)
    }

    @Test("a night whose store refuses a file's rows mid-file keeps none of that file and is recorded as failed; the next night stores it")
    func storeRefusingAFileMidway() throws {
        let work = try Workspace()
        let (_, db, common) = try Self.nights(in: work)
        #expect(work.iaprecon(["nightly", "--date", "2026-11-28"] + common).code == 0)
        let server = "2026-11-29/server/server-2026-11-28.jsonl"
        func stored() throws -> (orders: SQLValue?, files: SQLValue?) {
            let store = try Store.open(path: db, readOnly: true)
            return (try store.scalar("SELECT count(*) FROM raw_server__orders"),
                    try store.scalar("SELECT count(*) FROM files WHERE path = ?", [.text(server)]))
        }
        let before = try stored()
        // The store fails the server log's first order row, as a full disk would: its file's transaction is open.
        try Store.open(path: db).execute("""
            CREATE TRIGGER orders_refused BEFORE INSERT ON raw_server__orders
            WHEN NEW.file_id = (SELECT file_id FROM files WHERE path = '\(server)')
            BEGIN SELECT RAISE(ABORT, 'orders refused'); END
            """)
        let refused = work.iaprecon(["nightly"] + common)
        #expect(refused.code == 1)
        #expect(refused.err.contains("orders refused"), "\(refused.err)")
        // Nothing of the file is kept, and the night's end is in the runs table, not lost with the file's transaction.
        #expect(try stored() == before)
        let runs = try Self.runMessages(db)
        #expect(runs.last?.hasPrefix("2026-11-29 failed 1: ") == true, "\(runs)")
        #expect(runs.last?.contains("orders refused") == true, "\(runs)")
        #expect(runs.count == 2)

        // The store takes the rows again: the next night stores the file whole.
        try Store.open(path: db).execute("DROP TRIGGER orders_refused")
        #expect(work.iaprecon(["nightly"] + common).code == 0)
        #expect(try stored().files == .integer(1))
        #expect(try stored().orders != before.orders)
        #expect(try Self.runMessages(db).last == "2026-11-29 ok 0: ")
    }

    @Test("a night that re-reports its day names the run that reported it as the store is when the night holds it, not as it was before")
    func repeatedNightLooksUnderTheLock() throws {
        let work = try Workspace()
        let (root, db, common) = try Self.nights(in: work)
        #expect(work.iaprecon(["nightly", "--date", "2026-11-28"] + common).code == 0)
        // Tonight's 11-29 is new when the night chooses it; another run reports it before the night takes the store.
        let console = Console.capturing()
        var other: Int32?
        console.checkpoint = { point in
            if point == "day chosen" { other = work.iaprecon(["nightly", "--date", "2026-11-29"] + common).code }
        }
        let code = IAPReconCLI.run(["nightly"] + common, console: console)
        #expect(other == 0)
        #expect(code == 0)
        let warning = try #require(console.stderr.split(separator: "\n").first.map { String($0.dropFirst("Warning: ".count)) })
        #expect(console.stderr == "Warning: " + warning + "\n")
        #expect(warning.hasPrefix("no partition after \(root)/2026-11-29, which run 2 ("))
        #expect(warning.hasSuffix(" UTC) already reported; reporting it again"))
        // In the night's log, after its first line, and in its row of runs.
        let log = try #require(try Self.logs(work).last).split(separator: "\n")
        #expect(log.count > 1 && log[1].hasSuffix(" Warning: " + warning))
        #expect(try Self.runMessages(db) == ["2026-11-28 ok 0: ", "2026-11-29 ok 0: ", "2026-11-29 ok 0: " + warning])
    }

    /// Three day partitions: the server's history, then Apple's side with the live log, then attribution.
    /// `err` without the restated-revenue line (`RestatedFiguresTests`): these nights' later partitions bring receipts
    /// for days an earlier night reported, which those tests are not about.
    static func unrestated(_ err: String) -> String {
        err.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("Warning: restated revenue: ") }.joined(separator: "\n")
    }

    static func threeDays(in work: Workspace) throws -> String {
        let root = work.path("data")
        let days: [String: [String]] = [
            "2026-11-27": ["server/server-2026-11-27.jsonl.gz", "registrations/signups.jsonl", "catalog.csv", "fx.csv"],
            "2026-11-28": ["server/server-2026-11-28.jsonl", "receipts/verify-2026-11.jsonl", "notifications/asn-2026-11.jsonl"],
            "2026-11-29": ["attribution/installs_2026-11-20_2026-11-29.csv", "attribution/in_app_events_2026-11-20_2026-11-29.csv", "spend/spend.csv"],
        ]
        for (day, files) in days {
            for file in files {
                let target = root + "/" + day + "/" + file
                try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try FileManager.default.copyItem(atPath: Workspace.sampleData + "/" + file, toPath: target)
            }
        }
        return root
    }

    @Test("a replayed night says new and first_seen as that night did: findings an earlier night reported are not new")
    func replayKeepsEarlierSightings() throws {
        let work = try Workspace()
        let root = try Self.threeDays(in: work)
        let common = ["--db", work.path("s.sqlite"), "--root", root, "--reports", work.path("reports"), "--log-dir", work.path("logs"),
                      "--quiet", "--trust-root", Workspace.sampleRoot]
        for day in ["2026-11-27", "2026-11-28", "2026-11-29"] {
            #expect(work.iaprecon(["nightly", "--date", day] + common).code == 0)
        }
        let seen = try work.read("reports/2026-11-28/findings.csv")
        // Some of the night's findings were first reported the night before, some that night.
        #expect(seen.contains(",false\r\n") && seen.contains(",true\r\n"))
        #expect(work.iaprecon(["nightly", "--date", "2026-11-28"] + common).code == 0)
        #expect(try work.read("reports/2026-11-28/findings.csv") == seen)
    }

    @Test("a replayed night with --fail-on-new does not alert again for what the store's nights already alerted on")
    func replayAlertsOnce() throws {
        let work = try Workspace()
        let root = try Self.threeDays(in: work)
        let common = ["--db", work.path("s.sqlite"), "--root", root, "--reports", work.path("reports"), "--log-dir", work.path("logs"),
                      "--quiet", "--trust-root", Workspace.sampleRoot, "--fail-on-new", "critical"]
        let nights = ["2026-11-27", "2026-11-28", "2026-11-29"].map { work.iaprecon(["nightly", "--date", $0] + common) }
        // 11-28 brings Apple's side: its critical findings are new, and cron mails the alert line.
        #expect(nights[1].code == 1)
        #expect(Self.unrestated(nights[1].err).hasPrefix("iaprecon: exit 1: "))
        let seen = try work.read("reports/2026-11-28/findings.csv")
        // Re-run, the night says new as it did, but the alert went out the first time.
        let again = work.iaprecon(["nightly", "--date", "2026-11-28"] + common)
        #expect(again.code == 0)
        #expect(again.err.isEmpty)
        #expect(try work.read("reports/2026-11-28/findings.csv") == seen)
    }

    @Test("the newest night run again writes the same report, new included, and does not alert again")
    func newestNightAgain() throws {
        let work = try Workspace()
        let root = try Self.threeDays(in: work)
        try FileManager.default.removeItem(atPath: root + "/2026-11-29")
        let common = ["--db", work.path("s.sqlite"), "--root", root, "--reports", work.path("reports"), "--log-dir", work.path("logs"),
                      "--quiet", "--trust-root", Workspace.sampleRoot, "--fail-on-new", "critical"]
        // The server's history alone: its deliveries no verified source knows yet alert too.
        _ = work.iaprecon(["nightly", "--date", "2026-11-27"] + common)
        let night = work.iaprecon(["nightly", "--date", "2026-11-28"] + common)
        #expect(night.code == 1)
        #expect(Self.unrestated(night.err).hasPrefix("iaprecon: exit 1: "))
        let files = ["findings.csv", "findings.json", "summary.json"]
        let written = try files.map { try work.read("reports/2026-11-28/" + $0) }
        #expect(written[0].contains(",true\r\n"))
        let again = work.iaprecon(["nightly", "--date", "2026-11-28"] + common)
        #expect(again.code == 0)
        #expect(again.err.isEmpty)
        #expect(try files.map { try work.read("reports/2026-11-28/" + $0) } == written)
    }

    @Test("a night stopped after its report is written and before its alert (latest cannot be moved) fails; the next night alerts")
    func alertNotLost() throws {
        let work = try Workspace()
        let root = try Self.threeDays(in: work)
        try FileManager.default.removeItem(atPath: root + "/2026-11-29")
        let db = work.path("s.sqlite")
        let common = ["--db", db, "--root", root, "--reports", work.path("reports"), "--log-dir", work.path("logs"),
                      "--quiet", "--trust-root", Workspace.sampleRoot, "--fail-on-new", "critical"]
        _ = work.iaprecon(["nightly", "--date", "2026-11-27"] + common)
        // A folder where the link goes: the night's report is switched in, and then it cannot point latest at it.
        try FileManager.default.removeItem(atPath: work.path("reports/latest"))
        try FileManager.default.createDirectory(atPath: work.path("reports/latest/kept"), withIntermediateDirectories: true)
        let stopped = work.iaprecon(["nightly", "--date", "2026-11-28"] + common)
        #expect(stopped.code == 1)
        #expect(Self.unrestated(stopped.err).hasPrefix("Error: "))
        #expect(!stopped.err.contains("iaprecon: exit 1: "))
        #expect(try Self.runMessages(db).last?.hasPrefix("2026-11-28 failed 1: ") == true)
        try FileManager.default.removeItem(atPath: work.path("reports/latest"))
        let next = work.iaprecon(["nightly", "--date", "2026-11-28"] + common)
        #expect(next.code == 1)
        #expect(next.err.hasPrefix("iaprecon: exit 1: "))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: work.path("reports/latest")) == "2026-11-28")
    }

    @Test("a --date whose partition never landed exits 3 naming the folder it looked for, and writes nothing")
    func missingPartition() throws {
        let work = try Workspace()
        let root = try Self.partitions(in: work)
        let result = work.iaprecon(["nightly", "--root", root, "--date", "2026-11-30", "--db", work.path("s.sqlite"),
                                    "--reports", work.path("reports"), "--log-dir", work.path("logs")])
        #expect(result.code == 3)
        #expect(result.err == "Error: cannot read \(root)/2026-11-30: no partition for --date 2026-11-30\n")
        #expect(!FileManager.default.fileExists(atPath: work.path("reports/2026-11-30")))
    }

    @Test("a night's as-of is at most the end of its day in --tz, even when the day's files hold later events")
    func asOfCappedAtDayEnd() throws {
        let work = try Workspace()
        let root = try Self.partitions(in: work)
        // The 11-28 partition's files run to 2026-11-29T23:59Z; in Tokyo the day ends at 2026-11-28T14:59:59.999Z.
        let result = work.iaprecon(["nightly", "--root", root, "--date", "2026-11-28", "--tz", "Asia/Tokyo", "--db", work.path("s.sqlite"),
                                    "--reports", work.path("reports"), "--log-dir", work.path("logs"), "--quiet"])
        #expect(result.code == 0)
        #expect(try work.read("reports/2026-11-28/summary.json").contains("\"as_of\": \"2026-11-28T14:59:59.999Z\""))
    }

    @Test("a night in a zone whose clocks skip midnight keeps its day's last hour: Santiago's 2026-09-05 ends at 03:59:59.999Z")
    func asOfCapWhereMidnightIsSkipped() throws {
        let work = try Workspace()
        try FileManager.default.createDirectory(atPath: work.path("root/2026-09-05/server"), withIntermediateDirectories: true)
        // 23:30 on 2026-09-05 in Santiago (-04); the next midnight is skipped, clocks go to 01:00 (-03).
        let order = #"{"ts":"TS","event":"order_created","order_id":"ID","user_id":"u1","product_id":"gems60","price":"0.99","currency":"USD"}"#
        try [("2026-09-06T02:30:00Z", "o1"), ("2026-09-06T03:30:00Z", "o2")]
            .map { order.replacingOccurrences(of: "TS", with: $0.0).replacingOccurrences(of: "ID", with: $0.1) + "\n" }.joined()
            .write(toFile: work.path("root/2026-09-05/server/s.jsonl"), atomically: true, encoding: .utf8)
        let result = work.iaprecon(["nightly", "--root", work.path("root"), "--date", "2026-09-05", "--tz", "America/Santiago",
                                    "--db", work.path("s.sqlite"), "--reports", work.path("reports"), "--log-dir", work.path("logs"), "--quiet"])
        #expect(result.code == 0)
        #expect(try work.read("reports/2026-09-05/summary.json").contains("\"as_of\": \"2026-09-06T03:30:00.000Z\""))
    }

    @Test("a --log-dir or --reports that cannot be made exits 1 naming it and the system's reason, before any work")
    func unwritableFolders() throws {
        let work = try Workspace()
        let root = try Self.partitions(in: work)
        try "a file".write(toFile: work.path("blocked"), atomically: true, encoding: .utf8)
        let common = ["--root", root, "--db", work.path("s.sqlite"), "--quiet"]
        let logs = work.iaprecon(["nightly", "--reports", work.path("reports"), "--log-dir", work.path("blocked/logs")] + common)
        #expect(logs.code == 1)
        // The message names the part of the path that is in the way.
        #expect(logs.err == "Error: cannot write \(work.path("blocked")): Not a directory\n")
        // The reports folder it made before it found the log folder blocked goes again: a refused night makes no folder.
        #expect(!FileManager.default.fileExists(atPath: work.path("reports")))
        let reports = work.iaprecon(["nightly", "--reports", work.path("blocked/reports"), "--log-dir", work.path("logs")] + common)
        #expect(reports.code == 1)
        #expect(reports.err == "Error: cannot write \(work.path("blocked")): Not a directory\n")
        #expect(!FileManager.default.fileExists(atPath: work.path("s.sqlite")))
    }

    /// Four generated day partitions, 2026-09-01 to 2026-09-04, and the options every night of them takes.
    static func fourGeneratedDays(in work: Workspace) throws -> [String] {
        let generated = work.iaprecon(["generate", "--out", work.path("days"), "--users", "30", "--days", "4", "--partitioned"])
        try #require(generated.code == 0)
        return ["--root", work.path("days"), "--db", work.path("s.sqlite"), "--reports", work.path("reports"), "--log-dir", work.path("logs"),
                "--trust-root", work.path("days/trust/test-root.pem")]
    }

    /// The names in `<reports>`, sorted.
    static func reportNames(_ work: Workspace) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: work.path("reports")).sorted()
    }

    @Test("--keep-reports 2 leaves the newest 2 day folders and latest, names what it removed, and leaves what iaprecon did not write")
    func keepReports() throws {
        let work = try Workspace()
        let common = try Self.fourGeneratedDays(in: work)
        let reports = work.path("reports")
        // A user's file, and a dated folder iaprecon did not write (no marker), both older than every night.
        try FileManager.default.createDirectory(atPath: reports + "/2026-08-31", withIntermediateDirectories: true)
        try "mine".write(toFile: reports + "/2026-08-31/notes.txt", atomically: true, encoding: .utf8)
        try "mine".write(toFile: reports + "/README.txt", atomically: true, encoding: .utf8)

        for day in ["2026-09-01", "2026-09-02"] {
            #expect(work.iaprecon(["nightly", "--date", day, "--keep-reports", "2", "--quiet"] + common).code == 0, "\(day)")
        }
        #expect(try Self.reportNames(work) == ["2026-08-31", "2026-09-01", "2026-09-02", "README.txt", "latest"])
        // Under --quiet a prune prints nothing: cron mails whatever is printed.
        let third = work.iaprecon(["nightly", "--date", "2026-09-03", "--keep-reports", "2", "--quiet"] + common)
        #expect(third.code == 0)
        #expect(third.out == "")
        #expect(!third.err.contains("2026-09-01"))
        // Without it, one line after the findings line.
        let fourth = work.iaprecon(["nightly", "--date", "2026-09-04", "--keep-reports", "2"] + common)
        #expect(fourth.code == 0)
        let lines = fourth.out.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines.last == "Removed 1 report folder beyond the newest 2 in \(reports): 2026-09-02")

        #expect(try Self.reportNames(work) == ["2026-08-31", "2026-09-03", "2026-09-04", "README.txt", "latest"])
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: reports + "/latest") == "2026-09-04")
        #expect(try work.read("reports/2026-08-31/notes.txt") == "mine")
        #expect(FileManager.default.fileExists(atPath: reports + "/latest/findings.csv"))
        // The log of each night names the folder it removed.
        let logs = try FileManager.default.contentsOfDirectory(atPath: work.path("logs")).sorted().map { try work.read("logs/" + $0) }
        #expect(logs.count == 4)
        #expect(logs[2].contains("keep-reports 2: removed \(reports)/2026-09-01\n"))
        #expect(logs[3].contains("keep-reports 2: removed \(reports)/2026-09-02\n"))
        #expect(!logs[1].contains("removed"))
    }

    @Test("without --keep-reports every day folder stays; a replayed older night with --keep-reports removes nothing newer than itself")
    func keepReportsReplay() throws {
        let work = try Workspace()
        let common = try Self.fourGeneratedDays(in: work) + ["--quiet"]
        for day in ["2026-09-01", "2026-09-02", "2026-09-03", "2026-09-04"] {
            #expect(work.iaprecon(["nightly", "--date", day] + common).code == 0, "\(day)")
        }
        let all = ["2026-09-01", "2026-09-02", "2026-09-03", "2026-09-04", "latest"]
        #expect(try Self.reportNames(work) == all)

        // 09-02 is beyond the newest 2 but newer than the replayed 09-01: it stays, as does the folder written.
        let replay = work.iaprecon(["nightly", "--date", "2026-09-01", "--keep-reports", "2"] + common)
        #expect(replay.code == 0)
        #expect(try Self.reportNames(work) == all)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: work.path("reports/latest")) == "2026-09-04")
        // A replay still removes what is older than the night it wrote and beyond the newest 2.
        #expect(work.iaprecon(["nightly", "--date", "2026-09-02", "--keep-reports", "2"] + common).code == 0)
        #expect(try Self.reportNames(work) == ["2026-09-02", "2026-09-03", "2026-09-04", "latest"])
        // The next forward night counts the newest 2 again.
        #expect(work.iaprecon(["nightly", "--date", "2026-09-04", "--keep-reports", "2"] + common).code == 0)
        #expect(try Self.reportNames(work) == ["2026-09-03", "2026-09-04", "latest"])
    }

    @Test("backfill takes keep-reports from the config file; 0 or a negative count is bad usage naming the option, before any night")
    func keepReportsBackfillAndUsage() throws {
        let work = try Workspace()
        let common = try Self.fourGeneratedDays(in: work) + ["--quiet"]
        try "keep-reports = 2\n".write(toFile: work.path("keep.conf"), atomically: true, encoding: .utf8)
        let backfill = work.iaprecon(["backfill", "--config", work.path("keep.conf"), "--from", "2026-09-01", "--to", "2026-09-04"] + common)
        #expect(backfill.code == 0)
        #expect(try Self.reportNames(work) == ["2026-09-03", "2026-09-04", "latest"])

        for (command, value) in [(["nightly"], "0"), (["nightly"], "-1"), (["backfill", "--from", "2026-09-01", "--to", "2026-09-04"], "0")] {
            let refused = work.iaprecon(command + ["--keep-reports", value] + common)
            #expect(refused.code == 2, "\(command) \(value)")
            #expect(refused.err == "Error: The value '\(value)' is invalid for '--keep-reports <n>': expected a whole number of at least 1 "
                    + "(see 'iaprecon \(command[0]) --help')\n", "\(command) \(value)")
        }
        try "keep-reports = 0\n".write(toFile: work.path("zero.conf"), atomically: true, encoding: .utf8)
        let zero = work.iaprecon(["nightly", "--config", work.path("zero.conf")] + common)
        #expect(zero.code == 2)
        #expect(zero.err.contains("zero.conf:1: The value '0' is invalid for 'keep-reports'"))
        // Nothing ran: the folders the backfill left are as they were.
        #expect(try Self.reportNames(work) == ["2026-09-03", "2026-09-04", "latest"])
    }

    /// Root may remove what permissions forbid, so the failure cannot be made there.
    @Test("a day folder --keep-reports cannot remove is a warning naming it and the reason, also under --quiet; the night's exit is unchanged",
          .enabled(if: geteuid() != 0))
    func keepReportsCannotRemove() throws {
        let work = try Workspace()
        let common = try Self.fourGeneratedDays(in: work) + ["--quiet"]
        for day in ["2026-09-01", "2026-09-02", "2026-09-03"] {
            #expect(work.iaprecon(["nightly", "--date", day] + common).code == 0, "\(day)")
        }
        let sets = work.path("reports/2026-09-01/.sets")
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: sets)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: sets) }
        let night = work.iaprecon(["nightly", "--date", "2026-09-04", "--keep-reports", "1"] + common)
        #expect(night.code == 0)
        let warning = "Warning: cannot remove the old report folder \(work.path("reports/2026-09-01")) (--keep-reports 1): \(sets)/set-"
        #expect(night.err.hasPrefix(warning) && night.err.hasSuffix(": Permission denied\n"), "\(night.err)")
        #expect(night.err.split(separator: "\n").count == 1)
        #expect(night.out == "")
        // The folder keeps its marker, so the next night tries it again; the one it could remove is gone.
        #expect(FileManager.default.fileExists(atPath: work.path("reports/2026-09-01/.iaprecon-out")))
        #expect(try Self.reportNames(work) == ["2026-09-01", "2026-09-04", "latest"])
    }

    @Test("a root without day partitions exits 3 naming it")
    func noPartitions() throws {
        let work = try Workspace()
        try FileManager.default.createDirectory(atPath: work.path("empty"), withIntermediateDirectories: true)
        let result = work.iaprecon(["nightly", "--root", work.path("empty"), "--db", work.path("s.sqlite"), "--reports", work.path("r"),
                                    "--log-dir", work.path("logs")])
        #expect(result.code == 3)
        #expect(result.err == "Error: cannot read \(work.path("empty")): no YYYY-MM-DD partition folders\n")
    }

    @Test("a mistyped --root, or one that is a file, exits 3 saying so, and makes nothing", arguments: ["nightly", "backfill"])
    func rootNotAFolder(command: String) throws {
        let work = try Workspace()
        try Data("not a folder\n".utf8).write(to: URL(fileURLWithPath: work.path("plain")))
        let range = command == "backfill" ? ["--from", "2026-09-01", "--to", "2026-09-02"] : []
        for (root, reason) in [(work.path("inptu"), "no such folder"), (work.path("plain"), "not a folder")] {
            let result = work.iaprecon([command, "--root", root, "--db", work.path("s.sqlite"), "--reports", work.path("r"),
                                        "--log-dir", work.path("logs")] + range)
            #expect(result.code == 3)
            #expect(result.err == "Error: cannot read \(root): \(reason)\n")
        }
        #expect(!FileManager.default.fileExists(atPath: work.path("s.sqlite")))
        #expect(!FileManager.default.fileExists(atPath: work.path("r")))
        #expect(!FileManager.default.fileExists(atPath: work.path("logs")))
    }

    /// How a day folder can be there before its partition has landed: made ahead of its files, or holding only files ingest does not read.
    enum UnlandedPartition: String, CaseIterable, Sendable {
        case emptyFolder = "an empty folder", emptySourceFolders = "empty source folders",
             temporaryFiles = "an uploader's temporary files", unknownFiles = "files that match no source"

        func make(_ folder: String) throws {
            let manager = FileManager.default
            try manager.createDirectory(atPath: folder, withIntermediateDirectories: true)
            switch self {
            case .emptyFolder:
                break
            case .emptySourceFolders:
                for source in ["server", "receipts", "notifications"] {
                    try manager.createDirectory(atPath: folder + "/" + source, withIntermediateDirectories: true)
                }
            case .temporaryFiles:
                try manager.createDirectory(atPath: folder + "/server", withIntermediateDirectories: true)
                try manager.copyItem(atPath: Workspace.sampleData + "/server/server-2026-11-28.jsonl", toPath: folder + "/server/.server-2026-11-30.jsonl.part")
            case .unknownFiles:
                try manager.createDirectory(atPath: folder + "/server", withIntermediateDirectories: true)
                try manager.copyItem(atPath: Workspace.sampleData + "/server/server-2026-11-28.jsonl", toPath: folder + "/server/server-2026-11-30.json")
                try "exported by hand\n".write(toFile: folder + "/README.txt", atomically: true, encoding: .utf8)
            }
        }
    }

    @Test("a newest day folder holding no source file has not landed: nightly re-reports the night before and warns naming it, --date exits 3, backfill skips it",
          arguments: UnlandedPartition.allCases)
    func unlandedPartition(_ unlanded: UnlandedPartition) throws {
        let work = try Workspace()
        let (root, db, common) = try Self.nights(in: work)
        #expect(work.iaprecon(["nightly"] + common).code == 0)
        try unlanded.make(root + "/2026-11-30")

        let night = work.iaprecon(["nightly"] + common)
        #expect(night.code == 0)
        let warning = "no partition after \(root)/2026-11-29 (\(root)/2026-11-30 holds no source file), which run 1 ("
        let lines = night.err.split(separator: "\n").map(String.init)
        #expect(lines.count == 1, "\(night.err)")
        #expect(lines.first?.hasPrefix("Warning: " + warning) == true, "\(night.err)")
        #expect(lines.first?.hasSuffix(" UTC) already reported; reporting it again") == true, "\(night.err)")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: work.path("reports/latest")) == "2026-11-29")
        #expect(!FileManager.default.fileExists(atPath: work.path("reports/2026-11-30")))
        let runs = try Self.runMessages(db)
        #expect(runs.count == 2)
        #expect(runs.last?.hasPrefix("2026-11-29 ok 0: " + warning) == true, "\(runs)")
        #expect(try Self.logs(work).last?.contains(" Warning: " + warning) == true)

        let dated = work.iaprecon(["nightly", "--date", "2026-11-30"] + common)
        #expect(dated.code == 3)
        #expect(dated.err == "Error: cannot read \(root)/2026-11-30: no partition for --date 2026-11-30 (the folder holds no source file)\n")
        #expect(!FileManager.default.fileExists(atPath: work.path("reports/2026-11-30")))

        let backfill = work.iaprecon(["backfill", "--from", "2026-11-29", "--to", "2026-11-30"] + common)
        #expect(backfill.code == 0)
        #expect(backfill.err == "Warning: no partition \(root)/2026-11-30 (the folder holds no source file); that night is skipped\n")
        #expect(!FileManager.default.fileExists(atPath: work.path("reports/2026-11-30")))
        #expect(try Self.runMessages(db).last == "2026-11-29 ok 0: no partition \(root)/2026-11-30 (the folder holds no source file); that night is skipped")
    }

    @Test("a day folder holding one source file has landed, an empty file too, after a folder that has not; a first night names the folder too; no day landed is exit 3")
    func landedPartitionNearMiss() throws {
        let work = try Workspace()
        let (root, db, common) = try Self.nights(in: work)
        // Nothing reported yet: the night before is reported, and the folder named.
        try UnlandedPartition.emptyFolder.make(root + "/2026-11-30")
        let first = work.iaprecon(["nightly"] + common)
        #expect(first.code == 0)
        #expect(first.err == "Warning: no partition after \(root)/2026-11-29 (\(root)/2026-11-30 holds no source file); reporting 2026-11-29\n")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: work.path("reports/latest")) == "2026-11-29")

        // A source file, even one not written to yet, is a partition: the night is 12-01's, past the empty 11-30,
        // which it names: its day is reported without it.
        try FileManager.default.createDirectory(atPath: root + "/2026-12-01/registrations", withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: root + "/2026-12-01/registrations/signups-2026-12-01.jsonl", contents: nil))
        let night = work.iaprecon(["nightly"] + common)
        #expect(night.code == 0)
        let skipped = "no partition \(root)/2026-11-30 (the folder holds no source file) before \(root)/2026-12-01: "
            + "that day is reported without its partition (a night after it lands reads it, and restates its day)"
        #expect(night.err == "Warning: " + skipped + "\n")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: work.path("reports/latest")) == "2026-12-01")
        #expect(work.iaprecon(["nightly", "--date", "2026-12-01"] + common).err == "Warning: " + skipped + "\n")
        #expect(try Self.runMessages(db).suffix(2) == ["2026-12-01 ok 0: " + skipped, "2026-12-01 ok 0: " + skipped])

        // A root whose only day folder holds no source file has no night to report.
        try UnlandedPartition.unknownFiles.make(work.path("late/2026-11-30"))
        let none = work.iaprecon(["nightly", "--root", work.path("late"), "--db", work.path("late.sqlite"), "--reports", work.path("late-reports"),
                                  "--log-dir", work.path("logs"), "--quiet"])
        #expect(none.code == 3)
        #expect(none.err == "Error: cannot read \(work.path("late")): no YYYY-MM-DD partition folder holds a source file "
                + "(\(work.path("late"))/2026-11-30 holds none)\n")
        #expect(!FileManager.default.fileExists(atPath: work.path("late.sqlite")))
    }

    /// The pid of a process that has ended.
    static func deadPid() throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        return process.processIdentifier
    }

    @Test("a night removes what killed runs left beside the store and in the reports folder, and says so in its log; a live run's and others' files stay")
    func killedRunsLeftovers() throws {
        let work = try Workspace()
        let (_, db, common) = try Self.nights(in: work)
        let manager = FileManager.default
        let reports = work.path("reports")
        #expect(work.iaprecon(["nightly"] + common).code == 0)
        let dead = try Self.deadPid()
        // A replayed night (the store holds 11-29), its scratch store copied as a run killed then would leave it.
        let console = Console.capturing()
        var copied: [String] = []
        console.checkpoint = { point in
            guard point == "run done" else { return }
            for suffix in [".sqlite", ".sqlite-wal", ".sqlite-shm", ".sqlite.lock"] {
                let path = db + ".replay-\(dead)" + suffix
                if (try? manager.copyItem(atPath: db + ".replay-\(getpid())" + suffix, toPath: path)) != nil { copied.append(path) }
            }
        }
        #expect(IAPReconCLI.run(["nightly", "--date", "2026-11-28"] + common, console: console) == 0)
        #expect(copied.count >= 2, "\(copied)")
        // A first night into a missing day folder killed before it renamed its staging folder into place, and one killed
        // between making latest's new link and renaming it.
        try manager.copyItem(atPath: reports + "/2026-11-28", toPath: reports + "/.2026-11-30.tmp-\(dead)")
        #expect(symlink("2026-11-30", reports + "/.latest.tmp-\(dead)") == 0)
        let left = copied + [reports + "/.2026-11-30.tmp-\(dead)", reports + "/.latest.tmp-\(dead)"]

        // What no killed run of this store left: a live run's staging folder, a folder iaprecon did not make, another store's
        // scratch store, a name that only looks like one.
        let live = Process()
        live.executableURL = URL(fileURLWithPath: "/bin/sleep")
        live.arguments = ["600"]
        // Never the test's output: a child left holding it would keep `swift test` waiting for its end.
        live.standardOutput = FileHandle.nullDevice
        live.standardError = FileHandle.nullDevice
        try live.run()
        defer {
            kill(live.processIdentifier, SIGKILL)
            live.waitUntilExit()
        }
        try manager.copyItem(atPath: reports + "/2026-11-28", toPath: reports + "/.2026-12-01.tmp-\(live.processIdentifier)")
        try manager.createDirectory(atPath: reports + "/.2026-12-02.tmp-\(dead)", withIntermediateDirectories: true)
        try manager.copyItem(atPath: db, toPath: work.path("other.sqlite.replay-\(dead).sqlite"))
        try manager.copyItem(atPath: db, toPath: db + ".replay-\(dead).sqlite.bak")
        try manager.copyItem(atPath: db, toPath: db + ".replay-\(dead)x.sqlite")
        let kept = [reports + "/.2026-12-01.tmp-\(live.processIdentifier)", reports + "/.2026-12-02.tmp-\(dead)", work.path("other.sqlite.replay-\(dead).sqlite"),
                    db + ".replay-\(dead).sqlite.bak", db + ".replay-\(dead)x.sqlite"]

        let night = work.iaprecon(["nightly", "--date", "2026-11-29"] + common)
        #expect(night.code == 0)
        #expect(night.err == "")
        for path in left { #expect(!manager.fileExists(atPath: path) && (try? manager.destinationOfSymbolicLink(atPath: path)) == nil, "\(path)") }
        for path in kept { #expect(manager.fileExists(atPath: path), "\(path)") }
        let log = try #require(try Self.logs(work).last)
        for path in left { #expect(log.contains(" removed \(path), left by pid \(dead), which is gone\n"), "\(path)") }
        for path in kept { #expect(!log.contains(path), "\(path)") }
        // The next night has nothing left to remove; nor has a backfill's second night when its first removed it.
        #expect(symlink("2026-11-30", reports + "/.latest.tmp-\(dead)") == 0)
        #expect(work.iaprecon(["backfill", "--from", "2026-11-28", "--to", "2026-11-29"] + common).code == 0)
        let logs = try Self.logs(work)
        #expect(logs.filter { $0.contains("left by pid") }.count == 2)
        #expect(logs.last?.contains("left by pid") == false)
        #expect(logs.dropLast().last?.contains(" removed \(reports)/.latest.tmp-\(dead), left by pid \(dead), which is gone\n") == true)
    }
}
