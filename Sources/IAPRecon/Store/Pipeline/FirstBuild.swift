import Foundation

/// A new store's first build, written without waiting for the disk until it is whole.
///
/// A store's writes wait for the disk at each of SQLite's checkpoints (`synchronous = NORMAL`), so that a
/// power loss never leaves it damaged: the store keeps history the input folder may no longer hold. A store
/// that holds no table yet has nothing to lose, and a first run writes the whole input into it, a checkpoint
/// every few megabytes. So a run's first build of a store writes with `synchronous = OFF` and waits for the
/// disk once, when the join is done and before any report is published from it (`finish`).
///
/// A note beside the store (`<store>.unsynced`, on the disk before the build's first write) names the boot
/// of the machine the build runs on. A build that does not finish leaves it:
/// - killed, on the same boot: the kernel holds every write the build made, so the store is as whole as
///   after any killed run. The next writer syncs it, removes the note and goes on from what it holds.
/// - cut short by a crash or power loss (the note names another boot): what the build wrote may never have
///   reached the disk, in any order, so the store may be damaged in ways no check is sure to find. The next
///   writer empties it and builds it again from the input; a reader refuses it.
public enum FirstBuild {
    /// Starts a first build on `database`, whose store holds no table yet and whose log is WAL already: writes the
    /// note and waits for it to reach the disk, then turns the connection's syncs off. Nothing, and the build waits for
    /// the disk as any run's does, when the machine's boot cannot be told apart from the next one, or the note cannot
    /// be written and synced there (a read-only folder, a file system that cannot sync a folder): the shortcut never
    /// fails a run. The caller holds the store's lock.
    static func start(_ database: Database) throws {
        guard let boot = currentBoot() else { return }
        let path = notePath(database.path)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return }
        let text = "boot \(boot)\npid \(getpid()), started \(Timestamp.iso8601(RunLog.nowMs()))\n"
        let written = text.withCString { write(descriptor, $0, strlen($0)) }
        let synced = written == text.utf8.count && fsync(descriptor) == 0
        close(descriptor)
        guard synced, (try? syncFolder(of: path, store: database.path)) != nil else {
            unlink(path)
            return
        }
        try database.execute("PRAGMA synchronous = OFF")
    }

    /// Ends the first build under way on `database`'s store, if one is: its later writes wait for the disk
    /// again, its files are synced to the disk, and then the note is removed. Nothing for any other store.
    public static func finish(_ database: Database) throws {
        let note = notePath(database.path)
        guard isNote(note) else { return }
        try database.execute("PRAGMA synchronous = NORMAL")
        try syncStore(databasePath: database.path)
        try remove(note, store: database.path)
        Trace.mark("first build synced to disk")
    }

    /// What taking the store's lock does with a note an earlier build left (`RunLock`), before the store is opened:
    /// on the same boot, syncs the store and removes the note; from another boot (or a note it cannot read),
    /// empties the store and removes its journal files and the note. Returns a warning when it emptied it.
    static func recover(databasePath: String) throws -> String? {
        let note = notePath(databasePath)
        guard isNote(note) else { return nil }
        let noted = noteText(note)
        if let boot = currentBoot(), noted.boot == boot {
            try syncStore(databasePath: databasePath)
            try remove(note, store: databasePath)
            return nil
        }
        let real = RunLock.realPath(databasePath)
        guard truncate(real, 0) == 0 || errno == ENOENT else { throw failure(databasePath, "cannot empty it") }
        for suffix in ["-wal", "-shm", "-journal"] { unlink(real + suffix) }
        try syncStore(databasePath: databasePath)
        try remove(note, store: databasePath)
        return "the store's first build (\(noted.started ?? "start unknown")) was cut short by a restart of the machine before what it "
            + "wrote reached the disk: the store was emptied and is built again from the input"
    }

    /// Refuses, for a reader, a store whose first build was cut short by a restart of the machine (`recover`).
    static func checkReadable(databasePath: String) throws {
        let note = notePath(databasePath)
        guard isNote(note) else { return }
        if let boot = currentBoot(), noteText(note).boot == boot { return }
        throw StoreError(path: databasePath, reason: "its first build was cut short by a restart of the machine before what it wrote "
                         + "reached the disk; the next 'iaprecon run' (or nightly) builds it again")
    }

    /// Whether a note is at `path`: a file, not whatever else a person put there, which no build wrote.
    private static func isNote(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG
    }

    /// The note beside the store's real path, where every symlink to the store finds it.
    static func notePath(_ databasePath: String) -> String {
        RunLock.realPath(databasePath) + ".unsynced"
    }

    /// This boot of the machine: Linux's random id, new at each boot. Nil where there is none.
    static func currentBoot() -> String? {
        guard let text = try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8) else { return nil }
        let boot = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return boot.isEmpty ? nil : boot
    }

    /// The boot and start a note names; nil for what it does not say.
    private static func noteText(_ path: String) -> (boot: String?, started: String?) {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return (nil, nil) }
        let lines = text.split(separator: "\n")
        let boot = lines.first { $0.hasPrefix("boot ") }.map { String($0.dropFirst(5)) }
        let started = lines.first { $0.hasPrefix("pid ") }.flatMap { line in line.range(of: "started ").map { String(line[$0.upperBound...]) } }
        return (boot, started)
    }

    /// Syncs the store file and its write-ahead log, when there is one, and the folder that names them.
    private static func syncStore(databasePath: String) throws {
        let real = RunLock.realPath(databasePath)
        for path in [real, real + "-wal"] {
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            if descriptor < 0, errno == ENOENT { continue }
            guard descriptor >= 0 else { throw failure(databasePath, "cannot open \(path)") }
            defer { close(descriptor) }
            guard fsync(descriptor) == 0 else { throw failure(databasePath, "cannot sync \(path) to the disk") }
        }
        try syncFolder(of: real, store: databasePath)
    }

    /// Removes the note, and waits for the removal to reach the disk: a note that came back after a power loss
    /// would empty a finished store.
    private static func remove(_ note: String, store databasePath: String) throws {
        guard unlink(note) == 0 || errno == ENOENT else { throw failure(databasePath, "cannot remove \(note)") }
        try syncFolder(of: note, store: databasePath)
    }

    private static func syncFolder(of path: String, store databasePath: String) throws {
        let folder = PathParent.of(path)
        let descriptor = open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure(databasePath, "cannot open its folder \(folder)") }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw failure(databasePath, "cannot sync its folder \(folder) to the disk") }
    }

    /// What failed on the store at `databasePath`, with the system's reason.
    private static func failure(_ databasePath: String, _ what: String) -> StoreError {
        StoreError(path: databasePath, reason: "\(what): \(String(cString: strerror(errno)))")
    }
}
