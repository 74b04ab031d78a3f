import Foundation
import IAPRecon

/// `--keep-reports <n>`: after a night, removes the day folders of `<reports>` beyond the newest n.
///
/// Only folders iaprecon wrote are candidates: a real folder (not a link) named YYYY-MM-DD that
/// holds OutputSet's marker. Anything else in `<reports>` (a user's files, `latest`, an unmarked
/// folder) is left alone, and so are the folder `latest` points to and every folder from the night
/// just written on: a replayed older night removes nothing newer than itself, so the reports of
/// the nights after it survive until a later night counts them among the newest n again.
enum ReportPruning {
    struct Outcome {
        /// The day folders removed, oldest first.
        var removed: [String] = []
        /// Folders that could not be removed, with the system's reason.
        var failures: [(folder: String, reason: String)] = []
    }

    /// Removes the marked day folders of `outRoot` that are neither among the newest `keep` nor
    /// `latest`'s target, and are older than `written`, the night just written.
    static func prune(outRoot: String, keep: Int, written: String) -> Outcome {
        var outcome = Outcome()
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: outRoot) else {
            outcome.failures.append((outRoot, "cannot list the folder"))
            return outcome
        }
        let days = names.filter { SourceFile.isPartitionName($0) && isMarkedFolder(outRoot + "/" + $0) }.sorted()
        // latest is normally `YYYY-MM-DD`; a link someone made with a path still protects its last name.
        let latest = (try? FileManager.default.destinationOfSymbolicLink(atPath: outRoot + "/latest"))
            .map { String($0.split(separator: "/").last ?? "") }
        let newest = Set(days.suffix(keep))
        for day in days where !newest.contains(day) && day < written && day != latest {
            if let reason = removeFolder(outRoot + "/" + day) {
                outcome.failures.append((outRoot + "/" + day, reason))
            } else {
                outcome.removed.append(day)
            }
        }
        return outcome
    }

    /// A folder (not a link to one) holding OutputSet's marker file.
    private static func isMarkedFolder(_ path: String) -> Bool {
        var status = stat()
        var marker = stat()
        return lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
            && lstat(path + "/" + OutputSet.markerName, &marker) == 0 && marker.st_mode & S_IFMT == S_IFREG
    }

    /// Removes a day folder, its marker last: a folder that cannot be emptied keeps the marker, so
    /// the next night tries it again (and warns again) rather than taking it for a user's folder.
    /// Returns why it failed, or nil.
    private static func removeFolder(_ folder: String) -> String? {
        switch entries(of: folder) {
        case .failure(let reason):
            return reason.description
        case .success(let names):
            for name in names where name != OutputSet.markerName {
                if let reason = removeTree(folder + "/" + name) { return reason }
            }
        }
        if unlink(folder + "/" + OutputSet.markerName) != 0, errno != ENOENT { return systemReason(folder + "/" + OutputSet.markerName) }
        return rmdir(folder) == 0 ? nil : systemReason(folder)
    }

    /// `rm -r` of one path without following links; the reason names the path that stopped it.
    private static func removeTree(_ path: String) -> String? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return errno == ENOENT ? nil : systemReason(path) }
        if status.st_mode & S_IFMT == S_IFDIR {
            switch entries(of: path) {
            case .failure(let reason):
                return reason.description
            case .success(let names):
                for name in names {
                    if let reason = removeTree(path + "/" + name) { return reason }
                }
            }
            return rmdir(path) == 0 ? nil : systemReason(path)
        }
        return unlink(path) == 0 ? nil : systemReason(path)
    }

    /// The names in a folder, without `.` and `..`.
    private static func entries(of folder: String) -> Result<[String], ReasonText> {
        guard let directory = opendir(folder) else { return .failure(ReasonText(systemReason(folder))) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: entry.pointee.d_name) { tuple in
                tuple.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: tuple.pointee)) { String(cString: $0) }
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return .success(names)
    }

    private static func systemReason(_ path: String) -> String {
        "\(path): \(String(cString: strerror(errno)))"
    }

    struct ReasonText: Error, CustomStringConvertible {
        var description: String
        init(_ text: String) { description = text }
    }
}
