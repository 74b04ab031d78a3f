/// `receipts/*.jsonl`: each verification the server made, with Apple's answer (CONTRACT.md §1.2).
///
/// One line yields a verification row (item 0) and one row per transaction it
/// carries (items 1...n). An iOS 7 receipt lists every transaction of the
/// app, so the same transaction recurs in many lines; normalize merges them.
/// Only `status` 0 and 21006 verify: another status is stored as a failed
/// verification with no transactions. A verifying response that carries no
/// transaction anywhere is rejected rather than accepted empty.
enum ReceiptParser {
    /// The statuses whose response carries verified data: 0, and 21006 (an iOS 6 receipt of an
    /// expired subscription, which Apple still decodes).
    static let verifyingStatuses: Set<Int64> = [0, 21006]

    /// A line's `shape`: the names of the parts it has, joined by `+` in this order, indexed by which
    /// it has (bit 0 `response`, 1 `transactions`, 2 `signed_transactions`). Spelled once here rather
    /// than joined from an array for every line.
    static let shapes = [
        "", "response", "transactions", "response+transactions", "signed_transactions", "response+signed_transactions",
        "transactions+signed_transactions", "response+transactions+signed_transactions",
    ]

    static func parse(_ fields: Fields, rules: LineRules = LineRules()) throws(LineReject) -> LineOutcome {
        let receivedMs = try fields.requiredTime("received_at")
        let userID = try fields.requiredString("user_id")
        let orderID = try fields.string("order_id")
        let claimedTransactionID = try fields.appleString("transaction_id")
        // The endpoint the server called, for a response that does not say (CONTRACT.md §1.2).
        let calledEnvironment = try fields.appleValue("environment", .environment)
        let response = try fields.object("response")
        let decoded = try fields.array("transactions")
        let signed = try fields.array("signed_transactions")
        guard response != nil || decoded != nil || signed != nil else {
            throw LineReject("missing required field 'response', 'transactions' or 'signed_transactions'")
        }
        var kept = TransactionRows(receivedMs: receivedMs, userID: userID, orderID: orderID)
        // Refund times inside the payloads, judged by the clock with `received_at`, last.
        var reported: [ReportedTime] = []
        var status: Int64 = 0
        var environment: String?
        var bundleID: String?
        var shape = 0
        if let responseFields = response {
            shape |= 1
            guard let code = try responseFields.integer("status") else { throw .missing("response.status") }
            status = code
            let answered = try responseFields.appleValue("environment", .environment)
            environment = answered ?? calledEnvironment ?? "Production"
            let receipt = try responseFields.object("receipt")
            if let receiptFields = receipt {
                // iOS 6 receipts name the bundle `bid`.
                let iOS6Bundle = try receiptFields.appleString("bid")
                bundleID = try receiptFields.appleString("bundle_id") ?? iOS6Bundle
            }
            try rules.checkBundle(bundleID)
            if verifyingStatuses.contains(status) {
                try forEachResponseTransaction(responseFields, receipt: receipt, environment: environment, reported: &reported, into: &kept)
            }
        }
        if let decoded {
            shape |= 2
            for (index, element) in decoded.enumerated() {
                guard element.kind == .object else {
                    throw .wrongType("transactions[\(index)]", expected: "an object", got: element)
                }
                var transaction = try serverAPITransaction(Fields(element, in: "", key: "transactions", index: index), rules: rules,
                                                           bundleID: &bundleID, reported: &reported)
                kept.keep(&transaction)
            }
        }
        if let signed {
            shape |= 4
            for (index, element) in signed.enumerated() {
                guard element.kind == .string else { throw .wrongType("signed_transactions[\(index)]", expected: "a JWS string", got: element) }
                var transaction = try withJWSPayload(element, in: "", key: "signed_transactions", index: index) { payloadFields, jws throws(LineReject) in
                    try checkSignature(jws, path: payloadFields.name, rules: rules,
                                       signedMs: try payloadFields.time("signedDate") ?? receivedMs,
                                       environment: try payloadFields.appleValue("environment", .environment))
                    return try serverAPITransaction(payloadFields, rules: rules, bundleID: &bundleID, reported: &reported)
                }
                kept.keep(&transaction)
            }
        }
        // A verified answer with nothing in it is not a verification of anything (CONTRACT.md §1.2).
        if kept.count == 0, verifyingStatuses.contains(status) { throw LineReject("no transaction in response") }
        // A line that names no transaction but carries exactly one names that one.
        let namedTransactionID = claimedTransactionID ?? (kept.count == 1 ? kept.firstTransactionID : nil)
        kept.rows.insert(VerificationLine(
            receivedMs: receivedMs, userID: userID, orderID: orderID, transactionID: namedTransactionID, status: status,
            environment: environment, bundleID: bundleID, shape: Self.shapes[shape]
        ).rawRow(), at: 0)
        try rules.checkEventTime(receivedMs, field: "received_at", reported: reported)
        return .accepted(kept.rows)
    }

    /// A receipt line's rows after its verification's: each transaction is completed with the
    /// line's time, user and order and made into its rows as soon as it is decoded, where it lies.
    /// Kept in an array until the line was read, each would be copied on its way in and out (every
    /// one of its strings retained and released).
    private struct TransactionRows {
        let receivedMs: Int64
        let userID: String
        let orderID: String?
        var rows: [RawRow] = []
        var count = 0
        var firstTransactionID: String?

        init(receivedMs: Int64, userID: String, orderID: String?) {
            self.receivedMs = receivedMs
            self.userID = userID
            self.orderID = orderID
            // Room for the verification's row and one transaction's from the start.
            rows.reserveCapacity(2)
        }

        mutating func keep(_ transaction: inout AppleTransaction) {
            transaction.eventMs = receivedMs
            transaction.userID = userID
            transaction.claimedOrderID = orderID
            count += 1
            if count == 1 { firstTransactionID = transaction.transactionID }
            transaction.appendRawRows(item: count, to: &rows)
        }
    }

    /// Keeps every transaction a verifying response carries, in order: `receipt.in_app` (iOS 7), or
    /// the receipt itself (iOS 6: it has a `transaction_id` and no `in_app`), then
    /// `latest_receipt_info` and `latest_expired_receipt_info`.
    private static func forEachResponseTransaction(
        _ response: Fields, receipt: Fields?, environment: String?, reported: inout [ReportedTime], into kept: inout TransactionRows
    ) throws(LineReject) {
        if let receiptFields = receipt {
            if try receiptFields.element("in_app") == nil, try receiptFields.element("transaction_id") != nil {
                var transaction = try AppleTransaction(receiptItem: receiptFields, origin: .receipt, environment: environment,
                                                       reported: &reported)
                kept.keep(&transaction)
            } else {
                try forEachItemTransaction(receiptFields, key: "in_app", origin: .receipt, environment: environment, reported: &reported) {
                    kept.keep(&$0)
                }
            }
        }
        try forEachItemTransaction(response, key: "latest_receipt_info", origin: .receipt, environment: environment, reported: &reported) {
            kept.keep(&$0)
        }
        try forEachItemTransaction(response, key: "latest_expired_receipt_info", origin: .receipt, environment: environment,
                                   reported: &reported) { kept.keep(&$0) }
    }

    /// A decoded App Store Server API transaction: Production unless it says otherwise, of our
    /// bundle. The first app a line names is the line's (`bundleID`); a transaction of another
    /// keeps its own apart.
    private static func serverAPITransaction(_ fields: Fields, rules: LineRules, bundleID: inout String?,
                                             reported: inout [ReportedTime]) throws(LineReject) -> AppleTransaction {
        let bundle = try fields.appleString("bundleId")
        try rules.checkBundle(bundle)
        var transaction = try AppleTransaction(v2: fields, origin: .serverAPI, environment: "Production", reported: &reported)
        if bundleID == nil { bundleID = bundle } else if bundle != bundleID { transaction.bundleApartFromLine = bundle }
        return transaction
    }

    /// Appends to `transactions` the transactions under `key`: an array, or one object (iOS 6 receipts,
    /// pre-2021 V1 notifications).
    static func items(_ fields: Fields, key: String, origin: TransactionOrigin, environment: String?,
                      reported: inout [ReportedTime], into transactions: inout [AppleTransaction]) throws(LineReject) {
        try forEachItemTransaction(fields, key: key, origin: origin, environment: environment, reported: &reported) { transactions.append($0) }
    }

    /// Calls `body` with each transaction under `key` (as `items`) as it is decoded.
    private static func forEachItemTransaction(
        _ fields: Fields, key: String, origin: TransactionOrigin, environment: String?, reported: inout [ReportedTime],
        _ body: (inout AppleTransaction) -> Void
    ) throws(LineReject) {
        try forEachItem(fields, key: key) { item throws(LineReject) in
            var transaction = try AppleTransaction(receiptItem: item, origin: origin, environment: environment, reported: &reported)
            body(&transaction)
        }
    }

    /// The transaction ids of the items under `keys` that an upgrade cancelled (`AppleTransaction.isUpgraded`).
    static func upgradedTransactionIDs(_ fields: Fields, keys: [String]) throws(LineReject) -> Set<String> {
        var ids = Set<String>()
        for key in keys {
            try forEachItem(fields, key: key) { item throws(LineReject) in
                if try AppleTransaction.isUpgraded(item), let id = try item.appleString("transaction_id") { ids.insert(id) }
            }
        }
        return ids
    }

    /// Calls `body` with each item under `key`: an array of objects, or one object. Every element
    /// is checked to be an object before the first is read, so a line with a bad element is rejected
    /// for it whatever its items hold; and no array of the items is made.
    private static func forEachItem(_ fields: Fields, key: String, _ body: (Fields) throws(LineReject) -> Void) throws(LineReject) {
        guard let value = try fields.element(key) else { return }
        switch value.kind {
        case .object: return try body(Fields(value, in: fields.path, key: key))
        case .array: break
        default: throw .wrongType(fields.path + key, expected: "an array or an object", got: value)
        }
        let parentPath = fields.path
        for (index, element) in value.elements.enumerated() where element.kind != .object {
            throw .wrongType("\(parentPath)\(key)[\(index)]", expected: "an object", got: element)
        }
        for (index, element) in value.elements.enumerated() {
            try body(Fields(element, in: parentPath, key: key, index: index))
        }
    }
}

/// Rejects a JWS the run does not trust (CONTRACT.md §1.8), naming the field.
///
/// `signedMs` is the payload's `signedDate`, else the carrying line's time (a receipt's
/// `received_at`, a notification's `signedDate`); nil when there is none, and then the chain is
/// judged at the run's clock, as Apple's library judges it at the current time, and the clocks
/// that judge it alike are recorded (`LineRules.clockJudged`). `environment` is its payload's.
func checkSignature(
    _ jws: UnsafeBufferPointer<UInt8>, path: @autoclosure () -> String, rules: LineRules, signedMs: Int64?, environment: String?
) throws(LineReject) {
    let verdict = rules.signatures.judge(jws, signedMs: signedMs ?? rules.nowMs, environment: environment)
    if signedMs == nil, let validity = verdict.validity {
        rules.clockJudged?.judged(validity: validity, atClock: rules.nowMs)
    }
    if let failure = verdict.failure {
        throw LineReject("\(failure) in '\(path())'")
    }
}

/// Decodes the payload of the JWS held in the string `jws`, the value of `key` (element `index` of
/// it, when given) in the object whose path is `parentPath`, turning failures into a reject naming
/// the field, and calls `body` with its fields (named under it) and the JWS's text, for its signature.
func withJWSPayload<Result>(
    _ jws: JSONElement, in parentPath: String, key: String, index: Int? = nil,
    _ body: (_ payload: Fields, _ jws: UnsafeBufferPointer<UInt8>) throws(LineReject) -> Result
) throws(LineReject) -> Result {
    try jws.withJWSPayload(failure: { error in
        let why: String
        switch error {
        case .notThreeParts: why = "not three dot-separated parts"
        case .badBase64: why = "payload is not base64url"
        case .payload(let syntax): why = "payload is not JSON: \(syntax)"
        case .payloadNotObject: why = "payload is not a JSON object"
        }
        return LineReject("bad JWS in '\(Fields.name(in: parentPath, key: key, index: index))': \(why)")
    }) { text, payload throws(LineReject) in
        try body(Fields(payload, in: parentPath, key: key, index: index), text)
    }
}
