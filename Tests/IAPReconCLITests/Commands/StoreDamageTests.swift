import Foundation
import Testing
@testable import IAPRecon
@testable import IAPReconCLI

/// A damaged store never passes for a good one: whatever page is hit, `run` exits 1 with a one-line reason.
@Suite("Damaged store")
struct StoreDamageTests {
    /// Overwrites page `page` (0-based, 4 KB) of the file at `path` with bytes that depend on `page` only.
    static func damage(_ path: String, page: Int) throws {
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        defer { try? handle.close() }
        var state = UInt64(page) &* 0x9E37_79B9_7F4A_7C15 &+ 1
        let noise = (0..<4096).map { _ -> UInt8 in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
        try handle.seek(toOffset: UInt64(page * 4096))
        handle.write(Data(noise))
    }

    /// Whether the store at `path` is found damaged within `turns` more turns of the runs' check (`Store.checkTurn`).
    static func foundWithin(turns: Int64, _ path: String) -> Bool {
        for _ in 0..<turns {
            do {
                let database = try Database(path: path)
                try Store.recordChecked(database, try Store.checkTurn(database))
            } catch let error as StoreError {
                return error.reason.hasPrefix("damaged (")
            } catch let error as SQLiteError {
                return error.isDamage
            } catch {
                return false
            }
        }
        return false
    }

    @Test("a store with any one of its pages overwritten: the next run exits 1 with one line, or its check's next turns find it; the undamaged copy exits 0")
    func damagedPages() throws {
        let work = try Workspace()
        let base = work.path("base.sqlite")
        let first = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", base, "--out", work.path("out"), "--quiet"])
        try #require(first.code == 0)
        #expect(!FileManager.default.fileExists(atPath: base + "-wal"), "the store is whole in its main file")
        let pages = try #require(try FileManager.default.attributesOfItem(atPath: base)[.size] as? Int) / 4096
        #expect(pages > 40)

        let intact = work.path("intact.sqlite")
        try FileManager.default.copyItem(atPath: base, toPath: intact)
        #expect(work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", intact, "--out", work.path("out"), "--quiet"]).code == 0)
        #expect(!Self.foundWithin(turns: Store.checkTurns, intact))

        // Every third page: raw tables a night does not read, indexes, the tables it does read, the header.
        var foundByTheRun = 0
        for page in stride(from: 0, to: pages, by: 3) {
            let copy = work.path("damaged-\(page).sqlite")
            try FileManager.default.copyItem(atPath: base, toPath: copy)
            try Self.damage(copy, page: page)
            let result = work.iaprecon(["run", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", copy, "--out", work.path("out-\(page)"), "--quiet"])
            if result.code == 1 {
                foundByTheRun += 1
                #expect(result.err.hasPrefix("Error: ") && result.err.split(separator: "\n").count == 1, "page \(page): \(result.err)")
                #expect(!result.err.contains("***"), "page \(page): \(result.err)")
            } else {
                // Neither the run nor its turn read that page: the turns after it do, within a rotation.
                #expect(result.code == 0, "page \(page): exit \(result.code): \(result.err)")
                #expect(Self.foundWithin(turns: Store.checkTurns - 1, copy), "page \(page): not found by the next turns")
            }
        }
        #expect(foundByTheRun > 0)
    }

    @Test("each turn of the runs' check reads about a seventh of the store, least recently checked tables first, and seven turns check every table")
    func checkTurns() throws {
        let work = try Workspace()
        let path = work.path("s.sqlite")
        let built = work.iaprecon(["ingest", "--input", Workspace.sampleData, "--trust-root", Workspace.sampleRoot, "--db", path, "--quiet"])
        try #require(built.code == 0)
        let database = try Database(path: path)
        var tablePages: [String: Int64] = [:]
        try database.forEach("""
            SELECT m.tbl_name, count(*) FROM dbstat d JOIN sqlite_master m ON m.name = d.name
            WHERE m.tbl_name NOT LIKE 'sqlite%' GROUP BY m.tbl_name
            """) { tablePages[$0.string(0)] = $0.int(1) }
        let storePages = try database.scalar("PRAGMA page_count").integerValue
        let share = (storePages + Store.checkTurns - 1) / Store.checkTurns
        let largest = try #require(tablePages.values.max())
        #expect(largest < storePages / 2, "the store is not spread over tables enough for this test")

        var checkedOnce: [String] = []
        for turn in 1...Store.checkTurns {
            let checked = try Store.checkTurn(database)
            try Store.recordChecked(database, checked)
            let read = checked.reduce(0) { $0 + $1.pages }
            // Its share, give or take one table's pages; the pages no table holds (freelist, schema) are `check`'s.
            #expect(read <= 2 * share + largest, "turn \(turn) read \(read) of \(storePages) pages")
            #expect(!checked.isEmpty)
            // No table is checked again before every other one was.
            #expect(Set(checked.map(\.table)).isDisjoint(with: checkedOnce) || Set(checkedOnce) == Set(tablePages.keys), "turn \(turn)")
            checkedOnce += checked.map(\.table)
        }
        #expect(Set(checkedOnce) == Set(tablePages.keys))

        // The turn after a rotation starts again with the table checked longest ago.
        let stored = try database.scalar("SELECT count(*) FROM store_checks").integerValue
        #expect(stored == Int64(tablePages.count))
        guard case .text(let oldest)? = try database.scalar("SELECT table_name FROM store_checks ORDER BY turn, table_name LIMIT 1") else {
            Issue.record("no table checked")
            return
        }
        let next = try Store.checkTurn(database)
        #expect(next.first?.table == oldest)
    }
}
