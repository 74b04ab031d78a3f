import Foundation
import Testing
import IAPReconGenerator
@testable import IAPReconCLI
@testable import IAPRecon

/// The pure parts of `iaprecon bench`: statistics, ratios, targets and table text. No timing here:
/// speed is measured by `jobs/bench`.
@Suite("The benchmark's arithmetic and tables")
struct BenchTests {
    static func input(_ requested: Int, lines: Int, bytes: Int) -> BenchInput {
        var stamp = InputStamp(target: requested, estimate: 10, days: 61, seed: 1)
        stamp.counts = GeneratedCounts(files: 5, lines: lines, bytes: bytes)
        return BenchInput(requested: requested, label: BenchFormat.sizeLabel(requested), folder: "/x", stamp: stamp,
                          generateSeconds: nil)
    }

    /// A size whose runs take `seconds[run][stage]`, each stage peaking at `peakMB`.
    static func result(_ requested: Int, lines: Int, _ seconds: [[Double]], peakMB: Int = 50) -> SizeResult {
        let runs = seconds.map { stages in
            stages.map { StageMeasurement(seconds: $0, peakRSSBytes: peakMB * 1_000_000, cpuSeconds: $0) }
        }
        return SizeResult(input: input(requested, lines: lines, bytes: lines * 300), runs: runs)
    }

    @Test("the host's stolen CPU is read off /proc/stat's steal column and reported as a share of all ticks between two readings")
    func stolenCPU() throws {
        let before = try #require(CPUTimes(procStat: "cpu  1000 10 200 5000 20 0 30 40 7 0\ncpu0 500 5 100 2500 10 0 15 20 7 0\nintr 1"))
        // Guest time (7) is already counted in user: the total is the first eight columns.
        #expect(before == CPUTimes(total: 6300, stolen: 40))
        let after = CPUTimes(total: 6300 + 1000, stolen: 40 + 250)
        #expect(BenchReport.stealLine(from: before, to: after).hasPrefix("CPU time stolen by the host during the bench: 25.0 %"))
        // No time between the readings, and lines that are not the machine's total, give nothing to divide by.
        #expect(BenchReport.stealLine(from: before, to: before).contains(": 0.0 %"))
        #expect(CPUTimes(procStat: "cpu0 1 2 3 4 5 6 7 8") == nil)
        #expect(CPUTimes(procStat: "cpu  1 2 3") == nil)
    }

    @Test("median, min and max; an even count takes the mean of the middle two")
    func spread() {
        #expect(Spread([3, 1, 2]) == Spread(median: 2, min: 1, max: 3))
        #expect(Spread([4, 1, 3, 2]) == Spread(median: 2.5, min: 1, max: 4))
        #expect(Spread([7]) == Spread(median: 7, min: 7, max: 7))
    }

    @Test("the total is the sum of stage medians, ranged by whole runs; peak RSS the max of stages")
    func total() {
        let result = Self.result(1_000_000, lines: 1_000_000, [[1, 1, 1, 1], [2, 1, 1, 1], [3, 1, 1, 2]], peakMB: 120)
        #expect(result.total == Spread(median: 5, min: 4, max: 7))
        #expect(result.spread(of: .ingest) == Spread(median: 2, min: 1, max: 3))
        #expect(result.peakRSSBytes == 120_000_000)
    }

    @Test("the one-process runs' peak counts toward the size's peak when it is the larger; their median is the run's time")
    func oneProcessPeak() {
        var result = Self.result(4_000_000, lines: 4_000_000, [[1, 1, 1, 1]], peakMB: 200)
        result.oneProcess = [9, 7, 8].map { StageMeasurement(seconds: $0, peakRSSBytes: 180_000_000, cpuSeconds: $0) }
        #expect(result.peakRSSBytes == 200_000_000)
        result.oneProcess[1].peakRSSBytes = 601_000_000
        #expect(result.peakRSSBytes == 601_000_000)
        #expect(result.total.median == 4)
        #expect(result.run == Spread(median: 8, min: 7, max: 9))
        let peak = BenchReport.targets([result], nights: [], history: nil).first { $0.target == "peak RSS at 4m" }
        #expect(peak?.met == false)
        #expect(peak?.goal == "<= 600.0 MB")
        result.storeBytes = 420_000_000
        let table = BenchReport.sizeTable(result)
        #expect(table.hasSuffix("""
            total         4.000  4.000-4.000  1,000,000   300.0        200.0  4.000
            one process   8.000  7.000-9.000    500,000   150.0        601.0  8.000
            store after one 'iaprecon run': 420.0 MB, 0.35x the input's bytes
            """))
    }

    @Test("iaprecon's run is divided by each peer's median on the same input, and judged at 1m")
    func peers() throws {
        var million = Self.result(1_000_000, lines: 1_000_000, [[1, 1, 1, 1]], peakMB: 100)
        million.oneProcess = [3, 4, 5].map(Self.measurement)
        million.peers[.python] = [16, 17, 18].map(Self.measurement)
        million.peers[.duckdb] = [8, 9, 30].map(Self.measurement)
        let checks = BenchReport.targets([million], nights: [], history: nil)
        let python = try #require(checks.first { $0.target == "1m full run / python peer" })
        #expect(python.measured == "0.24x (4.000 s / 17.00 s)")
        #expect(python.met == true)
        let duckdb = try #require(checks.first { $0.target == "1m full run / duckdb peer" })
        #expect(duckdb.measured == "0.44x (4.000 s / 9.000 s)")
        #expect(duckdb.met == false)
        let table = BenchReport.peersTable([million])
        #expect(table.contains("1m    python         17.00  16.00-18.00          0.0  17.00             0.24                  0.24"), "\(table)")
        // CPU beside wall: a host that steals inflates the wall time of both, not their CPU time.
        million.peers[.python] = [StageMeasurement(seconds: 20, peakRSSBytes: 0, cpuSeconds: 16)]
        #expect(BenchReport.peersTable([million]).contains("1m    python         20.00  20.00-20.00          0.0  16.00             0.20                  0.25"))
        million.peers[.python] = [16, 17, 18].map(Self.measurement)
        // Without signature checks, like the peers: printed beside the targets, judged against nothing.
        #expect(!checks.contains { $0.forComparison })
        million.oneProcessUnsigned = [2, 3, 9].map(Self.measurement)
        let compared = try #require(BenchReport.targets([million], nights: [], history: nil)
            .first { $0.target == "1m run, no signature checks / duckdb" })
        #expect(compared.measured == "0.33x (3.000 s / 9.000 s)")
        #expect(compared.forComparison && compared.met == nil)
        #expect(BenchReport.targetsTable([compared]).contains("for comparison"))
        #expect(BenchReport.peersTable([million]).contains("1m    iaprecon run, no signature checks   3.000"))
        // Parsing alone is the floor of any design: shown beside the peers, judged against nothing.
        million.parseOnly = [1, 2, 3].map(Self.measurement)
        million.parseOnlyUnsigned = [1, 1, 2].map(Self.measurement)
        let floors = BenchReport.targets([million], nights: [], history: nil).filter { $0.target.contains("parsing alone") }
        #expect(floors.map(\.target) == [
            "1m parsing alone / python", "1m parsing alone, no signature checks / python",
            "1m parsing alone / duckdb", "1m parsing alone, no signature checks / duckdb",
        ])
        #expect(floors.first?.measured == "0.12x (2.000 s / 17.00 s)")
        #expect(floors.allSatisfy { $0.forComparison && $0.met == nil })
        let withFloor = BenchReport.peersTable([million])
        #expect(withFloor.contains("parsing alone (validate)"))
        #expect(withFloor.contains("parsing alone, no signature checks"))
        var unparsed = million
        (unparsed.parseOnly, unparsed.parseOnlyUnsigned) = ([], [])
        #expect(!BenchReport.peersTable([unparsed]).contains("parsing alone"), "a size whose parsing was not timed shows no floor")
        #expect(!withFloor.contains("floor:"), "no floor line without the storing measured")
        // SQLite storing the rows alone, measured in the bench's own process: no peak of its own.
        million.storingAlone = [StageMeasurement(seconds: 1.5, peakRSSBytes: 0, cpuSeconds: 1.25)]
        let stored = BenchReport.peersTable([million])
        #expect(stored.contains("1m    storing alone (SQLite copying the rows)   1.500  1.500-1.500            -  1.250"), "\(stored)")
        // Parsing 2 cpu s (the median of 1, 2, 3) and storing 1.25: 3.25 cpu s, at least half that on 2 cores.
        let cores = ProcessInfo.processInfo.activeProcessorCount
        #expect(stored.contains("1m floor: parsing with signature checks 2.000 cpu s + SQLite storing the rows and their indexes "
            + "1.250 cpu s = 3.250 cpu s, at least \(BenchFormat.seconds(3.25 / Double(cores))) s on \(cores) cores before any join or report "
            + "(iaprecon run: 4.000 cpu s, 4.000 s)"), "\(stored)")
        // A size the peers did not run at is not judged.
        let other = BenchReport.targets([Self.result(100_000, lines: 100_000, [[1, 1, 1, 1]])], nights: [], history: nil)
        #expect(other.first { $0.target == "1m full run / python peer" }?.met == nil)
    }

    @Test("growth compares consecutive sizes, per line")
    func growth() throws {
        let small = Self.result(1_000_000, lines: 1_000_000, [[1, 0.5, 0.5, 0]])
        let large = Self.result(4_000_000, lines: 4_000_000, [[5, 2, 2, 0]])
        let step = try #require(BenchReport.growth([small, large]).first)
        #expect(step.linesRatio == 4)
        #expect(step.timeRatio == 4.5)
        #expect(step.perLineRatio == 1.125)
        // CPU from the stages here (no one-process runs): 2 s against 9 s.
        #expect(step.cpuRatio == 4.5)
        var smallRun = small, largeRun = large
        smallRun.oneProcess = [StageMeasurement(seconds: 3, peakRSSBytes: 0, cpuSeconds: 5)]
        largeRun.oneProcess = [StageMeasurement(seconds: 15, peakRSSBytes: 0, cpuSeconds: 20)]
        let measured = try #require(BenchReport.growth([smallRun, largeRun]).first)
        // A host that stole time: wall grew 5x, the work 4x, for 4x the lines.
        #expect(measured.perLineRatio == 1.25)
        #expect(measured.cpuPerLineRatio == 1)
        #expect(BenchReport.growthTable([measured]).contains("1.25"))
        #expect(BenchReport.growth([small]).isEmpty)
    }

    @Test("targets: met, not met, and not measured when a size is missing")
    func targets() throws {
        var million = Self.result(1_000_000, lines: 1_000_000, [[1, 0.2, 0.2, 0.1]], peakMB: 310)
        million.storeBytes = 100_000_000
        var large = Self.result(4_000_000, lines: 4_000_000, [[6, 0.8, 0.8, 0.4]], peakMB: 590)
        large.storeBytes = 400_000_000
        let checks = BenchReport.targets([million, large], nights: [], history: Spread([0.05, 0.2, 0.08]))
        func check(_ target: String) throws -> TargetCheck { try #require(checks.first { $0.target == target }) }
        #expect(try check("peak RSS at 1m").met == false)
        #expect(try check("peak RSS at 4m").met == true)
        // 8.0 s against 1.5 s for 4x the lines: 5.33x, over 4.4x.
        #expect(try check("4m time / 1m time").met == false)
        // The store of 1m lines of 300 bytes each: 100 MB of 300 MB.
        #expect(try check("store size at 1m").measured == "0.33x (100.0 MB)")
        #expect(try check("store size at 1m").met == true)
        #expect(try check("history lookup at 4m").met == true)
        #expect(try check("incremental night at 4m").met == nil)
        #expect(try check("night on 4m history / on 1m history").met == nil)

        func night(_ full: SizeResult, _ seconds: [Double]) -> IncrementalResult {
            IncrementalResult(full: full, earlierFull: nil, newDay: "2026-10-31", historyDays: 60,
                              builds: [[1, 1, 1, 1].map(Self.measurement)], nights: [seconds.map(Self.measurement)])
        }
        let nights = [night(million, [0.05, 0.1, 0.1, 0.1]), night(large, [0.5, 0.5, 0.5, 0.5])]
        #expect(abs(nights[0].ratio - 0.35 / 1.5) < 1e-9)
        let withNights = BenchReport.targets([million, large], nights: nights, history: nil)
        // 2.0 s of an 8.0 s rebuild: 25 %, met; 2.0 s against the 1m night's 0.35 s: 5.7x, not met.
        #expect(withNights.first { $0.target == "incremental night at 4m" }?.met == true)
        #expect(withNights.first { $0.target == "night on 4m history / on 1m history" }?.met == false)
        // Each night adds its own size's last day: 4x the lines for 5.7x the time is 1.43x per new line, met.
        var perLine = nights
        perLine[0].newDayLines = 10_000
        perLine[1].newDayLines = 40_000
        let byLines = try #require(BenchReport.targets([million, large], nights: perLine, history: nil)
            .first { $0.target == "night on 4m history / on 1m history" })
        #expect(byLines.measured == "1.43x per new line (5.71x for 4.00x the lines)")
        #expect(byLines.met == true)
        perLine[1].newDayLines = 20_000
        #expect(BenchReport.targets([million, large], nights: perLine, history: nil)
            .first { $0.target == "night on 4m history / on 1m history" }?.met == false)
        #expect(BenchReport.incrementalSizes([million, large]).map(\.input.label) == ["1m", "4m"])
        #expect(BenchReport.incrementalSizes([Self.result(100_000, lines: 100_000, [[1, 1, 1, 1]])]).map(\.input.label) == ["100k"])
    }

    @Test("the night is divided by the full rebuilds timed beside it, not by the size's earlier runs; both are printed")
    func nightBesideFullRebuild() {
        let earlier = Self.result(1_000_000, lines: 1_000_000, [[1, 0.5, 0.5, 0]])
        let beside = Self.result(1_000_000, lines: 1_000_000, [[1.2, 0.6, 0.6, 0.1], [1.4, 0.6, 0.6, 0.1], [1.3, 0.6, 0.6, 0.1]])
        let night = IncrementalResult(
            full: beside, earlierFull: earlier, newDay: "2026-10-31", historyDays: 60, builds: [[1, 1, 1, 1].map(Self.measurement)],
            nights: [[0.1, 0.2, 0.2, 0.1].map(Self.measurement)])
        // Stage medians 1.3 + 0.6 + 0.6 + 0.1 = 2.6 beside; the earlier runs' 2.0 would give 30 %.
        #expect(abs(night.ratio - 0.6 / 2.6) < 1e-9)
        let table = BenchReport.incrementalTable(night)
        #expect(table.contains("total        0.600"))
        #expect(table.contains("2.600"))
        #expect(table.contains("23.1 %"))
        #expect(table.contains("timed right after each night; the 1m runs above took 2.000 s"))
    }

    static func measurement(_ seconds: Double) -> StageMeasurement {
        StageMeasurement(seconds: seconds, peakRSSBytes: 0, cpuSeconds: seconds)
    }

    @Test("a size's table: one row per stage, then the total")
    func sizeTable() {
        let text = BenchReport.sizeTable(Self.result(100_000, lines: 100_000, [[0.5, 0.25, 0.125, 0.125]]))
        #expect(text == """

            100k: 100,000 lines, 30.0 MB; median of 1 run (total = sum of stage medians, its range the fastest and \
            slowest whole runs; peak RSS = max over runs)
            stage      wall s    min-max s  lines/s   MB/s  peak RSS MB  cpu s
            ---------  ------  -----------  -------  -----  -----------  -----
            ingest      0.500  0.500-0.500  200,000   60.0         50.0  0.500
            normalize   0.250  0.250-0.250  400,000  120.0         50.0  0.250
            join        0.125  0.125-0.125  800,000  240.0         50.0  0.125
            report      0.125  0.125-0.125  800,000  240.0         50.0  0.125
            total       1.000  1.000-1.000  100,000   30.0         50.0  1.000
            """)
    }

    @Test("number formats", arguments: [
        (0, "0"), (999, "999"), (1_000, "1,000"), (600_000, "600,000"), (1_234_567, "1,234,567"), (-4_500, "-4,500"),
    ])
    func grouped(value: Int, text: String) {
        #expect(BenchFormat.grouped(value) == text)
    }

    @Test("size labels read like --sizes")
    func sizeLabels() {
        #expect([100_000, 1_000_000, 4_000_000, 1_500, 1_500_000, 42].map(BenchFormat.sizeLabel)
            == ["100k", "1m", "4m", "1500", "1500k", "42"])
    }

    @Test("the generator's counts and the stamp round-trip")
    func stamp() throws {
        let counts = try #require(GeneratedCounts(parsing: "wrote 305 files, 98765 lines, 29630000 bytes to /x/ (12 planted)"))
        #expect(counts == GeneratedCounts(files: 305, lines: 98_765, bytes: 29_630_000))
        #expect(GeneratedCounts(parsing: "nothing") == nil)
        var stamp = InputStamp(target: 100_000, estimate: 4_700, days: 61, seed: 1)
        stamp.users = 7_800
        stamp.counts = counts
        #expect(InputStamp(parsing: stamp.text) == stamp)
        #expect(InputStamp(parsing: "users=1") == nil)
        #expect(stamp.sameParameters(as: InputStamp(target: 100_000, estimate: 4_700, days: 61, seed: 1)))
        #expect(!stamp.sameParameters(as: InputStamp(target: 100_000, estimate: 4_800, days: 61, seed: 1)))
        // A folder an earlier generator wrote, whose bytes this one would not write, is generated again: by the
        // version in its stamp, or by a stamp of the format before versions, which does not parse.
        #expect(stamp.generator == InputGenerator.dataVersion)
        #expect(!stamp.sameParameters(as: InputStamp(target: 100_000, estimate: 4_700, days: 61, seed: 1,
                                                     generator: InputGenerator.dataVersion - 1)))
        let formatTwo = "iaprecon bench input, format 2\ntarget=100000\nestimate=4700\ndays=61\nseed=1\nusers=7800\n"
            + "files=305\nlines=98765\nbytes=29630000\n"
        #expect(InputStamp(parsing: formatTwo) == nil)
    }

    @Test("a generated folder far from its size is generated again with users rescaled")
    func calibration() {
        #expect(GeneratorCalibration.isNear(96_000, 100_000))
        #expect(!GeneratorCalibration.isNear(60_288, 100_000))
        #expect(GeneratorCalibration.rescaled(users: 4_585, gave: 60_288, target: 100_000) == 7_605)
        #expect(GeneratorCalibration.rescaled(users: 10, gave: 0, target: 100) == 1_000)
    }

    @Test("the incremental night holds back the last day's files, keeps the undated ones")
    func incrementalView() {
        let files = ["catalog.csv", "fx.csv", "spend/spend.csv", "truth.json", "server/server-2026-09-01.jsonl.gz",
                     "server/server-2026-09-02.jsonl", "receipts/receipts-2026-09-02.jsonl", "receipts/receipts-2026-09-01.jsonl"]
        #expect(IncrementalView.lastDay(of: files) == "2026-09-02")
        #expect(IncrementalView.filesBefore("2026-09-02", in: files) == [
            "catalog.csv", "fx.csv", "spend/spend.csv", "server/server-2026-09-01.jsonl.gz", "receipts/receipts-2026-09-01.jsonl",
        ])
    }

    @Test("the night before is a folder iaprecon reads: its files are not symlinks leading out of it")
    func incrementalViewIsReadable() throws {
        let work = try Workspace()
        let input = work.path("input")
        try FileManager.default.createDirectory(atPath: input + "/server", withIntermediateDirectories: true)
        for name in ["server/server-2026-09-01.jsonl", "server/server-2026-09-02.jsonl", "catalog.csv"] {
            try "x\n".write(toFile: input + "/" + name, atomically: true, encoding: .utf8)
        }
        let files = try BenchPaths.files(under: input)
        try IncrementalView.build(at: work.path("view"), from: input, files: files, holdingBack: "2026-09-02")
        let listing = try SourceFile.scan(work.path("view"))
        #expect(listing.files.map(\.relativePath) == ["catalog.csv", "server/server-2026-09-01.jsonl"])
        let type = try FileManager.default.attributesOfItem(atPath: work.path("view/catalog.csv"))[.type] as? FileAttributeType
        #expect(type == .typeRegular)
    }

    @Test("wait4 statuses: exit codes and signals")
    func endings() {
        #expect(ChildProcess.Ending(status: 0) == .exited(0))
        #expect(ChildProcess.Ending(status: 3 << 8) == .exited(3))
        #expect(ChildProcess.Ending(status: 9) == .signaled(9))
    }
}
