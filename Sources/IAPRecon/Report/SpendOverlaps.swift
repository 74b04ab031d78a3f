/// Spend that more than one file gives for one day, media source and campaign.
///
/// Every spend line counts: one export may split a cohort's spend by country or ad set over many
/// rows. Two files giving the same cohort are as often one export given twice (a corrected
/// re-export beside the original, a cumulative file in every day folder), which doubles the
/// cohort's cost and halves its ROAS; which file is right no rule can say, so a person is told
/// where, as for fx rates and catalog lines that disagree.
struct SpendOverlaps {
    /// Per cohort, the first line of each file that gives it, in the order the files came.
    private var lines: [AttributionReport.CohortKey: [AttributionReport.SpendLine]] = [:]

    mutating func add(_ cohort: AttributionReport.CohortKey, _ spendLine: AttributionReport.SpendLine) {
        var seen = lines[cohort] ?? []
        if let index = seen.firstIndex(where: { $0.path == spendLine.path }) {
            seen[index] = min(seen[index], spendLine)
        } else {
            seen.append(spendLine)
        }
        lines[cohort] = seen
    }

    /// One line per cohort that files give more than once, naming a line of each file in path
    /// order; past ten, how many more.
    var warnings: [String] {
        let overlaps = lines.filter { $0.value.count > 1 }.sorted { $0.key < $1.key }
        var warnings = overlaps.prefix(10).map { cohort, files in
            let named = files.sorted().map(\.description)
            let count = named.count == 2 ? "two" : String(named.count)
            let campaign = cohort.campaign.isEmpty ? "no campaign" : cohort.campaign
            return "spend for \(cohort.day), \(cohort.mediaSource), \(campaign) comes from \(count) files, "
                + named.dropLast().joined(separator: ", ") + " and " + (named.last ?? "") + ": all their lines are counted"
        }
        if overlaps.count > 10 {
            warnings.append("spend for \(overlaps.count - 10) more days, media sources and campaigns comes from more than one file")
        }
        return warnings
    }
}
