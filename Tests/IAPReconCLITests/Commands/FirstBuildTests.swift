import Foundation
import Testing
@testable import IAPRecon
@testable import IAPReconCLI

/// A new store's first build writes without waiting for the disk, under a note that says so, and what a build
/// that did not finish leaves is dealt with by the next writer: kept when the machine did not restart since,
/// built again when it did.
@Suite("First build of a store")
struct FirstBuildTests {
    private static func run(_ work: Workspace, db: String, out: String) -> (code: Int32, out: String, err: String) {
        work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path(out), "--quiet"])
    }

    private static func runCount(_ db: String) throws -> Int64 {
        try Store.open(path: db, readOnly: true).scalar("SELECT count(*) FROM runs").integerValue
    }

    /// Whether the first build's note is beside the store at `db`.
    private static func noted(_ db: String) -> Bool {
        FileManager.default.fileExists(atPath: db + ".unsynced")
    }

    private static func synchronous(_ database: Database) throws -> Int64 {
        try database.scalar("PRAGMA synchronous").integerValue
    }

    @Test("a store with no table yet is opened for a run without waiting for the disk, under its note; finish syncs it and removes the note")
    func unsyncedUntilFinished() throws {
        let work = try Workspace()
        let db = work.path("s.sqlite")
        let database = try Store.open(path: db, firstBuildUnsynced: true)
        #expect(Self.noted(db))
        #expect(try work.read("s.sqlite.unsynced").hasPrefix("boot \(try #require(FirstBuild.currentBoot()))\npid \(getpid()), started "))
        #expect(try Self.synchronous(database) == 0)
        try FirstBuild.finish(database)
        #expect(!Self.noted(db))
        #expect(try Self.synchronous(database) == 1)
        // Nothing to finish on a store with no note.
        try FirstBuild.finish(database)
    }

    @Test("a store that holds tables, or one not opened for a run, is written as always: no note, waiting for the disk at checkpoints")
    func syncedOtherwise() throws {
        let work = try Workspace()
        let db = work.path("s.sqlite")
        let made = try Store.open(path: db)
        #expect(!Self.noted(db))
        #expect(try Self.synchronous(made) == 1)
        let again = try Store.open(path: db, firstBuildUnsynced: true)
        #expect(!Self.noted(db))
        #expect(try Self.synchronous(again) == 1)
    }

    @Test("where the note cannot be written, the first build waits for the disk as any run's, and the run goes on")
    func noteUnwritable() throws {
        let work = try Workspace()
        for name in ["opened.sqlite", "run.sqlite"] {
            // Something a person put where the note goes: no build wrote it, none reads or removes it.
            try FileManager.default.createDirectory(atPath: work.path(name + ".unsynced"), withIntermediateDirectories: false)
        }
        let database = try Store.open(path: work.path("opened.sqlite"), firstBuildUnsynced: true)
        #expect(try Self.synchronous(database) == 1)
        try FirstBuild.finish(database)
        let run = Self.run(work, db: work.path("run.sqlite"), out: "out")
        #expect(run.code == 0, "\(run.err)")
        for name in ["opened.sqlite", "run.sqlite"] {
            var isFolder: ObjCBool = false
            #expect(FileManager.default.fileExists(atPath: work.path(name + ".unsynced"), isDirectory: &isFolder) && isFolder.boolValue)
        }
    }

    @Test("a first run leaves no note, and neither does a first run that fails after storing what it read")
    func runsLeaveNoNote() throws {
        let work = try Workspace()
        let db = work.path("s.sqlite")
        #expect(Self.run(work, db: db, out: "out").code == 0)
        #expect(!Self.noted(db))

        let input = work.path("in")
        try FileManager.default.copyItem(atPath: Workspace.sampleData, toPath: input)
        // A source file that cannot be read: the run stores every other file, then stops (exit 3).
        try FileManager.default.createDirectory(atPath: input + "/server/broken.jsonl.gz", withIntermediateDirectories: true)
        let failed = work.path("failed.sqlite")
        let result = work.iaprecon(["run", "--input", input, "--trust-root", Workspace.sampleRoot, "--db", failed, "--out", work.path("out2"), "--quiet"])
        #expect(result.code == 3)
        #expect(try Store.open(path: failed, readOnly: true).scalar("SELECT count(*) FROM files").integerValue > 10)
        #expect(try Self.runCount(failed) == 1)
        #expect(!Self.noted(failed))
    }

    @Test("a build killed on this boot of the machine is kept: the next run syncs it, removes the note and reads on from it")
    func killedOnThisBoot() throws {
        let work = try Workspace()
        let db = work.path("s.sqlite")
        #expect(Self.run(work, db: db, out: "out").code == 0)
        let boot = try #require(FirstBuild.currentBoot())
        try "boot \(boot)\npid 1, started 2026-12-06T01:00:00.000Z\n".write(toFile: db + ".unsynced", atomically: false, encoding: .utf8)
        // A reader on this boot reads it as it is, as any store a killed run left.
        #expect(work.iaprecon(["runs", "--db", db]).code == 0)
        let next = Self.run(work, db: db, out: "out")
        #expect(next.code == 0)
        #expect(!next.err.contains("first build"), "\(next.err)")
        #expect(!Self.noted(db))
        #expect(try Self.runCount(db) == 2)
    }

    @Test("a build cut short by a restart of the machine is refused by readers, and emptied and built again by the next run, which says so")
    func cutShortByRestart() throws {
        let work = try Workspace()
        let clean = work.path("clean.sqlite")
        #expect(Self.run(work, db: clean, out: "clean").code == 0)

        for note in ["boot 00000000-another-boot\npid 1, started 2026-12-06T01:00:00.000Z\n", "boot", ""] {
            let db = work.path("s.sqlite")
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: db + suffix) }
            #expect(Self.run(work, db: db, out: "out").code == 0)
            // What never reached the disk before the restart: a page of garbage in the middle of the store.
            try StoreDamageTests.damage(db, page: 3)
            try note.write(toFile: db + ".unsynced", atomically: false, encoding: .utf8)

            let reader = work.iaprecon(["runs", "--db", db])
            #expect(reader.code == 1)
            #expect(reader.err == "Error: cannot use store \(db): its first build was cut short by a restart of the machine before what it wrote "
                    + "reached the disk; the next 'iaprecon run' (or nightly) builds it again\n", "\(note)")
            #expect(Self.noted(db), "a reader changes nothing")

            let next = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", db, "--out", work.path("out")])
            #expect(next.code == 0, "\(note): \(next.err)")
            let started = note.contains("started") ? "2026-12-06T01:00:00.000Z" : "start unknown"
            #expect(next.err.hasPrefix("Warning: the store's first build (\(started)) was cut short by a restart of the machine before what it "
                    + "wrote reached the disk: the store was emptied and is built again from the input\n"), "\(note)")
            #expect(!Self.noted(db))
            #expect(try Self.runCount(db) == 1, "the emptied build's runs are gone with it")
            for name in ["findings.csv", "transactions.csv", "revenue_daily.csv", "attribution.csv", "summary.json"] {
                #expect(try work.readWithoutHistory("out/" + name) == work.readWithoutHistory("clean/" + name), "\(name)")
            }
            try Store.checkIntegrity(Store.open(path: db, readOnly: true))
        }
    }

    @Test("a night after a first night a restart cut short empties the store before its own checks and builds it again, and its log says so")
    func nightAfterRestart() throws {
        let work = try Workspace()
        let root = try NightlyTests.partitions(in: work)
        let db = work.path("s.sqlite")
        let common = ["--root", root, "--reports", work.path("reports"), "--log-dir", work.path("logs"), "--quiet",
                      "--trust-root", Workspace.sampleRoot, "--db", db]
        #expect(work.iaprecon(["nightly"] + common).code == 0)
        let before = try work.readWithoutHistory("reports/2026-11-29/findings.csv")
        try StoreDamageTests.damage(db, page: 3)
        try "boot 00000000-another-boot\npid 1, started 2026-12-06T01:00:00.000Z\n".write(toFile: db + ".unsynced", atomically: false, encoding: .utf8)

        let night = work.iaprecon(["nightly"] + common)
        #expect(night.code == 0, "\(night.err)")
        #expect(!Self.noted(db))
        #expect(try NightlyTests.runMessages(db).count == 1, "the emptied build's nights are gone with it")
        #expect(try work.readWithoutHistory("reports/2026-11-29/findings.csv") == before)
        let log = try #require(try NightlyTests.logs(work).last)
        #expect(log.contains("Warning: the store's first build (2026-12-06T01:00:00.000Z) was cut short by a restart of the machine"), "\(log)")
    }
}
