import Foundation

/// Whether a command that only reads the store (`history`, `runs`, `check`) may open it as the
/// user it runs as.
///
/// SQLite reads a write-ahead-logged store through two files beside it, `-shm` and `-wal`. A run
/// removes them when it ends; the next connection, reader or writer, makes them again. Made by a
/// reader of another account, they belong to that account, and the store's own next run cannot
/// write them: the night fails. Where the folder is not the reader's to write, SQLite cannot make
/// them at all and says only "attempt to write a readonly database". Either way the reader is
/// refused first, with who may read the store. Root may: SQLite gives the files it makes the
/// store's owner. While a run holds the store its files exist, and a reader allowed to read them
/// makes nothing.
enum ReaderAccess {
    /// Why the user `effectiveUser` cannot read the store at `path` without making files beside
    /// it, or nil when they can. `canWrite` says whether this process may write in a folder.
    static func problem(path: String, effectiveUser: uid_t, canWrite: (String) -> Bool = { access($0, W_OK) == 0 }) -> String? {
        let real = RunLock.realPath(path)
        var store = stat()
        guard stat(real, &store) == 0 else { return nil }
        // Made already (a run holds the store): read as they are, nothing is made.
        if FileManager.default.fileExists(atPath: real + "-shm") { return nil }
        let folder = (real as NSString).deletingLastPathComponent
        if effectiveUser != 0, effectiveUser != store.st_uid {
            let (owner, reader) = (userName(store.st_uid), userName(effectiveUser))
            let asOwner = store.st_uid == 0 ? "as root" : "as \(owner) (sudo -u \(owner) iaprecon …) or as root"
            return "it belongs to \(owner), and reading it as \(reader) would make its -shm and -wal files beside it as \(reader), "
                + "which the store's own runs could not write; run this \(asOwner)"
        }
        if !canWrite(folder) {
            return "SQLite reads it through -shm and -wal files made beside it, and its folder \(folder) "
                + "is not writable by \(userName(effectiveUser)); read a copy in a writable folder, or run this as "
                + "\(userName(store.st_uid))"
        }
        return nil
    }

    /// Why a reader cannot open the store at `path` at all, or nil when the path leads to a file. A folder on the
    /// path closed to the reader (a home or data folder of mode 0700 or 0750) hides the store as a missing one would, but
    /// "run 'iaprecon run' first" would have them build a second store: the reason says which it is.
    static func unreachable(path: String, effectiveUser: uid_t, statError: (String) -> Int32 = ReaderAccess.statError) -> String? {
        switch statError(path) {
        case 0: return nil
        case EACCES:
            return "permission denied: a folder on its path is closed to \(userName(effectiveUser)), so it may be there all the same; "
                + "run this as the account the nightly job runs as (sudo -u <that account> iaprecon …) or as root"
        default: return "no such file; run 'iaprecon run' or 'iaprecon ingest' first"
        }
    }

    /// `stat`'s error for `path`, 0 when it succeeds.
    static func statError(_ path: String) -> Int32 {
        var status = stat()
        return stat(path, &status) == 0 ? 0 : errno
    }

    /// A user's login name, or their number where the system knows no name.
    static func userName(_ user: uid_t) -> String {
        guard let entry = getpwuid(user), let name = entry.pointee.pw_name else { return "uid \(user)" }
        return String(cString: name)
    }
}
