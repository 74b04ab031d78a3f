/// Lines a reader must reject (CONTRACT.md §1): one of each kind is planted early in every
/// run, more at random; each is counted per file in truth.json. Bad lines are always extra
/// lines, never the only record of something, so findings do not depend on them.
enum BadLine: CaseIterable {
    case serverNotJSON, serverMissingField, serverWrongType, serverBadTime, serverBadAmount
    case receiptsNotJSON, receiptsMissingField, receiptsWrongType, receiptsBadTime
    case notificationsNotJSON
    case registrationsNotJSON, registrationsMissingField, registrationsBadTime
    case attributionBadTime, attributionNoId, attributionUnbalancedQuote

    var source: Source {
        switch self {
        case .serverNotJSON, .serverMissingField, .serverWrongType, .serverBadTime, .serverBadAmount: .server
        case .receiptsNotJSON, .receiptsMissingField, .receiptsWrongType, .receiptsBadTime: .receipts
        case .notificationsNotJSON: .notifications
        case .registrationsNotJSON, .registrationsMissingField, .registrationsBadTime: .registrations
        case .attributionBadTime, .attributionNoId, .attributionUnbalancedQuote: .attribution
        }
    }

    var reason: String {
        switch self {
        case .serverNotJSON, .receiptsNotJSON, .notificationsNotJSON, .registrationsNotJSON: "not_json"
        case .serverMissingField, .receiptsMissingField, .registrationsMissingField, .attributionNoId: "missing_field"
        case .serverWrongType, .receiptsWrongType: "wrong_type"
        case .serverBadTime, .receiptsBadTime, .registrationsBadTime, .attributionBadTime: "bad_time"
        case .serverBadAmount: "bad_amount"
        case .attributionUnbalancedQuote: "unbalanced_quote"
        }
    }
}

extension SlotSimulation {
    static let badTimes = ["yesterday", "31/09/2026 10:00:00", "2026-13-45T99:00:00Z", "not-a-date", "2026-09-3T1:2:3Z"]

    mutating func plantBadLine(_ kind: BadLine) throws {
        let at = time(start + Clock.minute, asOf - Clock.minute)
        let userId = "u_" + String(100_000 + random.below(max(run.users, 1)))
        let product = Catalog.products[Catalog.consumables[random.below(5)]]
        var sortKey = at
        switch kind {
        case .serverNotJSON, .serverMissingField, .serverWrongType, .serverBadTime, .serverBadAmount:
            line.raw("{\"ts\":")
            if kind == .serverBadTime {
                line.string(random.pick(Self.badTimes))
            } else {
                line.jsonTime(at, .isoMillisZ)
            }
            if kind == .serverMissingField {
                line.raw(",\"event\":\"delivered\",\"user_id\":")
                line.string(userId)
                line.raw(",\"product_id\":")
                line.string(product.id)
                line.raw(",\"quantity\":1}")
            } else {
                line.raw(",\"event\":\"order_created\",\"order_id\":\"OrderID_")
                line.int(at)
                line.raw("_bad")
                line.int(slot)
                line.raw("\",\"user_id\":")
                if kind == .serverWrongType { line.int(100_000 + random.below(max(run.users, 1))) } else { line.string(userId) }
                line.raw(",\"product_id\":")
                line.string(product.id)
                line.raw(kind == .serverBadAmount ? ",\"price\":\"abc\",\"currency\":\"USD\"}" : ",\"price\":\"0.99\",\"currency\":\"USD\"}")
            }
        case .receiptsNotJSON, .receiptsMissingField, .receiptsWrongType, .receiptsBadTime:
            line.raw("{\"received_at\":")
            if kind == .receiptsBadTime { line.string(random.pick(Self.badTimes)) } else { line.jsonTime(at, .isoSecondsZ) }
            if kind != .receiptsMissingField {
                line.raw(",\"user_id\":")
                if kind == .receiptsWrongType { line.int(100_000 + random.below(max(run.users, 1))) } else { line.string(userId) }
            }
            line.raw(",\"order_id\":null,\"response\":{\"status\":0,\"environment\":\"Production\",\"receipt\":{\"bundle_id\":\"com.example.game\",\"in_app\":[{\"quantity\":\"1\",\"product_id\":")
            line.string(product.id)
            line.raw(",\"transaction_id\":\"")
            line.text(fakeTransactionId())
            line.raw("\",\"purchase_date_ms\":")
            line.msString(at)
            line.raw("}]}}}")
        case .notificationsNotJSON:
            line.raw("{\"signedPayload\":\"")
            var payload = LineBuffer(capacity: 256)
            payload.raw("{\"notificationType\":\"DID_RENEW\",\"notificationUUID\":\"")
            payload.text(uuid())
            payload.raw("\",\"signedDate\":")
            payload.int(at)
            payload.raw("}")
            line.jws(payload, random: &random)
            line.raw("\"}")
        case .registrationsNotJSON, .registrationsMissingField, .registrationsBadTime:
            line.raw("{\"ts\":")
            if kind == .registrationsBadTime { line.string(random.pick(Self.badTimes)) } else { line.jsonTime(at, .isoSecondsZ) }
            if kind != .registrationsMissingField {
                line.raw(",\"user_id\":")
                line.string("u_bad_" + String(slot))
            }
            line.raw(",\"method\":\"guest\",\"country\":\"US\"}")
        case .attributionBadTime, .attributionNoId, .attributionUnbalancedQuote:
            let country = Catalog.countries[0]
            let device = Device(idfv: kind == .attributionNoId ? "" : uuid(uppercase: true), idfa: nil,
                                appsflyerId: kind == .attributionNoId ? "" : String(at) + "-" + String(random.next() % 1_000_000_007),
                                installAt: at, profile: nil)
            let profile = LineBuffer.mmpProfile(campaign: Campaigns.acquisition[0], adset: "", touchAt: at, installAt: at,
                                                country: country, device: device, deviceType: AppsFlyer.deviceTypes[0],
                                                osVersion: AppsFlyer.osVersions[0], appVersion: AppsFlyer.appVersions[0],
                                                wifi: true, ipTail: 7, retargeting: false)
            line.mmpRow(profile, eventAt: at, name: "af_purchase",
                        value: "{\"af_revenue\":\"0.99\",\"af_currency\":\"USD\"}", revenue: "0.99", revenueCurrency: "USD",
                        revenueUSD: "0.9900", customerUserId: kind == .attributionNoId ? "" : userId)
            if kind == .attributionBadTime {
                // Replace the Event Time cell (after the three prefix cells) with text that is no time.
                let text = String(decoding: line.bytes, as: UTF8.self)
                var cells = text.split(separator: ",", maxSplits: 4, omittingEmptySubsequences: false).map(String.init)
                if cells.count == 5 { cells[3] = random.pick(Self.badTimes) }
                line.clear()
                line.text(cells.joined(separator: ","))
            }
            if kind == .attributionUnbalancedQuote {
                // A row cut inside its quoted Event Value: the quote never closes. It is written as the
                // file's last row so the open quote cannot swallow a following row.
                let path = run.folder.file(.attribution, at: at).relativePath
                guard !run.unbalancedQuoteFiles.contains(path) else {
                    line.clear()
                    return
                }
                run.unbalancedQuoteFiles.insert(path)
                let text = String(decoding: line.bytes, as: UTF8.self)
                if let range = text.range(of: "\"{\"\"af_revenue\"\":") {
                    line.clear()
                    line.text(String(text[..<range.upperBound]))
                    line.raw("\"\"0.9")
                }
                sortKey = .max
            }
        }
        if kind.reason == "not_json" {
            let keep = max(10, line.count * random.int(35, 85) / 100)
            line.bytes.removeSubrange(keep...)
        }
        let file = run.folder.file(kind.source, at: at)
        try run.folder.append(line.bytes, to: file, at: sortKey)
        line.clear()
        run.truth.reject(file: file.relativePath, reason: kind.reason)
    }

    /// An empty line in a JSON Lines file: counted as blank, not rejected.
    mutating func blankLine() throws {
        let source = [Source.server, .receipts, .notifications, .registrations][random.below(4)]
        let file = run.folder.file(source, at: time(start, asOf - Clock.minute))
        try run.folder.append([], to: file, at: time(start, asOf - Clock.minute))
        run.truth.blankLinesByFile[file.relativePath, default: 0] += 1
    }

    /// The last sign-up of the run, exactly at as-of: it pins the default as-of.
    mutating func closingSignUp() throws {
        line.raw("{\"ts\":")
        line.jsonTime(asOf, .isoSecondsZ)
        line.raw(",\"user_id\":")
        line.string(userId())
        line.raw(",\"method\":\"guest\",\"country\":\"US\"}")
        try run.folder.emit(.registrations, at: asOf, line)
        line.clear()
    }
}
