import Foundation

/// Another run holds the store (exit code 4).
public struct LockedError: Error, CustomStringConvertible, Sendable {
    public var databasePath: String
    public var holder: String
    public var description: String { "another run holds the database (\(holder))" }
}

/// One run at a time per store: an exclusive `flock` on the store file itself.
///
/// The lock belongs to the file, not to the name it was given by: a symlink or a hard link to the
/// store opens the same inode, and `flock` conflicts per inode, so two runs through two names of
/// one store cannot both write it (SQLite keeps its journal beside the name it was opened by, so
/// two writers through two hard links would corrupt it). SQLite's own locks are POSIX record
/// locks, which never conflict with a `flock`; the lock's descriptor stays open until the run
/// has closed its connections, since closing a descriptor of the file drops the process's
/// POSIX locks on it. A run that made the store file to lock it may remove it again while it holds
/// it (`removeMadeStore`), so a lock is only ever held on the file still at the store's path.
///
/// The kernel releases a `flock` when its process dies, so a run killed by SIGKILL never blocks
/// the next night; no cleanup code is involved. A note beside the store's real path
/// (`<store>.lock`) names the holder for the message a second run prints; the holder's pid
/// comes from the kernel's table of locks where there is one, so a run through another hard
/// link is named too.
public final class RunLock {
    private let descriptor: Int32
    /// The holder's note: `<store>.lock` beside the store's real path.
    public let path: String
    /// The store file taking the lock made (there was none at its path, or the symlink there led to
    /// none), which `removeMadeStore` may remove again; nil when the file was there.
    private let madeFile: String?
    private let databasePath: String
    /// Whether taking the lock made the note (there was none from an earlier holder), which `removeMadeNote` may remove.
    private let madeNote: Bool

    /// Whether taking the lock made the store file.
    public var madeStore: Bool { madeFile != nil }

    /// A warning when taking the lock emptied the store: its first build was cut short by a restart of the machine
    /// (`FirstBuild.recover`, which the lock runs once it holds the store, so that every writer and every check of
    /// a writer meets the store as the next run will).
    public private(set) var emptiedFirstBuild: String?

    /// How far the run holding the lock has gone in writing the store (`startsRun`, `storesInputs`), which says whether
    /// a store file the lock made is still the run's to remove (`removeMadeStore`).
    private var written = Written.nothing

    private enum Written {
        /// Not a byte: whatever the file holds, another writer put there.
        case nothing
        /// The store's schema and the run's own row of `runs`, nothing it read.
        case runStart
        /// What the run read: the store is kept from here on, whatever stops the run.
        case inputs
    }

    /// Locks the store at `databasePath`, creating an empty store file first when `createStore`
    /// is true (commands that only work on what a store holds pass false and get `StoreError`).
    /// `checkpoint` is told each point of the locking a test may act at (`store opened`: the file at the path is
    /// open and not locked yet); nothing otherwise.
    public convenience init(databasePath: String, command: String, createStore: Bool = true,
                            checkpoint: (String) -> Void = { _ in }) throws {
        try self.init(databasePath: databasePath, command: command, createStore: createStore, checkpoint: checkpoint,
                      lock: Self.exclusiveLock)
    }

    /// As the public initializer, the file locked by `lock` (a test's stand-in for a file system that
    /// refuses `flock`).
    convenience init(databasePath: String, command: String, createStore: Bool = true,
                     checkpoint: (String) -> Void = { _ in }, lock: (Int32) -> Int32) throws {
        guard let file = try Self.lockFile(databasePath: databasePath, create: createStore, checkpoint: checkpoint, lock: lock) else {
            throw StoreError(path: databasePath, reason: "no such file; run 'iaprecon run' or 'iaprecon ingest' first")
        }
        try self.init(locked: file.descriptor, madeFile: file.made, databasePath: databasePath, command: command)
    }

    /// Locks the store at `databasePath` when there is one; nil when there is no file to lock (for a `backfill`
    /// whose range holds no partition, which makes nothing).
    public static func ifExists(databasePath: String, command: String) throws -> RunLock? {
        try lockFile(databasePath: databasePath, create: false).map {
            try RunLock(locked: $0.descriptor, madeFile: $0.made, databasePath: databasePath, command: command)
        }
    }

    /// Takes the lock of the file now at `descriptor`, which it then owns, names its holder in the note, and deals with
    /// what an earlier first build left (`FirstBuild.recover`). Should that throw, the lock is let go (`deinit`).
    private init(locked descriptor: Int32, madeFile: String?, databasePath: String, command: String) throws {
        self.descriptor = descriptor
        self.madeFile = madeFile
        self.databasePath = databasePath
        path = Self.notePath(databasePath)
        let text = "pid \(getpid()), iaprecon \(command), started \(Timestamp.iso8601(Int64(Date().timeIntervalSince1970 * 1000)))\n"
        var note = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        madeNote = note >= 0
        if !madeNote { note = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600) }
        if note >= 0 {
            _ = text.withCString { write(note, $0, strlen($0)) }
            close(note)
        }
        emptiedFirstBuild = try FirstBuild.recover(databasePath: databasePath)
    }

    /// Takes the store's lock without waiting: fails with EWOULDBLOCK while another run holds it.
    static func exclusiveLock(_ descriptor: Int32) -> Int32 { flock(descriptor, LOCK_EX | LOCK_NB) }

    /// How often a run opens the store again when the file it found or locked has left the store's path (`lockFile`): each time
    /// means another run made and removed the store, or put another file in its place, in the instant between this
    /// run's open and its lock, so a few are plenty; past them the path is named as changing, rather than waited on.
    private static let lockAttempts = 3

    /// Opens the file at `databasePath` (making it first when `create` is true and there is none) and locks it;
    /// nil when there is no file and `create` is false. `made` is the file this call made, if it made one.
    ///
    /// Once locked, the file must still be the one at the path: a run that made the store removes it again while it
    /// holds the lock when a check of its own then refuses it (`removeMadeStore`). A run that opened the file before
    /// that and locks it after would hold a file no other run opens, while the next run makes a new store at the
    /// path and locks that one: two writers. So it lets go and opens the path again.
    private static func lockFile(
        databasePath: String, create: Bool, checkpoint: (String) -> Void = { _ in }, lock: (Int32) -> Int32 = exclusiveLock
    ) throws -> (descriptor: Int32, made: String?)? {
        for _ in 0..<lockAttempts {
            // O_EXCL says whether this run makes the file. It never follows a symlink, so it is given the path a symlink
            // at the store's path leads to: a symlink to a store not made yet makes that file, as any run makes it, and
            // a refused night knows to remove it. A file that is there is opened as any run opens it.
            let target = create ? linkTarget(databasePath) : databasePath
            var descriptor = create ? open(target, O_RDONLY | O_CLOEXEC | O_CREAT | O_EXCL, 0o600) : -1
            let made = descriptor >= 0
            if !made, !create || errno == EEXIST {
                descriptor = open(databasePath, O_RDONLY | O_CLOEXEC, 0)
                // Removed since it was found there (a refused first night's store): this run makes the next one.
                if descriptor < 0, create, errno == ENOENT { continue }
            }
            guard descriptor >= 0 else {
                switch (errno, create) {
                // Only the folder can be missing when the file would be made: run and ingest do not make folders.
                case (ENOENT, true): throw StoreError(path: databasePath, reason: Self.missingFolder(target))
                case (ENOENT, false): return nil
                default: throw StoreError(path: databasePath, reason: String(cString: strerror(errno)))
                }
            }
            var status = stat()
            guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
                close(descriptor)
                throw StoreError(path: databasePath, reason: "not a regular file")
            }
            checkpoint("store opened")
            if lock(descriptor) != 0 {
                let failure = errno
                close(descriptor)
                // Only a lock another process holds is a run to wait for; any other failure (a network file
                // system without locking answers ENOLCK) recurs every night and is the operator's to fix.
                guard failure == EWOULDBLOCK else {
                    if made { unlink(target) }
                    throw StoreError(path: databasePath, reason: "cannot lock it: \(String(cString: strerror(failure))) "
                        + "(keep the store on a file system with flock(2), such as a local disk)")
                }
                let holder = Self.describeHolder(inode: status.st_ino, device: status.st_dev, notePath: Self.notePath(databasePath))
                throw LockedError(databasePath: databasePath, holder: holder ?? "unknown holder")
            }
            if isFile(status, at: databasePath) { return (descriptor, made ? target : nil) }
            close(descriptor)
        }
        throw StoreError(path: databasePath, reason: "it was removed or replaced each time this run locked it")
    }

    /// Says the run holding the lock is about to set the store up and record itself in it: the schema and its row of
    /// `runs`, which are no reason to keep a store the lock made if the run then stops before it stores what it read.
    public func startsRun() {
        if written == .nothing { written = .runStart }
    }

    /// Says the run holding the lock is about to store what it read: from here on the store is kept, whatever stops
    /// the run, a kill or an error, since the next run reads on from what it holds.
    public func storesInputs() {
        written = .inputs
    }

    /// Removes the store file this lock made, its journal files, and the holder's note, while the lock still holds the
    /// file: for a command that locks the store before checks of its own (`nightly` and `backfill`, on a store that does
    /// not exist yet) and is refused by one, or stops before it stored anything it read, so that it leaves no store
    /// behind. Nothing when the file was there before the lock, is no longer the one at the path, or holds what the run
    /// read (`storesInputs`), or anything at all before the run started writing it (`startsRun`). The caller has closed
    /// its connections to the store. Returns whether it removed the store.
    @discardableResult
    public func removeMadeStore() -> Bool {
        var status = stat()
        guard let madeFile, written != .inputs, locks(databasePath: databasePath), fstat(descriptor, &status) == 0,
              written == .runStart || status.st_size == 0 else { return false }
        // The note first: once the store is gone, the next run makes one at the path and writes its own note. Its journal
        // files go before the store for the same reason: a run that makes the next store at the path makes its own.
        unlink(path)
        unlink(FirstBuild.notePath(databasePath))
        for suffix in ["-wal", "-shm", "-journal"] { unlink(madeFile + suffix) }
        unlink(madeFile)
        return true
    }

    /// Removes the holder's note when taking the lock made it, while the lock still holds the file at the store's path:
    /// for a command refused once it holds the store (a stage, on a store no run has written), which then leaves beside
    /// it no file it did not find. A note an earlier holder left stays, naming this one until the next.
    public func removeMadeNote() {
        guard madeNote, locks(databasePath: databasePath) else { return }
        unlink(path)
    }

    /// The path a symlink at `path` leads to, through a chain of them, whether or not a file is there; `path` itself
    /// when it is no symlink. Past as many links as the kernel follows, opening the path fails with ELOOP anyway.
    private static func linkTarget(_ path: String) -> String {
        var current = path
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
        for _ in 0..<40 {
            let length = readlink(current, &buffer, buffer.count)
            guard length > 0 else { return current }
            let target = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let folder = PathParent.of(current)
            current = target.hasPrefix("/") || folder.isEmpty ? target : folder + (folder.hasSuffix("/") ? "" : "/") + target
        }
        return current
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    /// Whether this is the lock of the file now at `databasePath` (the same file, not one put in its place since).
    public func locks(databasePath: String) -> Bool {
        var held = stat()
        return fstat(descriptor, &held) == 0 && Self.isFile(held, at: databasePath)
    }

    /// Whether the file now at `path` is the one `status` describes: the same device and inode.
    private static func isFile(_ status: stat, at path: String) -> Bool {
        var named = stat()
        return stat(path, &named) == 0 && named.st_dev == status.st_dev && named.st_ino == status.st_ino
    }

    private static func missingFolder(_ databasePath: String) -> String {
        "its folder \(PathParent.of(databasePath)) does not exist"
    }

    /// Who holds the lock of the store at `databasePath` now, or nil.
    ///
    /// Only looks: a reader such as `history` must never take the lock, even for an instant, or a
    /// nightly run starting at that instant would fail with exit 4.
    public static func holder(databasePath: String) -> String? {
        var status = stat()
        guard stat(databasePath, &status) == 0 else { return nil }
        return describeHolder(inode: status.st_ino, device: status.st_dev, notePath: notePath(databasePath))
    }

    /// The holder's note lives beside the store's real path, so every symlink finds the same one.
    static func notePath(_ databasePath: String) -> String {
        realPath(databasePath) + ".lock"
    }

    /// The path of the file a store's path names, through any symlinks: where the notes beside a store live.
    static func realPath(_ databasePath: String) -> String {
        URL(fileURLWithPath: databasePath).resolvingSymlinksInPath().path
    }

    /// On Linux the kernel's table of `flock`s (`/proc/locks`) says whether the store's inode is
    /// locked and by which pid; the note adds the command and start time when it is that pid's.
    /// Elsewhere, whether the process the note names is alive.
    static func describeHolder(inode: ino_t, device: dev_t, notePath: String) -> String? {
        let note = (try? String(contentsOfFile: notePath, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        if let locks = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) {
            // "1: FLOCK  ADVISORY  WRITE 17618 fe:00:16224270 0 EOF": field 5 is the pid, field 6 ends with the inode.
            let device = String(format: "%02x:%02x", major(device), minor(device))
            for line in locks.split(separator: "\n") {
                let fields = line.split(separator: " ")
                guard fields.count > 5, fields[1] == "FLOCK" else { continue }
                let place = fields[5].split(separator: ":")
                guard place.count == 3, place[2] == String(inode), place[0] + ":" + place[1] == device else { continue }
                let pid = String(fields[4])
                if let note, note.hasPrefix("pid \(pid),") { return note }
                return "pid \(pid)" + (commandLine(pid: pid).map { ", \($0)" } ?? "")
            }
            return nil
        }
        guard let note, note.hasPrefix("pid "), let pid = Int32(note.dropFirst(4).prefix { $0.isNumber }) else { return nil }
        return kill(pid, 0) == 0 || errno == EPERM ? note : nil
    }

    /// `/proc/<pid>/cmdline` as one line, when readable.
    private static func commandLine(pid: String) -> String? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"), !data.isEmpty else { return nil }
        return data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }.joined(separator: " ")
    }

    /// glibc's `major()` and `minor()` (macros Swift cannot import).
    private static func major(_ device: dev_t) -> UInt64 {
        let value = UInt64(device)
        return (value >> 8) & 0xfff | (value >> 32) & 0xffff_f000
    }

    private static func minor(_ device: dev_t) -> UInt64 {
        let value = UInt64(device)
        return value & 0xff | (value >> 12) & 0xffff_ff00
    }
}
