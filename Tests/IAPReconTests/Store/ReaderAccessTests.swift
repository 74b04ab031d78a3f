import Foundation
import Testing
@testable import IAPRecon

/// A command that reads the store as another account would make its -shm and -wal files as that
/// account, and the store's next run could not write them: it is refused first, saying who may read.
@Suite("Reading a store as another user")
struct ReaderAccessTests {
    /// A written store in a folder of its own, closed, so no -shm or -wal is beside it.
    static func closedStore() throws -> (folder: String, path: String, owner: uid_t) {
        let folder = FileManager.default.temporaryDirectory.path + "/iaprecon-readers-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/s.sqlite"
        do {
            let store = try Store.open(path: path)
            try store.execute("INSERT INTO runs (command, started_ms, status) VALUES ('run', 0, 'ok')")
        }
        #expect(!FileManager.default.fileExists(atPath: path + "-shm"))
        var status = stat()
        #expect(stat(path, &status) == 0)
        return (folder, path, status.st_uid)
    }

    @Test("another user is refused, naming the owner and how to run as them; the owner, root, or a store a run holds open are read")
    func anotherUser() throws {
        let (folder, path, owner) = try Self.closedStore()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let other: uid_t = owner == 65_534 ? 65_533 : 65_534
        let (ownerName, otherName) = (ReaderAccess.userName(owner), ReaderAccess.userName(other))
        let asOwner = owner == 0 ? "as root" : "as \(ownerName) (sudo -u \(ownerName) iaprecon …) or as root"
        #expect(ReaderAccess.problem(path: path, effectiveUser: other) == "it belongs to \(ownerName), and reading it as \(otherName) would "
                + "make its -shm and -wal files beside it as \(otherName), which the store's own runs could not write; run this \(asOwner)")
        // Near misses: the owner, and root, whose files SQLite gives the store's owner.
        #expect(ReaderAccess.problem(path: path, effectiveUser: owner) == nil)
        #expect(ReaderAccess.problem(path: path, effectiveUser: 0) == nil)
        // A missing store is `Store.open`'s to name.
        #expect(ReaderAccess.problem(path: folder + "/missing.sqlite", effectiveUser: other) == nil)
        // A symlink to the store is the store.
        try FileManager.default.createSymbolicLink(atPath: folder + "/link.sqlite", withDestinationPath: path)
        #expect(ReaderAccess.problem(path: folder + "/link.sqlite", effectiveUser: other)?.hasPrefix("it belongs to") == true)
        // A run holds the store: its -shm is there, and a reader allowed to read it makes nothing.
        let writer = try Store.open(path: path)
        try writer.execute("BEGIN; INSERT INTO runs (command, started_ms, status) VALUES ('run', 1, 'running')")
        #expect(FileManager.default.fileExists(atPath: path + "-shm"))
        #expect(ReaderAccess.problem(path: path, effectiveUser: other) == nil)
        try writer.execute("ROLLBACK")
    }

    @Test("a store behind a folder the reader cannot search is said to be out of reach, not missing")
    func closedFolder() throws {
        // A store folder closed to others (mode 0700 or 0750): support running `history` as themselves cannot search
        // it, and `stat` fails with EACCES, not ENOENT. "run 'iaprecon run' first" would send them to build a second
        // store.
        let reader: uid_t = 65_534
        let name = ReaderAccess.userName(reader)
        #expect(ReaderAccess.unreachable(path: "/var/lib/iaprecon/iaprecon.sqlite", effectiveUser: reader, statError: { _ in EACCES })
                == "permission denied: a folder on its path is closed to \(name), so it may be there all the same; run this as the "
                + "account the nightly job runs as (sudo -u <that account> iaprecon …) or as root")
        // Near misses: a store that is not there is missing; one that is there is no concern of this check.
        #expect(ReaderAccess.unreachable(path: "/tmp/none.sqlite", effectiveUser: reader, statError: { _ in ENOENT })
                == "no such file; run 'iaprecon run' or 'iaprecon ingest' first")
        let (folder, path, _) = try Self.closedStore()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(ReaderAccess.unreachable(path: path, effectiveUser: reader) == nil)
        #expect(ReaderAccess.unreachable(path: folder + "/missing.sqlite", effectiveUser: reader)
                == "no such file; run 'iaprecon run' or 'iaprecon ingest' first")
    }

    @Test("the owner in a folder they cannot write is told to read a copy; a folder they can write is no problem")
    func unwritableFolder() throws {
        let (folder, path, owner) = try Self.closedStore()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let name = ReaderAccess.userName(owner)
        let real = RunLock.realPath(path)
        let realFolder = (real as NSString).deletingLastPathComponent
        #expect(ReaderAccess.problem(path: path, effectiveUser: owner, canWrite: { $0 != realFolder })
                == "SQLite reads it through -shm and -wal files made beside it, and its folder \(realFolder) is not writable by \(name); "
                + "read a copy in a writable folder, or run this as \(name)")
        #expect(ReaderAccess.problem(path: path, effectiveUser: owner, canWrite: { _ in true }) == nil)
    }
}
