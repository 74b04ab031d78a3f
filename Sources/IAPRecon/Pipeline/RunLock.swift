import Foundation

/// Another run holds the store (exit code 4).
public struct LockedError: Error, CustomStringConvertible, Sendable {
    public var lockPath: String
    public var holder: String
    public var description: String { "another run holds the database (\(holder)); lock file \(lockPath)" }
}

/// One run at a time per store: an exclusive `flock` on `<db>.lock`.
///
/// The kernel releases a `flock` when its process dies, so a run killed by
/// SIGKILL never blocks the next night; no cleanup code is involved. The
/// file's text names the holder for the message a second run prints.
public final class RunLock {
    private let descriptor: Int32
    public let path: String

    public init(databasePath: String, command: String) throws {
        path = databasePath + ".lock"
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw OutputError(path: path, reason: String(cString: strerror(errno))) }
        if flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            var buffer = [UInt8](repeating: 0, count: 512)
            let count = pread(descriptor, &buffer, buffer.count, 0)
            close(descriptor)
            let holder = count > 0 ? String(decoding: buffer.prefix(count), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) : "unknown holder"
            throw LockedError(lockPath: path, holder: holder)
        }
        self.descriptor = descriptor
        let text = "pid \(getpid()), iaprecon \(command), started \(Timestamp.iso8601(Int64(Date().timeIntervalSince1970 * 1000)))\n"
        ftruncate(descriptor, 0)
        _ = text.withCString { pwrite(descriptor, $0, strlen($0), 0) }
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    /// Who holds the lock of the store at `databasePath` now (the lock file's text), or nil.
    ///
    /// Only looks: a reader such as `history` must never take the lock, even for an instant, or a
    /// nightly run starting at that instant would fail with exit 4. On Linux the kernel's table of
    /// `flock`s (`/proc/locks`) tells; elsewhere, whether the process the file names is alive.
    public static func holder(databasePath: String) -> String? {
        let path = databasePath + ".lock"
        var status = stat()
        guard stat(path, &status) == 0, let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let holder = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if let locks = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) {
            // "1: FLOCK  ADVISORY  WRITE 17618 fe:00:16224270 0 EOF": the last part of field 6 is the inode.
            let inode = String(status.st_ino)
            let held = locks.split(separator: "\n").contains { line in
                let fields = line.split(separator: " ")
                return fields.count > 5 && fields[1] == "FLOCK" && fields[5].split(separator: ":").last.map(String.init) == inode
            }
            return held ? holder : nil
        }
        guard holder.hasPrefix("pid "), let pid = Int32(holder.dropFirst(4).prefix { $0.isNumber }) else { return nil }
        return kill(pid, 0) == 0 || errno == EPERM ? holder : nil
    }
}
