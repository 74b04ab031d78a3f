import Foundation
import IAPRecon

/// The pipeline stages, in the order a night runs them, each as its own subcommand.
enum BenchStage: String, CaseIterable, Sendable {
    case ingest, normalize, join, report

    func arguments(input: String, place: StoreFolder, jobs: Int) -> [String] {
        switch self {
        // Generated inputs are signed by the test root `iaprecon generate` writes beside them.
        case .ingest: ["--input", input, "--trust-root", input + "/trust/test-root.pem", "--db", place.database, "--quiet", "--jobs", String(jobs)]
        case .normalize: ["--db", place.database]
        case .join: ["--db", place.database, "--jobs", String(jobs)]
        case .report: ["--db", place.database, "--out", place.out]
        }
    }
}

/// What one child process cost: wall time, peak resident memory, CPU time.
struct StageMeasurement: Equatable, Sendable {
    var seconds: Double
    var peakRSSBytes: Int
    var cpuSeconds: Double
}

/// The median and range of repeated measurements: what a noisy, shared machine allows one to report.
struct Spread: Equatable, Sendable {
    var median: Double
    var min: Double
    var max: Double

    /// - Precondition: `values` is not empty.
    init(_ values: [Double]) {
        precondition(!values.isEmpty, "a spread of no values")
        let sorted = values.sorted()
        let middle = sorted.count / 2
        median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        min = sorted[0]
        max = sorted[sorted.count - 1]
    }

    init(median: Double, min: Double, max: Double) {
        self.median = median
        self.min = min
        self.max = max
    }
}

/// One generated input folder and what the generator reported about it.
struct BenchInput: Equatable, Sendable {
    /// The size asked for (`1m`); the generator's real line count is `stamp.counts.lines`.
    var requested: Int
    var label: String
    var folder: String
    var stamp: InputStamp
    /// How long generation took, or nil when the folder was reused.
    var generateSeconds: Double?

    var lines: Int { stamp.counts.lines }
    var bytes: Int { stamp.counts.bytes }
}

/// The implementations of the same contract that iaprecon is timed beside: a plain Python
/// script and DuckDB SQL, each reading the whole input folder from scratch.
enum Peer: String, CaseIterable, Sendable {
    case python, duckdb

    var script: String { "peer_\(rawValue).py" }
}

/// One size's full runs: per run, one measurement per stage in `BenchStage` order, the same
/// night as one `iaprecon run`, and each peer's run.
struct SizeResult: Equatable, Sendable {
    var input: BenchInput
    var runs: [[StageMeasurement]]
    /// The whole night as one `iaprecon run` process, once per round.
    var oneProcess: [StageMeasurement] = []
    /// The same with `--trust-unsigned`, measured where the peers are: they check no signature.
    var oneProcessUnsigned: [StageMeasurement] = []
    /// `iaprecon validate` (parsing alone), with and without signature checks, where the peers are.
    var parseOnly: [StageMeasurement] = []
    var parseOnlyUnsigned: [StageMeasurement] = []
    /// SQLite alone writing the rows and indexes ingest stored, from the one-process run's store.
    var storingAlone: [StageMeasurement] = []
    /// The one-process run's store on disk (database and write-ahead log), bytes.
    var storeBytes: Int?
    /// Where those bytes go, by layer of the store's tables (empty when SQLite cannot tell).
    var storeLayers: [LayerBytes] = []
    var peers: [Peer: [StageMeasurement]] = [:]
    /// Whether each peer's answers were ours, on the last round's files.
    var agreements: [PeerAgreement] = []

    func spread(of stage: BenchStage) -> Spread {
        Spread(runs.map { $0[stageIndex(stage)].seconds })
    }

    func peakRSSBytes(of stage: BenchStage) -> Int {
        runs.map { $0[stageIndex(stage)].peakRSSBytes }.max() ?? 0
    }

    func cpuMedian(of stage: BenchStage) -> Double {
        Spread(runs.map { $0[stageIndex(stage)].cpuSeconds }).median
    }

    /// Stage by stage: the sum of the stage medians, with the fastest and slowest whole runs as its range.
    var total: Spread {
        let perRun = runs.map { $0.reduce(0) { $0 + $1.seconds } }
        let median = BenchStage.allCases.reduce(0) { $0 + spread(of: $1).median }
        return Spread(median: median, min: perRun.min() ?? median, max: perRun.max() ?? median)
    }

    /// The one-process `iaprecon run`, what a night costs and what the peers are compared with;
    /// the stage total where it was not measured.
    var run: Spread { oneProcess.isEmpty ? total : Spread(oneProcess.map(\.seconds)) }

    /// The CPU seconds of `run`: the one-process runs' median, else the stages' medians summed.
    var runCPUSeconds: Double {
        oneProcess.isEmpty ? BenchStage.allCases.reduce(0) { $0 + cpuMedian(of: $1) } : Spread(oneProcess.map(\.cpuSeconds)).median
    }

    func peer(_ peer: Peer) -> Spread? { peers[peer].flatMap { $0.isEmpty ? nil : Spread($0.map(\.seconds)) } }

    /// The largest peak of any stage in any run, or of the one-process runs.
    var peakRSSBytes: Int { (BenchStage.allCases.map(peakRSSBytes(of:)) + oneProcess.map(\.peakRSSBytes)).max() ?? 0 }
}

/// The incremental night: a store of `historyDays` days gets `newDay`, and all reports are rewritten.
struct IncrementalResult: Equatable, Sendable {
    /// The full rebuilds of every day timed beside the nights, one after each.
    var full: SizeResult
    /// The size's own full runs, timed earlier with the other sizes; nil when none were.
    var earlierFull: SizeResult?
    var newDay: String
    var historyDays: Int
    /// The untimed-for-the-target first builds of the earlier days, one per run.
    var builds: [[StageMeasurement]]
    /// The nights, one per run, stages in `BenchStage` order.
    var nights: [[StageMeasurement]]
    /// Lines of the new day's files: what the night has to read, whatever the history.
    var newDayLines: Int = 0

    func spread(of stage: BenchStage) -> Spread {
        Spread(nights.map { $0[stageIndex(stage)].seconds })
    }

    var total: Spread {
        let perRun = nights.map { $0.reduce(0) { $0 + $1.seconds } }
        let median = BenchStage.allCases.reduce(0) { $0 + spread(of: $1).median }
        return Spread(median: median, min: perRun.min() ?? median, max: perRun.max() ?? median)
    }

    var buildTotal: Spread { Spread(builds.map { $0.reduce(0) { $0 + $1.seconds } }) }

    /// The night's median as a fraction of the full rebuild's timed beside it.
    var ratio: Double { total.median / full.total.median }

    var label: String { full.input.label }
}

private func stageIndex(_ stage: BenchStage) -> Int {
    BenchStage.allCases.firstIndex(of: stage) ?? 0
}

/// Growth between two consecutive sizes; linear growth keeps `perLineRatio` near 1.
struct Growth: Equatable, Sendable {
    var from: String
    var to: String
    var linesRatio: Double
    var timeRatio: Double
    /// The same runs' CPU time (user and system): what the work grew by, whatever the host stole.
    var cpuRatio: Double
    var perLineRatio: Double { timeRatio / linesRatio }
    var cpuPerLineRatio: Double { cpuRatio / linesRatio }
}

/// One target and whether it was met (nil: not measured in this run).
struct TargetCheck: Equatable, Sendable {
    var target: String
    var measured: String
    var goal: String
    var met: Bool?
    /// A figure printed beside the targets for comparison, judged against nothing.
    var forComparison = false
}
