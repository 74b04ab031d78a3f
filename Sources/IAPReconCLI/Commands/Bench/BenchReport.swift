import Foundation
import IAPRecon

/// The benchmark's printed sections, as pure functions of the measurements.
enum BenchReport {
    /// The full run at 1m against the peers' medians on the same input: at most these fractions.
    static let pythonRatioTarget = 0.25
    static let duckDBRatioTarget = 0.4
    /// Peak memory at 1m and below, and at 4m.
    static let peakRSSTargetBytes = 300_000_000
    static let peakRSSTargetBytesLarge = 600_000_000
    /// The 4m run may take this many times the 1m run, for four times the lines.
    static let growthTarget = 4.4
    /// The store at 1m, as a fraction of the input's uncompressed bytes.
    static let storeSizeTarget = 0.35
    /// A night on the 4m history, as a fraction of the 4m full rebuild, and against the same night on the 1m history.
    static let incrementalTarget = 0.25
    static let nightGrowthTarget = 1.5
    static let historyTargetSeconds = 0.1
    /// The peers run at sizes up to this: the Python script alone takes minutes beyond it.
    static let largestPeerSize = 1_000_000

    /// The share of the machine's CPU time stolen between two readings: what every time above,
    /// the peers' too, includes of other machines' work.
    static func stealLine(from start: CPUTimes, to end: CPUTimes) -> String {
        let total = end.total > start.total ? end.total - start.total : 0
        let stolen = end.stolen > start.stolen ? end.stolen - start.stolen : 0
        let share = total > 0 ? Double(stolen) / Double(total) * 100 : 0
        return "CPU time stolen by the host during the bench: " + String(format: "%.1f", share)
            + " % (/proc/stat steal; wall times include it, ours and the peers' alike)"
    }

    static func peakTarget(for result: SizeResult) -> Int {
        result.input.requested > 1_000_000 ? peakRSSTargetBytesLarge : peakRSSTargetBytes
    }

    static func facts(_ settings: BenchSettings, floorBytes: Int, load: String) -> String {
        let memory = Double(ProcessInfo.processInfo.physicalMemory) / 1e9
        var lines = [
            "iaprecon bench",
            "machine: \(ProcessInfo.processInfo.activeProcessorCount) cores (nproc), "
                + String(format: "%.1f", memory) + " GB memory, load average \(load)",
            "binary: \(settings.executable)"
                + (BenchPaths.isReleaseBuild(settings.executable) ? " (release build)" : ""),
        ]
        if !BenchPaths.isReleaseBuild(settings.executable) {
            lines.append("warning: this binary is not in a release build folder; its timings mean little (use jobs/bench)")
        }
        lines += [
            "settings: --jobs \(settings.jobs), \(settings.runs) run\(settings.runs == 1 ? "" : "s") per size, "
                + "inputs of \(settings.inputDays) days (seed \(settings.seed)), work folder \(settings.work)",
            "peak RSS floor: \(BenchFormat.megabytes(floorBytes)) MB (ru_maxrss of 'iaprecon --version' spawned from here; "
                + "a child's peak starts at its parent's)",
            "units: MB = 10^6 bytes; lines/s and MB/s = input lines and uncompressed input bytes / median wall time; "
                + "every stage is its own process on a fresh store",
        ]
        return lines.joined(separator: "\n")
    }

    static func inputsTable(_ inputs: [BenchInput]) -> String {
        var table = TextTable(["size", "lines", "MB", "files", "users", "days", "generated"], numeric: [1, 2, 3, 4, 5])
        for input in inputs {
            table.add([input.label, BenchFormat.grouped(input.lines), BenchFormat.megabytes(input.bytes),
                       String(input.stamp.counts.files), BenchFormat.grouped(input.stamp.users), String(input.stamp.days),
                       input.generateSeconds.map { "now, in \(BenchFormat.seconds($0)) s" } ?? "earlier (input.stamp matches)"])
        }
        return "\ninputs\n" + table.text
    }

    static func sizeTable(_ result: SizeResult) -> String {
        let input = result.input
        var table = TextTable(["stage", "wall s", "min-max s", "lines/s", "MB/s", "peak RSS MB", "cpu s"],
                              numeric: [1, 2, 3, 4, 5, 6])
        func row(_ name: String, _ spread: Spread, peak: Int, cpu: Double) {
            table.add([name, BenchFormat.seconds(spread.median), BenchFormat.range(spread),
                       BenchFormat.grouped(Int((Double(input.lines) / spread.median).rounded())),
                       String(format: "%.1f", Double(input.bytes) / 1e6 / spread.median),
                       BenchFormat.megabytes(peak), BenchFormat.seconds(cpu)])
        }
        for stage in BenchStage.allCases {
            row(stage.rawValue, result.spread(of: stage), peak: result.peakRSSBytes(of: stage), cpu: result.cpuMedian(of: stage))
        }
        row("total", result.total, peak: BenchStage.allCases.map(result.peakRSSBytes(of:)).max() ?? 0,
            cpu: BenchStage.allCases.reduce(0) { $0 + result.cpuMedian(of: $1) })
        if !result.oneProcess.isEmpty {
            row("one process", result.run, peak: result.oneProcess.map(\.peakRSSBytes).max() ?? 0,
                cpu: Spread(result.oneProcess.map(\.cpuSeconds)).median)
        }
        let heading = "\n\(input.label): \(BenchFormat.grouped(input.lines)) lines, \(BenchFormat.megabytes(input.bytes)) MB; "
            + "median of \(result.runs.count) run\(result.runs.count == 1 ? "" : "s") (total = sum of stage medians, "
            + "its range the fastest and slowest whole runs; peak RSS = max over runs"
            + (result.oneProcess.isEmpty ? ")" : "; one process = a single 'iaprecon run' of all four stages on a fresh store)")
        let store = result.storeBytes.map {
            "\nstore after one 'iaprecon run': \(BenchFormat.megabytes($0)) MB, "
                + "\(BenchFormat.ratio(Double($0) / Double(max(input.bytes, 1))))x the input's bytes"
                + (result.storeLayers.isEmpty ? "" : " (" + result.storeLayers.map {
                    "\($0.layer) \(BenchFormat.megabytes($0.bytes)) MB"
                }.joined(separator: ", ") + ")")
        } ?? ""
        return heading + "\n" + table.text + store
    }

    /// iaprecon's full run beside each peer's, per size where the peers ran.
    static func peersTable(_ results: [SizeResult]) -> String {
        var table = TextTable(["size", "tool", "wall s", "min-max s", "peak RSS MB", "cpu s", "iaprecon / tool", "cpu: iaprecon / tool"],
                              numeric: [2, 3, 4, 5, 6, 7])
        for result in results where !result.peers.isEmpty {
            let ours = result.run
            let ourCPU = Spread(result.oneProcess.map(\.cpuSeconds)).median
            // `peak`: false where the memory measured was not the tool's own.
            func add(_ tool: String, _ runs: [StageMeasurement], peak: Bool = true) {
                let wall = Spread(runs.map(\.seconds))
                let cpu = Spread(runs.map(\.cpuSeconds)).median
                table.add([result.input.label, tool, BenchFormat.seconds(wall.median), BenchFormat.range(wall),
                           peak ? BenchFormat.megabytes(runs.map(\.peakRSSBytes).max() ?? 0) : "-", BenchFormat.seconds(cpu),
                           BenchFormat.ratio(ours.median / wall.median), cpu > 0 ? BenchFormat.ratio(ourCPU / cpu) : "-"])
            }
            add("iaprecon run", result.oneProcess)
            for (label, runs) in [("iaprecon run, no signature checks", result.oneProcessUnsigned),
                                  ("parsing alone (validate)", result.parseOnly),
                                  ("parsing alone, no signature checks", result.parseOnlyUnsigned)] where !runs.isEmpty {
                add(label, runs)
            }
            if !result.storingAlone.isEmpty { add("storing alone (SQLite copying the rows)", result.storingAlone, peak: false) }
            for peer in Peer.allCases {
                if let runs = result.peers[peer], !runs.isEmpty { add(peer.rawValue, runs) }
            }
        }
        return "\npeers on the same inputs, rounds alternating with iaprecon's (medians; one 'iaprecon run' on a fresh store; "
            + "cpu s = user and system time of the process and its threads, which the host's steal does not inflate)\n"
            + table.text + results.compactMap(floorLine).joined()
    }

    /// What parsing and SQLite's storing alone cost at one size: no run that checks the signatures
    /// and keeps the rows in SQLite spends less CPU, nor less time than that CPU spread over every core.
    static func floorLine(_ result: SizeResult) -> String? {
        guard !result.parseOnly.isEmpty, !result.storingAlone.isEmpty, !result.oneProcess.isEmpty else { return nil }
        let parsing = Spread(result.parseOnly.map(\.cpuSeconds)).median
        let storing = Spread(result.storingAlone.map(\.cpuSeconds)).median
        let cores = ProcessInfo.processInfo.activeProcessorCount
        return "\n\(result.input.label) floor: parsing with signature checks \(BenchFormat.seconds(parsing)) cpu s + SQLite storing "
            + "the rows and their indexes \(BenchFormat.seconds(storing)) cpu s = \(BenchFormat.seconds(parsing + storing)) cpu s, "
            + "at least \(BenchFormat.seconds((parsing + storing) / Double(max(cores, 1)))) s on \(cores) cores before any join or report "
            + "(iaprecon run: \(BenchFormat.seconds(result.runCPUSeconds)) cpu s, \(BenchFormat.seconds(result.run.median)) s)"
    }

    /// Whether the peers' answers were ours, per size where they ran: their times compare the same work only if so.
    static func agreementTable(_ results: [SizeResult]) -> String {
        var table = TextTable(["size", "peer", "findings equal", "only ours", "only peer's", "cohorts equal", "cohorts differing",
                               "verified gross: ours / peer's", "same answers"], numeric: [2, 3, 4, 5, 6])
        var notes: [String] = []
        for result in results {
            for agreement in result.agreements {
                let cohortsApart = agreement.cohorts.differing + agreement.cohorts.onlyOurs + agreement.cohorts.onlyPeer
                let gross = [agreement.ourGross, agreement.peerGross].map { $0.map(Money.format) ?? "-" }.joined(separator: " / ")
                table.add([result.input.label, agreement.peer.rawValue, String(agreement.findings.equal),
                           String(agreement.findings.onlyOurs), String(agreement.findings.onlyPeer), String(agreement.cohorts.equal),
                           String(cohortsApart), gross, agreement.agrees ? "yes" : "no"])
                notes += agreement.examples.map { "  \(result.input.label) \(agreement.peer.rawValue): \($0)" }
                if agreement.recounted.purchases > 0 {
                    notes.append("  \(result.input.label) \(agreement.peer.rawValue): \(agreement.recounted.purchases) purchases of several "
                        + "units whose V2 price is their total, which the peers multiply by the quantity again: "
                        + "\(Money.format(agreement.recounted.extraGross)) more verified gross expected, and \(agreement.recountedCohorts) "
                        + "cohorts with \(Money.format(agreement.recountedCohortRevenue, scale: 2)) more revenue_usd")
                }
                if agreement.uncoveredFindings > 0 {
                    notes.append("  \(result.input.label) \(agreement.peer.rawValue): not compared: \(agreement.uncoveredFindings) "
                        + PeerAgreement.uncoveredKinds.sorted().joined(separator: ", ") + " findings (the peers read no Sales Reports)")
                }
            }
        }
        return "\nthe peers' answers beside ours (iaprecon run without signature checks, last round): findings by kind and key, "
            + "attribution's counts and verified revenue per cohort (theirs rounded half-even to cents), verified gross within "
            + "half a cent per revenue row; refunds and ROAS are not compared (the peers count a prorated refund whole and "
            + "divide unrounded amounts)\n" + table.text + (notes.isEmpty ? "" : "\n" + notes.joined(separator: "\n"))
    }

    /// Growth between consecutive sizes, by the full run's median time.
    static func growth(_ results: [SizeResult]) -> [Growth] {
        zip(results, results.dropFirst()).map { smaller, larger in
            Growth(from: smaller.input.label, to: larger.input.label,
                   linesRatio: Double(larger.input.lines) / Double(smaller.input.lines),
                   timeRatio: larger.run.median / smaller.run.median, cpuRatio: larger.runCPUSeconds / smaller.runCPUSeconds)
        }
    }

    static func growthTable(_ growth: [Growth]) -> String {
        var table = TextTable(["from", "to", "lines ratio", "time ratio", "time ratio / lines ratio", "cpu ratio / lines ratio"],
                              numeric: [2, 3, 4, 5])
        for step in growth {
            table.add([step.from, step.to, BenchFormat.ratio(step.linesRatio), BenchFormat.ratio(step.timeRatio),
                       BenchFormat.ratio(step.perLineRatio), BenchFormat.ratio(step.cpuPerLineRatio)])
        }
        return "\ngrowth between sizes (full-run medians; 1.00 per line is linear; the target judges wall time, "
            + "the cpu column shows what the work itself grew by)\n" + table.text
    }

    /// The sizes an incremental night runs at: 1m and 4m where they were measured (the targets
    /// compare them), else the largest size.
    static func incrementalSizes(_ results: [SizeResult]) -> [SizeResult] {
        let targeted = results.filter { [1_000_000, 4_000_000].contains($0.input.requested) }
        if !targeted.isEmpty { return targeted }
        return results.max { $0.input.requested < $1.input.requested }.map { [$0] } ?? []
    }

    static func historyLine(label: String, _ spread: Spread) -> String {
        "\nhistory lookups on the \(label) store (7 users, one process each): median "
            + "\(BenchFormat.seconds(spread.median)) s (\(BenchFormat.range(spread)) s)"
    }

    static func incrementalTable(_ result: IncrementalResult) -> String {
        var table = TextTable(["stage", "night s", "min-max s", "full rebuild s", "night / full"], numeric: [1, 2, 3, 4])
        func row(_ name: String, _ night: Spread, _ full: Spread) {
            table.add([name, BenchFormat.seconds(night.median), BenchFormat.range(night), BenchFormat.seconds(full.median),
                       BenchFormat.percent(night.median / full.median)])
        }
        for stage in BenchStage.allCases { row(stage.rawValue, result.spread(of: stage), result.full.spread(of: stage)) }
        row("total", result.total, result.full.total)
        let label = result.full.input.label
        return "\nincremental night at \(label): a store of \(result.historyDays) days gets \(result.newDay)"
            + (result.newDayLines > 0 ? " (\(BenchFormat.grouped(result.newDayLines)) lines)" : "") + ", "
            + "then every report is rewritten; median of \(result.nights.count) run\(result.nights.count == 1 ? "" : "s")\n"
            + table.text + "\n"
            + "(full rebuild = all \(result.historyDays + 1) days on a fresh store, timed right after each night; "
            + (result.earlierFull.map { "the \(label) runs above took \(BenchFormat.seconds($0.total.median)) s; " } ?? "")
            + "building the \(result.historyDays) days first took \(BenchFormat.seconds(result.buildTotal.median)) s)"
    }

    static func targets(_ results: [SizeResult], nights: [IncrementalResult], history: Spread?) -> [TargetCheck] {
        let million = results.first { $0.input.requested == 1_000_000 }
        let fourMillion = results.first { $0.input.requested == 4_000_000 }
        var checks: [TargetCheck] = []
        for (peer, goal) in [(Peer.python, pythonRatioTarget), (.duckdb, duckDBRatioTarget)] {
            let target = "1m full run / \(peer.rawValue) peer"
            let goalText = "<= \(BenchFormat.ratio(goal))x"
            if let million, let theirs = million.peer(peer) {
                let ratio = million.run.median / theirs.median
                checks.append(TargetCheck(
                    target: target,
                    measured: "\(BenchFormat.ratio(ratio))x (\(BenchFormat.seconds(million.run.median)) s / \(BenchFormat.seconds(theirs.median)) s)",
                    goal: goalText, met: ratio <= goal))
            } else {
                checks.append(TargetCheck(target: target, measured: "-", goal: goalText, met: nil))
            }
            if let million, !million.oneProcessUnsigned.isEmpty, let theirs = million.peer(peer) {
                let unsigned = Spread(million.oneProcessUnsigned.map(\.seconds)).median
                checks.append(TargetCheck(
                    target: "1m run, no signature checks / \(peer.rawValue)",
                    measured: "\(BenchFormat.ratio(unsigned / theirs.median))x (\(BenchFormat.seconds(unsigned)) s / \(BenchFormat.seconds(theirs.median)) s)",
                    goal: "like for like: the peers check none", met: nil, forComparison: true))
            }
            if let million, let theirs = million.peer(peer) {
                for (label, runs) in [("1m parsing alone / \(peer.rawValue)", million.parseOnly),
                                      ("1m parsing alone, no signature checks / \(peer.rawValue)", million.parseOnlyUnsigned)] where !runs.isEmpty {
                    let parsing = Spread(runs.map(\.seconds)).median
                    checks.append(TargetCheck(
                        target: label,
                        measured: "\(BenchFormat.ratio(parsing / theirs.median))x (\(BenchFormat.seconds(parsing)) s / \(BenchFormat.seconds(theirs.median)) s)",
                        goal: "the floor: reading the inputs, nothing stored", met: nil, forComparison: true))
                }
            }
        }
        for result in results {
            let goal = peakTarget(for: result)
            checks.append(TargetCheck(
                target: "peak RSS at \(result.input.label)", measured: "\(BenchFormat.megabytes(result.peakRSSBytes)) MB",
                goal: "<= \(BenchFormat.megabytes(goal)) MB", met: result.peakRSSBytes <= goal))
        }
        let growthGoal = "<= \(BenchFormat.ratio(growthTarget))x for 4x the lines"
        if let million, let fourMillion, let step = growth([million, fourMillion]).first {
            checks.append(TargetCheck(
                target: "4m time / 1m time",
                measured: "\(BenchFormat.ratio(step.timeRatio))x for \(BenchFormat.ratio(step.linesRatio))x the lines",
                goal: growthGoal, met: step.perLineRatio <= growthTarget / 4))
        } else {
            checks.append(TargetCheck(target: "4m time / 1m time", measured: "-", goal: growthGoal, met: nil))
        }
        let storeGoal = "<= \(BenchFormat.ratio(storeSizeTarget))x the input's bytes"
        if let million, let bytes = million.storeBytes {
            let ratio = Double(bytes) / Double(max(million.input.bytes, 1))
            checks.append(TargetCheck(target: "store size at 1m", measured: "\(BenchFormat.ratio(ratio))x (\(BenchFormat.megabytes(bytes)) MB)",
                                      goal: storeGoal, met: ratio <= storeSizeTarget))
        } else {
            checks.append(TargetCheck(target: "store size at 1m", measured: "-", goal: storeGoal, met: nil))
        }
        let nightGoal = "<= \(BenchFormat.percent(incrementalTarget)) of a full rebuild"
        let largeNight = nights.first { $0.full.input.requested == 4_000_000 }
        let millionNight = nights.first { $0.full.input.requested == 1_000_000 }
        if let night = largeNight ?? nights.last {
            checks.append(TargetCheck(target: "incremental night at \(night.label)", measured: BenchFormat.percent(night.ratio),
                                      goal: nightGoal, met: night.full.input.requested == 4_000_000 ? night.ratio <= incrementalTarget : nil))
        } else {
            checks.append(TargetCheck(target: "incremental night at 4m", measured: "-", goal: nightGoal, met: nil))
        }
        let nightGrowthGoal = "<= \(BenchFormat.ratio(nightGrowthTarget))x"
        if let largeNight, let millionNight {
            // Each size's night adds its own last day, which holds as many more lines as the size
            // has users: "the same night" is the same work per new line, on four times the history.
            let ratio = largeNight.total.median / millionNight.total.median
            if largeNight.newDayLines > 0, millionNight.newDayLines > 0 {
                let linesRatio = Double(largeNight.newDayLines) / Double(millionNight.newDayLines)
                let perLine = ratio / linesRatio
                checks.append(TargetCheck(
                    target: "night on 4m history / on 1m history",
                    measured: "\(BenchFormat.ratio(perLine))x per new line (\(BenchFormat.ratio(ratio))x for \(BenchFormat.ratio(linesRatio))x the lines)",
                    goal: nightGrowthGoal, met: perLine <= nightGrowthTarget))
            } else {
                checks.append(TargetCheck(target: "night on 4m history / on 1m history", measured: "\(BenchFormat.ratio(ratio))x",
                                          goal: nightGrowthGoal, met: ratio <= nightGrowthTarget))
            }
        } else {
            checks.append(TargetCheck(target: "night on 4m history / on 1m history", measured: "-", goal: nightGrowthGoal, met: nil))
        }
        let historyGoal = "<= \(BenchFormat.seconds(historyTargetSeconds)) s"
        if let history, let largest = results.last {
            checks.append(TargetCheck(target: "history lookup at \(largest.input.label)", measured: "\(BenchFormat.seconds(history.median)) s",
                                      goal: historyGoal, met: largest.input.requested == 4_000_000 ? history.median <= historyTargetSeconds : nil))
        } else {
            checks.append(TargetCheck(target: "history lookup at 4m", measured: "-", goal: historyGoal, met: nil))
        }
        return checks
    }

    static func targetsTable(_ checks: [TargetCheck]) -> String {
        var table = TextTable(["target", "measured", "goal", "result"])
        for check in checks {
            let result = check.forComparison ? "for comparison" : check.met.map { $0 ? "met" : "not met" } ?? "not measured"
            table.add([check.target, check.measured, check.goal, result])
        }
        return "\ntargets (the 4m/1m growth is judged per line, time ratio / lines ratio <= 1.10; a target judged at a size "
            + "that was not run is not measured)\n" + table.text
    }

    /// One line on stderr per finished run, so a long benchmark shows where it is.
    static func progressLine(_ title: String, _ stages: [StageMeasurement]) -> String {
        let total = stages.reduce(0) { $0 + $1.seconds }
        let parts = zip(BenchStage.allCases, stages).map { "\($0.rawValue) \(BenchFormat.seconds($1.seconds))" }
        return "\(title): \(BenchFormat.seconds(total)) s (\(parts.joined(separator: ", ")))"
    }
}

/// Number formats of the benchmark's tables.
enum BenchFormat {
    /// `100k`, `1m`, `4m`, as `--sizes` spells them.
    static func sizeLabel(_ count: Int) -> String {
        if count >= 1_000_000, count % 1_000_000 == 0 { return "\(count / 1_000_000)m" }
        if count >= 1_000, count % 1_000 == 0 { return "\(count / 1_000)k" }
        return String(count)
    }

    /// `1,234,567`.
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var text = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return value < 0 ? "-" + text : text
    }

    static func seconds(_ value: Double) -> String {
        String(format: value < 10 ? "%.3f" : value < 100 ? "%.2f" : "%.1f", value)
    }

    static func range(_ spread: Spread) -> String { seconds(spread.min) + "-" + seconds(spread.max) }

    static func megabytes(_ bytes: Int) -> String { String(format: "%.1f", Double(bytes) / 1e6) }

    static func ratio(_ value: Double) -> String { String(format: "%.2f", value) }

    static func percent(_ fraction: Double) -> String { String(format: "%.1f %%", fraction * 100) }
}
