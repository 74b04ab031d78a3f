import Foundation
import IAPRecon

/// What a `nightly` or `backfill` killed before its end (SIGKILL, or a stop signal, which exits at once) leaves where
/// no later run would look for it, removed by the next night that holds the store's lock:
/// - a replay's scratch store beside the store, `<db>.replay-<pid>.sqlite` with its journal files and lock note
///   (`Replay`). A replay runs only while its run holds the store's lock, taken before the replay is chosen, and
///   its run removes it before letting go of the lock (`HeldStore.release`); the caller holds that lock, so every
///   one there is a dead run's.
/// - a first write's staging folder `<reports>/.<YYYY-MM-DD>.tmp-<pid>` (`OutputSet`, which removes only the one of
///   the day it writes, when it writes that day again) and `latest`'s new link `<reports>/.latest.tmp-<pid>`
///   (`NightlyCommand.pointLatest`). A reports folder is not the store's alone (two configs may share one), so the
///   lock does not say those are dead: one is removed only when no process of its pid is alive, and a staging folder
///   only when it carries OutputSet's marker, as OutputSet's own clean-up asks.
enum KilledRunLeftovers {
    /// Removes them; returns each path removed, with the pid of the run that left it.
    static func remove(databasePath: String, outRoot: String) -> [(path: String, pid: Int32)] {
        var removed: [(path: String, pid: Int32)] = []
        // Named as the store is (`Replay` adds to the path it was given).
        let parent = PathParent.of(databasePath)
        let prefix = (databasePath.split(separator: "/").last.map(String.init) ?? databasePath) + ".replay-"
        for name in names(in: parent.isEmpty ? "." : parent) where name.hasPrefix(prefix) {
            let path = parent.isEmpty ? name : parent == "/" ? "/" + name : parent + "/" + name
            guard let pid = replayPid(name.dropFirst(prefix.count)), !isFolder(path) else { continue }
            if unlink(path) == 0 { removed.append((path, pid)) }
        }
        for name in names(in: outRoot) {
            let path = outRoot + "/" + name
            if name.hasPrefix(".latest.tmp-"), let pid = pid(name.dropFirst(".latest.tmp-".count)), isLink(path), !isAlive(pid) {
                if unlink(path) == 0 { removed.append((path, pid)) }
            } else if let pid = stagingPid(name), !isLink(path), isFolder(path), isFile(path + "/" + OutputSet.markerName), !isAlive(pid) {
                if (try? FileManager.default.removeItem(atPath: path)) != nil { removed.append((path, pid)) }
            }
        }
        return removed.sorted { $0.path < $1.path }
    }

    /// The pid of `<pid>.sqlite<suffix>`, the rest of a scratch store's file name after `<db>.replay-`.
    private static func replayPid(_ rest: Substring) -> Int32? {
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        guard let pid = pid(digits), Replay.fileSuffixes.contains(where: { rest.dropFirst(digits.count) == ".sqlite" + $0 }) else { return nil }
        return pid
    }

    /// The pid of `.<YYYY-MM-DD>.tmp-<pid>`, a staging folder's name (`OutputSet.stagingPath` of a day folder).
    private static func stagingPid(_ name: String) -> Int32? {
        let day = name.dropFirst().prefix(10)
        guard name.hasPrefix("."), SourceFile.isPartitionName(String(day)), name.dropFirst(11).hasPrefix(".tmp-") else { return nil }
        return pid(name.dropFirst(16))
    }

    /// A pid spelled in decimal digits only.
    private static func pid(_ text: Substring) -> Int32? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }), let pid = Int32(text), pid > 0 else { return nil }
        return pid
    }

    /// Whether a process of that pid exists (one of another user's too).
    private static func isAlive(_ pid: Int32) -> Bool {
        kill(pid, 0) == 0 || errno == EPERM
    }

    private static func names(in folder: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    }

    private static func type(_ path: String) -> mode_t? {
        var status = stat()
        return lstat(path, &status) == 0 ? status.st_mode & S_IFMT : nil
    }

    private static func isLink(_ path: String) -> Bool { type(path) == S_IFLNK }
    private static func isFolder(_ path: String) -> Bool { type(path) == S_IFDIR }
    private static func isFile(_ path: String) -> Bool { type(path) == S_IFREG }
}
