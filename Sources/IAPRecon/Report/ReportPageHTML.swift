import Foundation

/// `report.html`: the report page drawn from its model, sections in the order finance and support
/// read them. Charts are inline SVG; numbers that `summary.json` also holds carry
/// `data-summary-key` and `data-value`, so a check can hold the page to the summary.
extension ReportPage {
    func html() -> String {
        var body = "<header><h1>App Store reconciliation</h1>"
        body += "<p class=\"meta\">As of <code data-summary-key=\"as_of\" data-value=\"\(HTML.escape(asOf))\">\(HTML.escape(asOf))</code>"
        body += " · days in <code data-summary-key=\"time_zone\" data-value=\"\(HTML.escape(timeZone))\">\(HTML.escape(timeZone))</code>"
        body += " · amounts in <code data-summary-key=\"reporting_currency\" data-value=\"\(HTML.escape(currency))\">"
        body += "\(HTML.escape(currency))</code> · \(inputs.count) input files</p></header>\n"
        // Above the cards: they would otherwise read as a new night's.
        for warning in nightWarnings { body += "<p class=\"warn\">Night: \(HTML.escape(warning)).</p>\n" }
        body += "<section class=\"cards\">"
        for headline in headlines {
            body += "<div class=\"card\"><div class=\"label\">\(HTML.escape(headline.label))</div>"
            body += "<div class=\"value\" data-summary-key=\"\(HTML.escape(headline.summaryKey))\" data-value=\"\(HTML.escape(headline.value))\">"
            body += "\(HTML.escape(headline.shown))</div></div>"
        }
        body += "</section>\n"
        func leftOut(_ count: Int, key: String, _ why: String) {
            guard count > 0 else { return }
            let marked = "<b data-summary-key=\"\(key)\" data-value=\"\(count)\">\(Self.grouped(count))</b>"
            let transactions = count == 1 ? "revenue transaction has" : "revenue transactions have"
            body += "<p class=\"warn\">\(marked) \(transactions) \(why):"
            body += " not in these totals, the chart or the attribution revenue (revenue_daily.csv leaves their cells empty).</p>\n"
        }
        leftOut(revenueWithoutFXRate, key: "transactions.without_fx_rate", "no fx.csv rate into \(HTML.escape(currency)) on or before the purchase day")
        leftOut(revenueWithoutPrice, key: "transactions.price_source.none", "no price (no V2 price, order or catalog entry)")
        if let restatedRevenue { body += "<p class=\"warn\">Restated revenue: \(HTML.escape(restatedRevenue)).</p>\n" }
        for warning in warnings { body += "<p class=\"warn\">Inputs: \(HTML.escape(warning)).</p>\n" }
        body += revenueSection() + riskSection() + criticalSection() + tieoutSection() + attributionSection() + inputsSection()
        return HTML.document(title: "iaprecon report as of \(asOf)", body: body)
    }

    /// An amount in the reporting currency as people read it: every place of its minor unit (never
    /// 2 places for a 3-place currency), grouped by thousands. Marked amounts keep the files' exact
    /// text in `data-value`.
    private func money(_ amount: Amount) -> String { ReportingCurrency(currency).shown(amount) }

    /// `2026-11-27T14:00:05.000Z` as `2026-11-27 14:00:05`, with the milliseconds when there are
    /// any (`14:00:05.250`): findings.csv's time, in a table cell that does not wrap.
    static func seconds(_ iso: String) -> String {
        let whole = String(iso.prefix(19)).replacingOccurrences(of: "T", with: " ")
        let fraction = iso.dropFirst(19).prefix { $0 != "Z" && $0 != "+" && $0 != "-" }
        return fraction.isEmpty || fraction.dropFirst().allSatisfy { $0 == "0" } ? whole : whole + fraction
    }

    /// A count as people read it, grouped by thousands (`1,504`).
    private static func grouped(_ count: some BinaryInteger) -> String {
        ReportingCurrency.shown(Amount(Decimal(Int64(count))), places: 0)
    }

    /// The y axis's gridline values, lowest first: 0 and the whole multiples of a step of 1, 2 or 5
    /// times a power of ten (never finer than the minor unit's `places`) between `low` and `high`,
    /// at most six. Exact decimals, so each label shows the value of its line.
    static func axisTicks(high: Amount, low: Amount, places: Int) -> [Amount] {
        let top = max(high.decimal, 0), bottom = min(low.decimal, 0)
        guard top > bottom else { return [.zero] }
        func whole(_ value: Decimal, _ mode: NSDecimalNumber.RoundingMode) -> Int {
            var value = value, rounded = Decimal()
            NSDecimalRound(&rounded, &value, 0, mode)
            return NSDecimalNumber(decimal: rounded).intValue
        }
        let span = NSDecimalNumber(decimal: top - bottom).doubleValue / 5
        var exponent = max(Int((log10(span)).rounded(.down)), -places)
        while true {
            for significand in [1, 2, 5] {
                let step = Decimal(sign: .plus, exponent: exponent, significand: Decimal(significand))
                let (first, last) = (whole(bottom / step, .up), whole(top / step, .down))
                if last - first <= 5 { return (first...last).map { Amount(Decimal($0) * step) } }
            }
            exponent += 1
        }
    }

    private static func double(_ amount: Amount) -> Double { NSDecimalNumber(decimal: amount.decimal).doubleValue }

    /// Daily gross (up) and refunds (down) as bars, net as a line, over every day of the period.
    private func revenueSection() -> String {
        var out = "<section><h2>Revenue per day (\(HTML.escape(currency)))</h2>"
        guard !days.isEmpty else { return out + "<p class=\"none\">No verified production revenue in this period.</p></section>\n" }
        out += "<p class=\"legend\"><span><i class=\"gross\"></i>gross</span><span><i class=\"refund\"></i>refunds</span>"
        out += "<span><i class=\"net\"></i>net</span></p>"
        if let earlier {
            // Marked, so a check adds it to the drawn days and meets the cards' totals.
            out += "<p class=\"meta\" data-earlier-gross=\"\(Money.format(earlier.gross))\" data-earlier-refunds=\"\(Money.format(earlier.refunds))\">"
            out += "The last \(days.count) days. The \(earlier.count) earlier days with revenue add gross \(money(earlier.gross)) and refunds "
            out += "\(money(earlier.refunds)), in the totals above; revenue_daily.csv has every day.</p>"
        }
        // Bars to scale from the lowest to the highest value; gridlines at round values between them,
        // so each label is the value its line stands at.
        let highest = days.map { max($0.gross.decimal, $0.net.decimal) }.max() ?? 0
        let lowest = days.map { min(-$0.refunds.decimal, $0.net.decimal) }.min() ?? 0
        let ticks = Self.axisTicks(high: Amount(highest), low: Amount(lowest), places: ReportingCurrency(currency).minorUnit)
        // The plot starts after the longest label (a digit, comma or minus is at most 6.5 units wide at 11px): the
        // chart cuts off what is left of it, and a large amount in won or yen would lose its first digits or its minus.
        let longestLabel = Double(ticks.map { money($0).count }.max() ?? 0)
        let (width, height, left, right, top, bottom) = (1000.0, 240.0, max(64, (6 + 6.5 * longestLabel).rounded(.up)), 12.0, 12.0, 28.0)
        let low = min(Self.double(Amount(lowest)), 0), high = max(Self.double(Amount(highest)), low + 1e-9, 0)
        let plotWidth = width - left - right
        let step = plotWidth / Double(days.count)
        func y(_ value: Double) -> Double { top + (high - value) / (high - low) * (height - top - bottom) }
        func number(_ value: Double) -> String { String(format: "%.1f", value) }
        out += "<svg class=\"chart\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" role=\"img\" aria-label=\"daily gross, refunds and net\">"
        for tick in ticks.reversed() {
            let value = Self.double(tick)
            out += "<line class=\"grid\" x1=\"\(number(left))\" x2=\"\(number(width - right))\" y1=\"\(number(y(value)))\" y2=\"\(number(y(value)))\"/>"
            out += "<text x=\"\(number(left - 6))\" y=\"\(number(y(value) + 4))\" text-anchor=\"end\">\(money(tick))</text>"
        }
        var points: [String] = []
        for (index, day) in days.enumerated() {
            let x = left + Double(index) * step
            let barWidth = max(step * 0.7, 1)
            let (gross, refunds) = (Self.double(day.gross), Self.double(day.refunds))
            out += "<g data-date=\"\(day.date)\" data-gross=\"\(Money.format(day.gross))\" data-refunds=\"\(Money.format(day.refunds))\">"
            out += "<title>\(day.date): gross \(money(day.gross)), refunds \(money(day.refunds)), net \(money(day.net))</title>"
            out += "<rect class=\"gross\" x=\"\(number(x + step * 0.15))\" y=\"\(number(y(gross)))\" width=\"\(number(barWidth))\" "
            out += "height=\"\(number(y(0) - y(gross)))\"/>"
            if refunds > 0 {
                out += "<rect class=\"refund\" x=\"\(number(x + step * 0.15))\" y=\"\(number(y(0)))\" width=\"\(number(barWidth))\" "
                out += "height=\"\(number(y(-refunds) - y(0)))\"/>"
            }
            out += "</g>"
            points.append("\(number(x + step / 2)),\(number(y(Self.double(day.net))))")
        }
        out += "<polyline class=\"netline\" points=\"\(points.joined(separator: " "))\"/>"
        let labelled = Set([0, days.count / 2, days.count - 1])
        for index in labelled.sorted() {
            let anchor = index == 0 ? "start" : index == days.count - 1 ? "end" : "middle"
            let x = index == 0 ? left : index == days.count - 1 ? width - right : left + (Double(index) + 0.5) * step
            out += "<text x=\"\(number(x))\" y=\"\(number(height - 8))\" text-anchor=\"\(anchor)\">\(days[index].date)</text>"
        }
        return out + "</svg></section>\n"
    }

    /// Money at risk: each finding kind's count and amount in the reporting currency, drawn to scale.
    private func riskSection() -> String {
        let largest = risk.map { Self.double($0.amount) }.max() ?? 0
        var rows = risk.map { kind -> [String] in
            var amount = ""
            if kind.amount != .zero || kind.unconverted > 0 {
                // Marked with summary.json's text, shown as people read it, like the headlines.
                let value = HTML.escape(Money.format(kind.amount))
                amount = "<span data-summary-key=\"\(HTML.escape(atRiskKey)).by_kind.\(HTML.escape(kind.kind))\" data-value=\"\(value)\">"
                    + "\(HTML.escape(money(kind.amount)))</span>"
            }
            if kind.unconverted > 0 { amount += HTML.escape(" (+\(kind.unconverted) without fx rate)") }
            let bar = largest > 0 && kind.amount != .zero ? HTML.bar(Self.double(kind.amount) / largest, tone: "refund") : ""
            return [HTML.escape(kind.kind), "<span class=\"sev-\(kind.severity)\">\(kind.severity)</span>",
                    "<span data-summary-key=\"findings.by_kind.\(kind.kind).count\" data-value=\"\(kind.count)\">\(Self.grouped(kind.count))</span>",
                    "<span data-summary-key=\"findings.by_kind.\(kind.kind).new\" data-value=\"\(kind.new)\">\(Self.grouped(kind.new))</span>",
                    amount + bar]
        }
        // The total, as summary.json adds the kinds; findings without a rate are counted beside it, as per kind.
        let total = risk.reduce(Amount.zero) { $0 + $1.amount }
        let unconverted = risk.reduce(0) { $0 + $1.unconverted }
        var totalAmount = "<b data-summary-key=\"\(HTML.escape(atRiskKey)).total\" data-value=\"\(HTML.escape(Money.format(total)))\">"
            + "\(HTML.escape(money(total)))</b>"
        if unconverted > 0 { totalAmount += HTML.escape(" (+\(unconverted) without fx rate)") }
        let count: Int = risk.reduce(0) { $0 + $1.count }, new: Int = risk.reduce(0) { $0 + $1.new }
        rows.append(["<b>total</b>", "", "<b data-summary-key=\"findings.total\" data-value=\"\(count)\">\(Self.grouped(count))</b>",
                     "<b data-summary-key=\"findings.new\" data-value=\"\(new)\">\(Self.grouped(new))</b>", totalAmount])
        // `new`: first reported by this run, what the night's alert counts.
        return "<section><h2>Money at risk per finding kind (\(HTML.escape(currency)))</h2>"
            + HTML.table(["kind", "severity", "findings", "new", "amount"], rows, numeric: [2, 3, 4]) + "</section>\n"
    }

    /// The newest critical findings with their evidence; findings.csv lists them all.
    private func criticalSection() -> String {
        var out = "<section><h2>Newest critical findings</h2>"
        guard !criticalFindings.isEmpty else { return out + "<p class=\"none\">No critical findings.</p></section>\n" }
        if criticalTotal > criticalFindings.count {
            out += "<p class=\"meta\">The newest \(criticalFindings.count) of \(Self.grouped(criticalTotal)); findings.csv has every one.</p>"
        }
        func rows(_ findings: [CriticalFinding]) -> [[String]] { findings.map { finding -> [String] in
            let amount = finding.amount.isEmpty ? "" : finding.amount + " " + finding.currency
            return ["<span class=\"time\">\(HTML.escape(Self.seconds(finding.eventTime)))</span>",
                    "<span class=\"sev-critical\">\(HTML.escape(finding.kind))</span>" + (finding.isNew ? " <b class=\"new\">new</b>" : "")
                        + "<br>" + HTML.id(finding.findingID),
                    HTML.id(finding.userID), HTML.id(finding.transactionID),
                    HTML.escape(amount),
                    HTML.text(finding.detail) + "<div class=\"sources\">\(HTML.escape(finding.sources.replacingOccurrences(of: ";", with: "; ")))</div>"]
        } }
        let headers = ["time (UTC)", "kind", "user", "transaction", "amount", "evidence"]
        out += HTML.table(headers, rows(criticalFindings), numeric: [4])
        // What tonight's alert names but the list leaves out: findings of earlier events that reached the store late.
        // Apart, in one element, so the list above is the same whatever the store's history.
        if !earlierNewCritical.isEmpty {
            let total = earlierNewCriticalTotal, one = earlierNewCriticalTotal == 1
            out += "<aside class=\"earlier-new\"><p class=\"warn\">\(Self.grouped(total)) more critical \(one ? "finding" : "findings") first reported "
                + "by this run, of \(one ? "an earlier event" : "earlier events")"
                + (total > earlierNewCritical.count ? " (the newest \(earlierNewCritical.count))" : "") + ":</p>"
                + HTML.table(headers, rows(earlierNewCritical), numeric: [4]) + "</aside>"
        }
        return out + "</section>\n"
    }

    /// Apple's units against verified units, and the shortfalls nothing verified covers; shown only
    /// when a run read Apple's sales reports.
    private func tieoutSection() -> String {
        guard let tieout else { return "" }
        func marked(_ key: String, _ value: Int64) -> String {
            "<span data-summary-key=\"apple_tieout.\(key)\" data-value=\"\(value)\">\(Self.grouped(value))</span>"
        }
        let totals = tieout.totals
        let first = HTML.escape(totals.days.first ?? ""), last = HTML.escape(totals.days.last ?? "")
        let span = totals.days.count == 1 ? "1 Pacific day, \(first)" : "\(marked("days", Int64(totals.days.count))) Pacific days, \(first) to \(last)"
        var out = "<section id=\"tieout\"><h2>Apple tie-out</h2>"
            + "<p>Apple's Sales Reports cover \(span): Apple counts \(marked("apple_units", totals.appleUnits)) units, "
            + "iaprecon verified \(marked("verified_units", totals.verifiedUnits)).</p>"
        for warning in tieout.reportWarnings { out += "<p class=\"warn\">Sales Reports: \(HTML.escape(warning)).</p>" }
        var meta: [String] = []
        if tieout.shortfallRows == 0 {
            meta.append("No country has fewer verified purchases than Apple's on any day.")
        } else {
            meta.append("\(Self.grouped(tieout.shortfallRows)) \(tieout.shortfallRows == 1 ? "row" : "rows") of apple_tieout.csv "
                + "\(tieout.shortfallRows == 1 ? "has" : "have") fewer verified purchases than Apple's (refunds are compared apart).")
            if tieout.coveredRows > 0 {
                meta.append("Units verified without a storefront (country ??) could be from any country, so they count toward their day and "
                    + "product's shortfalls: they cover \(Self.grouped(tieout.coveredRows)) of these whole.")
            }
        }
        if tieout.surplusRows > 0 {
            meta.append("\(Self.grouped(tieout.surplusRows)) \(tieout.surplusRows == 1 ? "row has" : "rows have") more verified units than "
                + "Apple's, \(Self.grouped(tieout.surplusUnits)) in all.")
        }
        if tieout.proceedsInTwoCurrencies > 0 {
            let one = tieout.proceedsInTwoCurrencies == 1
            meta.append("\(Self.grouped(tieout.proceedsInTwoCurrencies)) \(one ? "row has" : "rows have") Apple's proceeds in two currencies: "
                + "\(one ? "its" : "their") apple_proceeds \(one ? "is" : "are") empty, and summary.json's proceeds leave \(one ? "it" : "them") out.")
            if let files = Self.proceedsFilesNamed(tieout.proceedsInTwoCurrenciesFiles) {
                meta.append("\(one ? "It comes" : "They come") from \(files).")
            }
        }
        out += "<p class=\"meta\">" + HTML.escape(meta.joined(separator: " ")) + "</p>"
        guard tieout.uncoveredRows > 0 else {
            return out + "<p class=\"none\">Every unit Apple counts is verified or covered.</p></section>\n"
        }
        // Storefront-less units that cover part of a listed shortfall get a column; a page with none has no column of blanks.
        let showsCovered = tieout.uncovered.contains { $0.covered > 0 }
        let rows = tieout.uncovered.map { shortfall -> [String] in
            let row = shortfall.row
            // What the finding's amount is: the missing units at Apple's customer price.
            let amount = row.customerPrice.flatMap(Amount.parse).map { Money.format($0 * shortfall.missing) + " " + (row.customerCurrency ?? "") }
            return [HTML.escape(row.day), HTML.id(row.productID), HTML.text(row.country),
                    String(row.applePurchases), String(row.verifiedPurchases)]
                + (showsCovered ? [shortfall.covered == 0 ? "" : String(shortfall.covered)] : [])
                + ["<b>\(shortfall.missing)</b>", HTML.escape(amount ?? "")]
        }
        out += "<p>Units Apple counts that no receipt or notification verified, \(Self.grouped(tieout.missingUnits)) in all: "
            + "the \(Self.grouped(tieout.uncoveredRows)) unverified_apple_sales \(tieout.uncoveredRows == 1 ? "finding" : "findings").</p>"
        // Like the critical findings: a page that lists part of the rows says so, or a reader takes them for all.
        if tieout.uncoveredRows > tieout.uncovered.count {
            out += "<p class=\"meta\">The newest \(tieout.uncovered.count) of \(Self.grouped(tieout.uncoveredRows)); findings.csv has every one.</p>"
        }
        let headers = ["day (Pacific)", "product", "country", "Apple purchases", "verified purchases"]
            + (showsCovered ? ["verified without country"] : []) + ["missing", "amount"]
        return out + HTML.table(headers, rows, numeric: Set(3..<headers.count))
            + "</section>\n"
    }

    /// The first `proceedsFilesShown` files, each with its day or days, and how many more: nil for none.
    private static func proceedsFilesNamed(_ files: [(path: String, days: [String])]) -> String? {
        guard !files.isEmpty else { return nil }
        var named = files.prefix(proceedsFilesShown).map { file in
            let days = file.days.count == 1 ? file.days[0] : "\(file.days.count) days from \(file.days[0]) to \(file.days[file.days.count - 1])"
            return "\(file.path) (\(days))"
        }
        let more = files.count - named.count
        if more > 0 { named.append("\(grouped(more)) more \(more == 1 ? "file" : "files")") }
        return AppleTieOut.listed(named)
    }

    /// Attribution per media source: installs, payers, revenue and spend as bars, and ROAS.
    private func attributionSection() -> String {
        var out = "<section><h2>Attribution per media source (\(HTML.escape(currency)))</h2>"
        guard !mediaSources.isEmpty else { return out + "<p class=\"none\">No installs or attributed revenue.</p></section>\n" }
        let installs = Double(mediaSources.map(\.installs).max() ?? 0)
        let payers = Double(mediaSources.map(\.payers).max() ?? 0)
        let money = max(mediaSources.map { Self.double($0.revenue) }.max() ?? 0,
                        mediaSources.compactMap { $0.spend.map(Self.double) }.max() ?? 0)
        func bar(_ value: Double, _ largest: Double, _ tone: String) -> String { largest > 0 ? HTML.bar(value / largest, tone: tone) : "" }
        let rows = mediaSources.map { source -> [String] in
            [HTML.text(source.name),
             Self.grouped(source.installs) + bar(Double(source.installs), installs, "count"),
             Self.grouped(source.payers) + bar(Double(source.payers), payers, "count"),
             self.money(source.revenue) + bar(Self.double(source.revenue), money, "gross"),
             !source.hasSpend ? "<span class=\"muted\">no spend</span>"
                : (source.spend.map(self.money) ?? "unknown") + bar(source.spend.map(Self.double) ?? 0, money, "spend"),
             source.roas]
        }
        out += HTML.table(["media source", "installs", "payers", "revenue", "spend", "ROAS"], rows, numeric: [1, 2, 3, 4, 5])
        return out + "</section>\n"
    }

    /// Per-file accounting: every line read is accepted, rejected, blank or ignored.
    private func inputsSection() -> String {
        var rows = inputs.map { file in
            [HTML.text(file.path), HTML.escape(file.source), Self.grouped(file.counts.read), Self.grouped(file.counts.accepted),
             Self.grouped(file.counts.rejected), Self.grouped(file.counts.blank), Self.grouped(file.counts.ignored)]
        }
        let totals = inputTotals
        func total(_ key: String, _ value: Int) -> String {
            "<b data-summary-key=\"inputs.totals.\(key)\" data-value=\"\(value)\">\(Self.grouped(value))</b>"
        }
        rows.append(["<b>total</b>", "", total("read", totals.read), total("accepted", totals.accepted), total("rejected", totals.rejected),
                     total("blank", totals.blank), total("ignored", totals.ignored)])
        return "<section><h2>Inputs</h2>"
            + HTML.table(["file", "source", "read", "accepted", "rejected", "blank", "ignored"], rows, numeric: [2, 3, 4, 5, 6],
                         caption: "read = accepted + rejected + blank + ignored; rejects.csv names every rejected line")
            + "</section>\n"
    }
}
