import Foundation

/// Runs one child process with stdout and stderr in a log file, and measures it with `wait4`,
/// which gives that child's own peak resident memory (`getrusage(RUSAGE_CHILDREN)` would not).
enum ChildProcess {
    /// How a child ended.
    enum Ending: Equatable, Sendable, CustomStringConvertible {
        case exited(Int32)
        case signaled(Int32)

        /// Decodes a `wait4` status (the `WIFEXITED`/`WEXITSTATUS`/`WTERMSIG` macros Swift does not import).
        init(status: Int32) {
            let signal = status & 0x7f
            self = signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
        }

        var description: String {
            switch self {
            case .exited(let code): "exited with code \(code)"
            case .signaled(let signal): "was killed by signal \(signal)"
            }
        }
    }

    static func run(_ executable: String, _ arguments: [String], log: String) throws -> (StageMeasurement, Ending) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = [executable] + arguments
        let environment = ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" }
        let cArguments = argv.map { strdup($0) }
        let cEnvironment = environment.map { strdup($0) }
        defer { (cArguments + cEnvironment).forEach { free($0) } }

        var pid: pid_t = 0
        let start = ContinuousClock.now
        let spawned = posix_spawn(&pid, executable, &actions, nil, cArguments + [nil], cEnvironment + [nil])
        guard spawned == 0 else { throw BenchError("cannot start \(executable): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            guard errno == EINTR else { throw BenchError("waiting for \(executable): \(String(cString: strerror(errno)))") }
        }
        let elapsed = start.duration(to: .now)
        let measurement = StageMeasurement(
            seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
            peakRSSBytes: peakBytes(usage), cpuSeconds: seconds(usage.ru_utime) + seconds(usage.ru_stime))
        return (measurement, Ending(status: status))
    }

    /// The user and system time this process has used so far, all its threads.
    static func ownCPUSeconds() -> Double {
        var usage = rusage()
        #if os(Linux)
            getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
            getrusage(RUSAGE_SELF, &usage)
        #endif
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// `ru_maxrss` in bytes: Linux counts KiB, Darwin bytes.
    private static func peakBytes(_ usage: rusage) -> Int {
        #if os(Linux)
            Int(usage.ru_maxrss) * 1024
        #else
            Int(usage.ru_maxrss)
        #endif
    }

    private static func seconds(_ time: timeval) -> Double {
        Double(time.tv_sec) + Double(time.tv_usec) / 1e6
    }
}

/// A benchmark failure: a stage that exited non-zero, a child that could not start, a bad generated folder.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

// MARK: - Paths and facts

/// A store with its reports and logs in one folder, removed and recreated for a fresh store.
struct StoreFolder: Sendable {
    var folder: String
    var database: String { folder + "/store.sqlite" }
    var out: String { folder + "/out" }
    func log(_ stage: BenchStage) -> String { folder + "/" + stage.rawValue + ".log" }

    func reset() throws {
        try? FileManager.default.removeItem(atPath: folder)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }
}

/// File-system and machine facts the benchmark needs.
enum BenchPaths {
    static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    /// This executable's absolute path: `/proc/self/exe`, else `argv[0]` against the working folder.
    static func executable() -> String {
        if let resolved = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return resolved }
        return absolute(CommandLine.arguments.first ?? "iaprecon")
    }

    /// Whether the executable sits in SwiftPM's release build folder.
    static func isReleaseBuild(_ executable: String) -> Bool { executable.contains("/release/") }

    /// Every regular file under `folder`, relative to it, sorted.
    static func files(under folder: String) throws -> [String] {
        let manager = FileManager.default
        return try manager.subpathsOfDirectory(atPath: folder).filter { relative in
            var isDirectory: ObjCBool = false
            return manager.fileExists(atPath: folder + "/" + relative, isDirectory: &isDirectory) && !isDirectory.boolValue
        }.sorted()
    }

    /// A SQLite store's bytes on disk: the database and its write-ahead log.
    static func storeBytes(_ database: String) -> Int {
        [database, database + "-wal"].reduce(0) { total, path in
            total + ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0)
        }
    }

    /// The last lines of a log, for the error a failed stage gives.
    static func tail(of path: String, lines: Int) -> String {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(lines).joined(separator: "\n")
    }

    /// The machine's CPU time so far, from `/proc/stat`; nil where there is none.
    static func cpuTimes() -> CPUTimes? {
        (try? String(contentsOfFile: "/proc/stat", encoding: .utf8)).flatMap(CPUTimes.init(procStat:))
    }

    static func loadAverage() -> String {
        var loads = [Double](repeating: 0, count: 3)
        guard getloadavg(&loads, 3) == 3 else { return "unknown" }
        return loads.map { String(format: "%.2f", $0) }.joined(separator: " ")
    }
}

/// All CPUs' time since boot, in clock ticks: in all, and stolen (a virtual machine's time the
/// hypervisor gave to others while this one had work: wall times grow by it, CPU times do not).
struct CPUTimes: Equatable {
    var total: UInt64
    var stolen: UInt64

    /// From the text of `/proc/stat`: its first line, `cpu  user nice system idle iowait irq softirq steal ...`
    /// (the guest columns are already in user and nice, so they are not added again).
    init?(procStat text: String) {
        guard let line = text.split(separator: "\n").first, line.hasPrefix("cpu ") else { return nil }
        let ticks = line.split(separator: " ").dropFirst().compactMap { UInt64($0) }
        guard ticks.count >= 8 else { return nil }
        total = ticks.prefix(8).reduce(0, +)
        stolen = ticks[7]
    }

    init(total: UInt64, stolen: UInt64) {
        self.total = total
        self.stolen = stolen
    }
}
