/// `notifications/*.jsonl`: App Store Server Notifications as received (CONTRACT.md §1.3).
///
/// Three shapes: V2 as received (`signedPayload`), V2 already decoded
/// (`notificationType` with `data.signedTransactionInfo` or
/// `data.transactionInfo`), and V1 (`notification_type` with
/// `unified_receipt.latest_receipt_info[]`, or its pre-2021 form without
/// `unified_receipt`). One line yields a notification
/// row (item 0) and one row per transaction it carries.
enum NotificationParser {
    /// The V2 `notificationType` values Apple documents. A type not among them is kept as any other
    /// (CONTRACT.md §1.3), but ingest names it: Apple adds types, and a new one may mean a refund.
    static let knownV2Types: Set<String> = [
        "SUBSCRIBED", "DID_CHANGE_RENEWAL_PREF", "DID_CHANGE_RENEWAL_STATUS", "OFFER_REDEEMED", "DID_RENEW", "EXPIRED",
        "DID_FAIL_TO_RENEW", "GRACE_PERIOD_EXPIRED", "PRICE_INCREASE", "REFUND", "REFUND_DECLINED", "CONSUMPTION_REQUEST",
        "RENEWAL_EXTENDED", "REVOKE", "TEST", "RENEWAL_EXTENSION", "REFUND_REVERSED", "EXTERNAL_PURCHASE_TOKEN", "ONE_TIME_CHARGE",
        "RESCIND_CONSENT", "METADATA_UPDATE", "MIGRATION", "PRICE_CHANGE",
    ]
    /// The V1 `notification_type` values Apple documents, and `RENEWAL`, which Apple sent until 2021 (old files hold it).
    static let knownV1Types: Set<String> = [
        "INITIAL_BUY", "CANCEL", "RENEWAL", "INTERACTIVE_RENEWAL", "DID_CHANGE_RENEWAL_PREF", "DID_CHANGE_RENEWAL_STATUS",
        "DID_FAIL_TO_RENEW", "DID_RECOVER", "DID_RENEW", "PRICE_INCREASE_CONSENT", "REFUND", "REVOKE", "CONSUMPTION_REQUEST",
    ]

    /// The types whose transaction Apple sends with its `revocationDate` (V2) or `cancellation_date_ms` (V1).
    static let refundTypes: Set<String> = ["REFUND", "REVOKE"]
    /// The V2 notifications Apple documents without an In-App Purchase transaction, by type, with the
    /// one subtype that comes without it where the type's others carry one (nil: any subtype). A `TEST`,
    /// which the developer asks for, is about no purchase; a `RENEWAL_EXTENSION` `SUMMARY` carries a
    /// `summary` counting a mass extension; an `EXTERNAL_PURCHASE_TOKEN` an `externalPurchaseToken`, a
    /// purchase made outside the App Store; a `RESCIND_CONSENT` an `appData` holding the app's own
    /// transaction. Apple sends every other type it documents with `data`, whose `signedTransactionInfo`
    /// it documents for every type, unlike `signedRenewalInfo` or `status`, which only subscriptions
    /// carry. So the rule names the few that may lack a transaction rather than the many that need one,
    /// and a type Apple adds later (unknown here, named by ingest's warning) is not rejected for what no
    /// documentation says it carries.
    static let withoutTransaction: [String: String?] = [
        "TEST": nil, "RENEWAL_EXTENSION": "SUMMARY", "EXTERNAL_PURCHASE_TOKEN": nil, "RESCIND_CONSENT": nil,
    ]

    /// Whether a V2 notification of `type` and `subtype` always comes with its transaction: without one,
    /// a renewal, a purchase or a refund with its key misspelled would change no money, and nobody would know.
    static func needsTransaction(type: String, subtype: String?) -> Bool {
        guard knownV2Types.contains(type) else { return false }
        guard let exempt = withoutTransaction[type] else { return true }
        return exempt.map { $0 != subtype } ?? false
    }

    /// Whether Apple documents `type` for notifications of `version` (`1` or `2`, as `NotificationLine.version`).
    static func isKnown(type: String, version: String) -> Bool {
        version == "1" ? knownV1Types.contains(type) : knownV2Types.contains(type)
    }

    static func parse(_ fields: Fields, rules: LineRules = LineRules()) throws(LineReject) -> LineOutcome {
        if let signed = try fields.stringElement("signedPayload") {
            return try withJWSPayload(signed, in: "", key: "signedPayload") { payloadFields, jws throws(LineReject) in
                let notification = try header(payloadFields)
                // Without a signedDate the chain is judged now, the run's clock, as Apple's library judges it at the current time.
                try checkSignature(jws, path: "signedPayload", rules: rules, signedMs: notification.signedMs, environment: notification.environment)
                // The JWS inside are bytes of the payload that signature covers: trusted with it, not checked again.
                // Not when it is signed locally (Xcode, LocalTesting), under a chain trusted for such payloads only:
                // a Production transaction inside would count though no App Store chain signed it. They are checked on their own.
                let locallySigned = JWSVerifier.isLocal(notification.environment)
                return try parseV2(payloadFields, rules: locallySigned ? rules : rules.trustingInnerJWS, header: notification,
                                   locallySigned: locallySigned)
            }
        }
        if try fields.element("notificationType") != nil { return try parseV2(fields, rules: rules) }
        if try fields.element("notification_type") != nil { return try parseV1(fields, rules: rules) }
        throw LineReject("missing required field 'signedPayload', 'notificationType' or 'notification_type'")
    }

    /// The notification-level fields of a decoded V2 payload.
    struct V2Header: Equatable {
        var type: String
        var subtype: String?
        var uuid: String?
        var signedMs: Int64?
        var environment: String?
    }

    static func header(_ fields: Fields) throws(LineReject) -> V2Header {
        var header = V2Header(
            type: try fields.requiredString("notificationType"),
            subtype: try fields.string("subtype"),
            uuid: try fields.string("notificationUUID"),
            signedMs: try fields.time("signedDate"))
        for key in ["data", "summary", "appData"] {
            if let nested = try fields.object(key) {
                header.environment = try nested.appleValue("environment", .environment)
                break
            }
        }
        return header
    }

    /// The app a V2 notification is about: `bundleId` of its `data` (or `summary`, `appData`, or
    /// `externalPurchaseToken`, the only object an EXTERNAL_PURCHASE_TOKEN carries).
    static func bundle(_ fields: Fields) throws(LineReject) -> String? {
        for key in ["data", "summary", "appData", "externalPurchaseToken"] {
            if let nested = try fields.object(key) { return try nested.appleString("bundleId") }
        }
        return nil
    }

    /// Rejects a transaction of an App Store environment in a locally signed payload (`locallySigned`): a chain
    /// trusted for Xcode and LocalTesting payloads alone vouches for nothing Apple's chain would have to sign.
    private static func checkLocalEnvelope(_ locallySigned: Bool, carrying environment: String?, in path: String) throws(LineReject) {
        guard locallySigned, let environment, !JWSVerifier.isLocal(environment) else { return }
        throw LineReject("untrusted certificate chain (locally signed, yet its transaction is a \(environment) one) in '\(path)'")
    }

    /// A V2 notification's payload; every JWS inside it is checked with `rules.signatures` (its own
    /// `signedDate`, else the notification's, else the run's clock, is its signing time). With `--bundle-id`, a
    /// notification or transaction of another app is rejected, as a receipt of it is (CONTRACT.md §1.2).
    /// `knownHeader` is the payload's `header` when the caller has read it already (a signed payload's,
    /// for its signature). `locallySigned`: the payload is a `signedPayload` whose chain is trusted for
    /// Xcode and LocalTesting payloads only.
    static func parseV2(_ fields: Fields, rules: LineRules = LineRules(), header knownHeader: V2Header? = nil,
                        locallySigned: Bool = false) throws(LineReject) -> LineOutcome {
        let header: V2Header
        if let knownHeader { header = knownHeader } else { header = try Self.header(fields) }
        var bundleID = try bundle(fields)
        try rules.checkBundle(bundleID)
        // A transaction of another app is rejected too; it names the notification's app where `data`
        // does not, and keeps its own apart where `data` names another.
        func transactionBundle(_ transaction: Fields) throws(LineReject) -> String? {
            let transactionBundle = try transaction.appleString("bundleId")
            try rules.checkBundle(transactionBundle)
            if bundleID == nil { bundleID = transactionBundle } else if transactionBundle != bundleID { return transactionBundle }
            return nil
        }
        var transaction: AppleTransaction?
        let refunds = Self.refundTypes.contains(header.type)
        // Its refund time, judged by the clock with `signedDate`, last.
        var reported: [ReportedTime] = []
        if let dataFields = try fields.object("data") {
            if let jws = try dataFields.stringElement("signedTransactionInfo") {
                try withJWSPayload(jws, in: dataFields.path, key: "signedTransactionInfo") { payload, jws throws(LineReject) in
                    let environment = try payload.appleValue("environment", .environment) ?? header.environment
                    try checkSignature(jws, path: payload.name, rules: rules, signedMs: try payload.time("signedDate") ?? header.signedMs,
                                       environment: environment)
                    // An App Store transaction's own JWS may hold, yet what a locally signed payload says of it (its type,
                    // its signedDate) is the local chain's word alone: a REFUND_REVERSED so signed would undo its refunds.
                    try checkLocalEnvelope(locallySigned, carrying: environment, in: payload.name)
                    let apart = try transactionBundle(payload)
                    transaction = try AppleTransaction(v2: payload, origin: .notification, environment: header.environment,
                                                       refund: refunds, reported: &reported)
                    transaction?.bundleApartFromLine = apart
                }
            } else if let infoFields = try dataFields.object("transactionInfo") {
                // A decoded transaction has no signature of its own: in a locally signed payload it is
                // vouched for by a chain trusted for test purchases alone, and an App Store one would count
                // though no App Store chain signed it (as with a signed one above, what the payload says of it).
                try checkLocalEnvelope(locallySigned, carrying: try infoFields.appleValue("environment", .environment), in: infoFields.name)
                let apart = try transactionBundle(infoFields)
                transaction = try AppleTransaction(v2: infoFields, origin: .notification, environment: header.environment,
                                                   refund: refunds, reported: &reported)
                transaction?.bundleApartFromLine = apart
            }
            if let jws = try dataFields.stringElement("signedRenewalInfo") {
                try withJWSPayload(jws, in: dataFields.path, key: "signedRenewalInfo") { renewal, jws throws(LineReject) in
                    try checkSignature(jws, path: renewal.name, rules: rules, signedMs: try renewal.time("signedDate") ?? header.signedMs,
                                       environment: try renewal.appleValue("environment", .environment) ?? header.environment)
                }
            }
        }
        if transaction == nil, Self.needsTransaction(type: header.type, subtype: header.subtype) {
            let data = fields.path + "data."
            throw LineReject("\(header.type) without a transaction: no '\(data)signedTransactionInfo' or '\(data)transactionInfo'")
        }
        // A refund is placed at its revocation date (CONTRACT.md §1.3): without one it would count as no
        // refund at all, and nobody would know.
        if Self.refundTypes.contains(header.type), transaction != nil, transaction?.revocationMs == nil {
            throw LineReject("\(header.type) without revocationDate in its transaction")
        }
        // A reversal undoes the refunds before its signing time (`AppleTransactions`): without one it would undo none,
        // and nobody would know.
        if header.type == "REFUND_REVERSED", transaction != nil, header.signedMs == nil {
            throw LineReject("REFUND_REVERSED without signedDate")
        }
        // Completed where it lies: a copy of a transaction is a copy of each of its strings.
        transaction?.eventMs = header.signedMs
        transaction?.notificationUUID = header.uuid
        transaction?.notificationType = header.type
        // Room for the transaction's row from the start (one more when it names another app).
        var rows: [RawRow] = []
        rows.reserveCapacity(transaction == nil ? 1 : 2)
        rows.append(NotificationLine(
            uuid: header.uuid, type: header.type, subtype: header.subtype, signedMs: header.signedMs,
            environment: transaction?.environment ?? header.environment, version: "2", transactionID: transaction?.transactionID,
            bundleID: bundleID
        ).rawRow())
        transaction?.appendRawRows(item: 1, to: &rows)
        try rules.checkEventTime(header.signedMs, field: fields.path + "signedDate", reported: reported)
        return .accepted(rows)
    }

    /// A V1 body: `unified_receipt.latest_receipt_info[]`, or before 2021 root
    /// `latest_receipt_info` / `latest_expired_receipt_info` (an object or an array), root
    /// `environment` (`PROD`), and a `CANCEL`'s time in root `cancellation_date_ms`: a refund's, or
    /// the end of the plan an upgrade replaced. With `--bundle-id`, a body whose `bid` (V1's only
    /// bundle field) names another app is rejected, as a V2 notification of it is.
    static func parseV1(_ fields: Fields, rules: LineRules = LineRules()) throws(LineReject) -> LineOutcome {
        let type = try fields.requiredString("notification_type")
        let bundleID = try fields.appleString("bid")
        try rules.checkBundle(bundleID)
        var environment = try fields.appleValue("environment", .v1Environment)
        var transactions: [AppleTransaction] = []
        // Refund times, judged by the clock last (V1 bodies carry no signing time).
        var reported: [ReportedTime] = []
        if let unifiedFields = try fields.object("unified_receipt") {
            environment = try unifiedFields.appleValue("environment", .environment) ?? environment
            try ReceiptParser.items(unifiedFields, key: "latest_receipt_info", origin: .notification, environment: environment,
                                    reported: &reported, into: &transactions)
        }
        if transactions.isEmpty {
            try ReceiptParser.items(fields, key: "latest_receipt_info", origin: .notification, environment: environment,
                                    reported: &reported, into: &transactions)
            try ReceiptParser.items(fields, key: "latest_expired_receipt_info", origin: .notification, environment: environment,
                                    reported: &reported, into: &transactions)
            // The refund is the latest purchase's (these bodies carry that one alone, as an object);
            // Apple sends CANCEL for an upgrade too, whose item says so, and that is no refund.
            if type == "CANCEL", let cancelledMs = try fields.time("cancellation_date_ms"),
               let latest = transactions.indices.max(by: { transactions[$0].purchaseMs < transactions[$1].purchaseMs }),
               transactions[latest].revocationMs == nil {
                try LineRules.checkProductionDate(cancelledMs, field: fields.path + "cancellation_date_ms", environment: environment)
                reported.append(ReportedTime(field: fields.path + "cancellation_date_ms", ms: cancelledMs))
                if try ReceiptParser.upgradedTransactionIDs(fields, keys: ["latest_receipt_info", "latest_expired_receipt_info"])
                    .contains(transactions[latest].transactionID) {
                    transactions[latest].endPeriod(atUpgrade: cancelledMs)
                } else {
                    transactions[latest].revocationMs = cancelledMs
                }
            }
        }
        guard !transactions.isEmpty else { throw LineReject("no transaction in notification") }
        // As for V2: a refund none of whose transactions says when would count as no refund.
        if Self.refundTypes.contains(type), !transactions.contains(where: { $0.revocationMs != nil }) {
            throw LineReject("\(type) without cancellation_date_ms in its transactions")
        }
        for index in transactions.indices { transactions[index].notificationType = type }
        var rows = [NotificationLine(
            uuid: nil, type: type, subtype: nil, signedMs: nil, environment: environment, version: "1",
            transactionID: transactions.first?.transactionID, bundleID: bundleID
        ).rawRow()]
        for index in transactions.indices { transactions[index].appendRawRows(item: index + 1, to: &rows) }
        try rules.checkReportedTimes(reported)
        return .accepted(rows)
    }
}
