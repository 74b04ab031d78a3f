import Foundation
import Synchronization

/// The line checks of CONTRACT.md §1 that depend on the run, not on the line alone.
///
/// A line stamped more than a day after the run's clock cannot be true (a
/// registration dated 2099 would otherwise become the default as-of and turn
/// every open purchase into a lost delivery), with `--bundle-id` a receipt
/// of another app verifies nothing of ours, and a JWS counts only when the
/// run trusts its signature (§1.8: `--trust-root`, `--trust-unsigned`).
public struct LineRules: Sendable, Equatable {
    /// The run's clock (`--now`, default the system clock), UTC epoch ms.
    public var nowMs: Int64
    /// `--bundle-id`: the app whose receipts are read; nil reads every bundle.
    public var bundleID: String?
    /// `--mmp-tz`: the zone of the MMP's times that carry no offset (CONTRACT.md §1.5).
    public var mmpZone: Zone
    /// `--app-sku`: the app's SKUs in App Store Connect. A Sales Report is the vendor account's, so
    /// it lists every app's in-app sales; a row whose `Parent Identifier` names another app is read
    /// and ignored. Empty (the default) ties out every app's rows as this app's.
    public var appSKUs: Set<String> = []
    /// Which JWS signatures are trusted. Copies share its caches of what was already verified,
    /// so one run's parsers verify each chain and each JWS once.
    public var signatures: JWSVerifier
    /// Where a parse job records the chains it judged at the run's clock (`checkSignature`):
    /// `IngestStage` gives each job its own, and stores with each file the clocks by which those
    /// verdicts stay the same. Nil records nothing.
    var clockJudged: ClockJudgedChains?

    /// How far after the run's clock an event time may lie (clocks drift, zones differ).
    public static let futureToleranceMs: Int64 = 86_400_000

    /// 2008-07-10T00:00:00Z, the day the App Store opened: no purchase, receipt, notification,
    /// sign-up or install of an app's can be older. An event time before it is a broken clock or,
    /// most often, epoch seconds written where milliseconds are due, which would date the line in
    /// January 1970.
    public static let appStoreOpenedMs: Int64 = 1_215_648_000_000

    public init(nowMs: Int64 = Int64(Date().timeIntervalSince1970 * 1000), bundleID: String? = nil, mmpZone: Zone = .utc,
                signatures: SignatureCheck = .appleOnly) {
        self.nowMs = nowMs
        self.bundleID = bundleID
        self.mmpZone = mmpZone
        self.signatures = JWSVerifier(signatures)
    }

    public static func == (lhs: LineRules, rhs: LineRules) -> Bool {
        lhs.nowMs == rhs.nowMs && lhs.bundleID == rhs.bundleID && lhs.mmpZone == rhs.mmpZone && lhs.appSKUs == rhs.appSKUs
            && lhs.signatures.check == rhs.signatures.check
    }

    /// The same rules, trusting every JWS: for the JWS inside a payload whose own signature was checked.
    var trustingInnerJWS: LineRules {
        var rules = self
        rules.signatures = .unchecked
        return rules
    }

    /// Rejects an event time more than a day after the run's clock (`time in the future`), or
    /// before the App Store opened (`appStoreOpenedMs`), which no clock changes.
    ///
    /// Parsers call it last, once every other check of the line has passed: a line with another
    /// defect is rejected for that one whatever the clock. A stored file is read again only when
    /// the clock judges its lines otherwise (`judgesOtherwise`), which it can tell only for lines
    /// whose one defect is the clock's: were the clock's check first, a line rejected as
    /// `quantity below 1` by a late clock would stay so in a store whose next run, by an earlier
    /// clock, a fresh store would reject it as `time in the future`.
    ///
    /// `reported` are the refund times inside the line's Apple payloads (`checkReportedTimes`),
    /// judged after the clockless check of the event time and before its clock's: an accepted one
    /// records the clocks that accept it, so a line rejected for its event time is read again by an
    /// earlier clock, by which a fresh store would reject it for its refund time first.
    func checkEventTime(_ ms: Int64?, field: @autoclosure () -> String, reported: [ReportedTime] = []) throws(LineReject) {
        if let ms, ms < Self.appStoreOpenedMs { throw Self.beforeTheAppStore(ms, field: field()) }
        try checkReportedTimes(reported)
        guard let ms, ms > nowMs + Self.futureToleranceMs else { return }
        throw Self.inTheFuture(ms, field: field())
    }

    /// Rejects a refund's or cancellation's time inside an Apple payload more than a day after the
    /// run's clock (`time in the future`): Apple reports one once it has happened, so it is judged as
    /// an event time. Purchase and expiry dates are not (an expiry lies ahead; CONTRACT.md §1).
    ///
    /// Parsers call it once every other check of the line has passed (through `checkEventTime`
    /// where the line has an event time). A time it accepts is recorded with the clocks that would
    /// accept it too (`clockJudged`): an earlier clock, by which it is in the future, reads the file
    /// again (`judgesOtherwise`), as a fresh store would reject the line. One it rejects is read
    /// again once the clock passes it, as a rejected event time is.
    func checkReportedTimes(_ times: [ReportedTime]) throws(LineReject) {
        for time in times {
            if time.ms > nowMs + Self.futureToleranceMs { throw Self.inTheFuture(time.ms, field: time.field) }
            clockJudged?.judged(acceptedFrom: time.ms - Self.futureToleranceMs, atClock: nowMs)
        }
    }

    /// Rejects a day of a dated input that starts more than a day after the run's clock (`time in
    /// the future`), naming it as written and the instant it starts, `startMs` (`where` says whose
    /// start: a Sales Report's day in Los Angeles, a spend row's in the zone it starts first).
    ///
    /// A spend row's or Sales Report's day is no event time, but a day no report can have covered
    /// yet (a year typed 2062 for 2026) would otherwise date the as-of of an input without event
    /// times (CONTRACT.md §2), turning every open purchase into a lost delivery, and its spend
    /// would count in ROAS. Judged as an event time is, once every other check of the line has
    /// passed: an accepted day records the clocks that accept it too (`clockJudged`), so an
    /// earlier clock reads its file again, and a rejected one is read again once the clock is
    /// within a day of its start (`futureEventTime(inReason:)`).
    ///
    /// A day before the App Store opened (`dayMs`, its UTC midnight, before 2008-07-10) is no
    /// day of App Store spend or sales either: a typed year (1926 for 2026) that would count its
    /// spend in a cohort no install belongs to, or date a tie-out day Apple never reported. No
    /// clock changes that verdict.
    func checkDay(_ written: String, field: String, dayMs: Int64, startMs: Int64, where place: String) throws(LineReject) {
        if dayMs < Self.appStoreOpenedMs {
            throw LineReject("time before the App Store opened: '\(field)' is \(written)")
        }
        if startMs > nowMs + Self.futureToleranceMs {
            throw LineReject("\(Self.futureReasonPrefix)'\(field)' is \(written), which starts \(place) \(Timestamp.iso8601(startMs))")
        }
        clockJudged?.judged(acceptedFrom: startMs - Self.futureToleranceMs, atClock: nowMs)
    }

    /// Rejects a purchase, refund or cancellation date of a Production
    /// transaction (`environment` Production or `PROD`, or none given) before the App Store opened:
    /// no sale, and no refund of one, is older, and it would count as revenue of a day in year 0 or
    /// 1970. Apple's Sandbox, Xcode and StoreKit test payloads use year-0 dates, and are kept.
    /// Not a clock's check: its place among a line's checks does not matter.
    static func checkProductionDate(_ ms: Int64?, field: @autoclosure () -> String, environment: String?) throws(LineReject) {
        guard let ms, ms < appStoreOpenedMs, environment.map(AppleEnvironment.isProduction) ?? true else { return }
        throw beforeTheAppStore(ms, field: field())
    }

    private static func inTheFuture(_ ms: Int64, field: String) -> LineReject {
        LineReject("\(futureReasonPrefix)'\(field)' is \(Timestamp.iso8601(ms))")
    }

    /// A time before the App Store opened, named with the time it would be as epoch seconds when
    /// that is a time after the App Store opened. Not bounded by the clock: a stored reject is
    /// never read again for its wording, so its wording must not depend on the run.
    private static func beforeTheAppStore(_ ms: Int64, field: String) -> LineReject {
        var reason = "time before the App Store opened: '\(field)' is \(Timestamp.iso8601(ms))"
        let asSeconds = ms.multipliedReportingOverflow(by: 1000)
        if !asSeconds.overflow, asSeconds.partialValue >= appStoreOpenedMs, asSeconds.partialValue <= Timestamp.latestMs {
            reason += " (as seconds, \(Timestamp.iso8601(asSeconds.partialValue)))"
        }
        return LineReject(reason)
    }

    /// How a `time in the future` reason begins; the event time it names (for a day, the instant
    /// the day starts), in UTC, ends it.
    static let futureReasonPrefix = "time in the future: "

    /// The event time a `time in the future` reason names, or the start of the day it names.
    static func futureEventTime(inReason reason: String) -> Int64? {
        guard reason.hasPrefix(futureReasonPrefix), let named = reason.range(of: " ", options: .backwards) else { return nil }
        return Timestamp.parse(String(reason[named.upperBound...]))
    }

    /// The rules besides the clock that judge the lines of a `kind` file, as the store records them
    /// with it: for Apple's payloads the app (`--bundle-id`) and the trusted signatures, for MMP
    /// rows the zone of their times (`--mmp-tz`), for Sales Reports the app's SKUs (`--app-sku`);
    /// nil for the other sources. The same settings named otherwise (a root given twice, `Etc/UTC`
    /// for `UTC`) give the same text.
    func readWith(_ kind: SourceKind) -> String? {
        switch kind {
        case .receipts, .notifications: "bundle \(bundleID ?? "any"); \(Self.signaturesLabel)\(signatures.check.trusted)"
        case .attribution: "mmp-tz \(mmpZone.canonicalIdentifier)"
        case .apple: "app-sku " + (appSKUs.isEmpty ? "any" : appSKUs.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.joined(separator: ", "))
        default: nil
        }
    }

    private static let signaturesLabel = "signatures "

    /// The trusted signatures (`SignatureCheck.trusted`) a `readWith` text names, if it names them.
    static func trustedSignatures(inReadWith text: String) -> String? {
        text.range(of: signaturesLabel).map { String(text[$0.upperBound...]) }
    }

    /// Whether this run judges a stored file's lines otherwise than the run that read it: another
    /// `readWith` for its kind (a store from before these were recorded has none: its files are
    /// judged by the rules they were read with), or a clock by which the earliest line it rejected
    /// as in the future (`earliestFutureMs`) no longer is, or its latest accepted event time now
    /// is, or by which a chain judged at the clock is judged otherwise (outside `clockSpan`). The
    /// clock moves every night, and a fresh store reads every line by tonight's rules, so such a
    /// file is read again.
    func judgesOtherwise(_ file: KnownFile, kind: SourceKind, earliestFutureMs: Int64?) -> Bool {
        if let stored = file.readWith, stored != readWith(kind) { return true }
        // Sales Reports stored before their rules were recorded were read as every app's.
        if file.readWith == nil, kind == .apple, !appSKUs.isEmpty { return true }
        if let span = file.clockSpan, !span.contains(nowMs) { return true }
        let limit = nowMs + Self.futureToleranceMs
        if let earliestFutureMs, earliestFutureMs <= limit { return true }
        if let latest = file.latestMs, latest > limit { return true }
        // A wall time from a row with its own offset may be the second pass through a repeated hour.
        if let wall = file.latestMMPWallMs, mmpZone.latestUTC(fromLocal: wall) > limit { return true }
        return false
    }

    /// Rejects a receipt or V2 transaction of another app (`foreign bundle com.other.app`).
    func checkBundle(_ bundle: String?) throws(LineReject) {
        guard let expected = bundleID, let bundle, bundle != expected else { return }
        throw LineReject("foreign bundle \(bundle)")
    }
}

/// The clocks by which every chain a parse job judged at the run's clock, and every refund time and
/// spend or Sales Report day it accepted (`LineRules.checkReportedTimes`, `LineRules.checkDay`), gets
/// the verdict it got.
///
/// A JWS whose payload names no signing time (hand-made and test notifications: Apple's carry a
/// `signedDate`) has its chain judged at the run's clock, as Apple's library judges it at the
/// current time: valid inside the validity of every certificate, expired before or after it. A
/// clock on the same side of each such chain's validity judges every one alike; a clock across a
/// bound judges otherwise, and the file is read again (`LineRules.judgesOtherwise`).
final class ClockJudgedChains: Sendable {
    private let span = Mutex<ClosedRange<Int64>?>(nil)

    /// A chain valid over `validity` was judged at the clock `nowMs`.
    func judged(validity: ClosedRange<Int64>, atClock nowMs: Int64) {
        narrow(to: Self.sameVerdict(validity: validity, atClock: nowMs))
    }

    /// A refund's time or a day's start was accepted by the clock `nowMs` (`LineRules.checkReportedTimes`,
    /// `LineRules.checkDay`): so it is by every clock from `earliestClock` on, and rejected as in the
    /// future by any before.
    func judged(acceptedFrom earliestClock: Int64, atClock nowMs: Int64) {
        narrow(to: min(earliestClock, nowMs)...Int64.max)
    }

    private func narrow(to same: ClosedRange<Int64>) {
        // Each holds the clock `nowMs`, so they meet.
        span.withLock { $0 = $0?.clamped(to: same) ?? same }
    }

    /// The clocks that judge alike every chain judged since the last call (nil when none was), and starts again.
    func take() -> ClosedRange<Int64>? {
        span.withLock { span in
            defer { span = nil }
            return span
        }
    }

    /// The clocks that judge a chain valid over `validity` as the clock `nowMs` does: its validity,
    /// or every clock before it, or every clock after it.
    static func sameVerdict(validity: ClosedRange<Int64>, atClock nowMs: Int64) -> ClosedRange<Int64> {
        if nowMs < validity.lowerBound { return Int64.min...(validity.lowerBound - 1) }
        if nowMs > validity.upperBound { return (validity.upperBound + 1)...Int64.max }
        return validity
    }
}

/// A refund's or cancellation's time inside an Apple payload (`revocationDate`,
/// `cancellation_date_ms`), with the field it was read from: judged by the run's clock once every
/// other check of its line has passed (`LineRules.checkReportedTimes`).
struct ReportedTime: Equatable {
    var field: String
    var ms: Int64
}
