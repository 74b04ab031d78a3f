import Foundation
import Testing
@testable import IAPRecon

/// A store's writers wait for the disk at its checkpoints, which keeps it whole through a power loss, and not
/// at each commit: the report saves a segment per MMP file on a connection of its own.
@Suite("Writer connections")
struct WriterConnectionTests {
    @Test("every writer connection to a store syncs at checkpoints only (synchronous NORMAL), not only the one that turned WAL on")
    func writersSyncAtCheckpoints() throws {
        let path = FileManager.default.temporaryDirectory.path + "/iaprecon-writers-\(UUID().uuidString).sqlite"
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let store = try Store.open(path: path)
        #expect(try store.scalar("PRAGMA synchronous") == .integer(1))
        let second = try Database(path: path)
        #expect(try second.scalar("PRAGMA synchronous") == .integer(1))
        try second.execute("CREATE TABLE t (x); INSERT INTO t VALUES (1)")
        #expect(try store.scalar("SELECT count(*) FROM t") == .integer(1))
    }
}
