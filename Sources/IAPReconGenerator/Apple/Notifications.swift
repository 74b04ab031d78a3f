/// The four ways a notification reaches the server's log (CONTRACT.md §1.3).
enum NotificationForm: CaseIterable {
    /// `{"signedPayload":"<JWS>"}`, as Apple posts it.
    case signedPayload
    /// The decoded `ResponseBodyV2DecodedPayload`, `data.signedTransactionInfo` still a JWS.
    case decodedWithSignedInfo
    /// The decoded payload with `data.transactionInfo` / `data.renewalInfo` objects.
    case decoded
    /// App Store Server Notifications V1.
    case v1
}

/// One App Store Server Notification about one transaction.
struct NotificationSpec {
    var type: String
    var subtype: String?
    var uuid: String
    var signedDate: Millis
    var tx: AppleTransaction
    /// For subscriptions: whether it will renew, and when the chain started.
    var renewal: (autoRenew: Bool, chainStart: Millis)?
    var consumptionReason: String?
    /// V1: the chain's transactions for `unified_receipt.latest_receipt_info` (else just `tx`).
    var chain: [AppleTransaction] = []

    /// The V1 `notification_type` for a V2 type, or nil where V1 has none.
    var v1Type: String? {
        switch type {
        case "SUBSCRIBED": subtype == "RESUBSCRIBE" ? "INTERACTIVE_RENEWAL" : "INITIAL_BUY"
        case "DID_RENEW", "DID_CHANGE_RENEWAL_STATUS", "CONSUMPTION_REQUEST": type
        case "REFUND": tx.info.isSubscription ? "CANCEL" : "REFUND"
        default: nil
        }
    }
}

/// Scratch buffers for nested payloads (a JWS inside a JWS).
struct PayloadScratch {
    var payload = LineBuffer(capacity: 8192)
    var inner = LineBuffer(capacity: 4096)
    var renewal = LineBuffer(capacity: 2048)
}

extension LineBuffer {
    /// The notification as one log line in `form`.
    mutating func notification(_ spec: NotificationSpec, form: NotificationForm, scratch: inout PayloadScratch,
                                random: inout SeededRandom) {
        switch form {
        case .signedPayload:
            var payload = LineBuffer(capacity: 0)
            swap(&payload, &scratch.payload)
            payload.clear()
            payload.v2NotificationPayload(spec, signedInfo: true, scratch: &scratch, random: &random)
            raw("{\"signedPayload\":\"")
            jws(payload, random: &random)
            raw("\"}")
            swap(&payload, &scratch.payload)
        case .decodedWithSignedInfo:
            v2NotificationPayload(spec, signedInfo: true, scratch: &scratch, random: &random)
        case .decoded:
            v2NotificationPayload(spec, signedInfo: false, scratch: &scratch, random: &random)
        case .v1:
            v1Notification(spec)
        }
    }

    /// `ResponseBodyV2DecodedPayload` (apple-formats.md §2.2).
    private mutating func v2NotificationPayload(_ spec: NotificationSpec, signedInfo: Bool,
                                                scratch: inout PayloadScratch, random: inout SeededRandom) {
        raw("{\"notificationType\":\"")
        text(spec.type)
        if let subtype = spec.subtype {
            raw("\",\"subtype\":\"")
            text(subtype)
        }
        raw("\",\"notificationUUID\":\"")
        text(spec.uuid)
        raw("\",\"version\":\"2.0\",\"signedDate\":")
        int(spec.signedDate)
        raw(",\"data\":{\"appAppleId\":1460000000,\"bundleId\":\"com.example.game\",\"bundleVersion\":\"412\",\"environment\":\"")
        text(spec.tx.environment.rawValue)
        byte(UInt8(ascii: "\""))
        if let renewal = spec.renewal {
            let revoked = spec.tx.revocation(at: spec.signedDate) != nil
            raw(",\"status\":")
            int(revoked ? 5 : (spec.type == "EXPIRED" ? 2 : (renewal.autoRenew || spec.signedDate < spec.tx.expires(at: spec.signedDate) ? 1 : 2)))
        }
        if let reason = spec.consumptionReason {
            raw(",\"consumptionRequestReason\":\"")
            text(reason)
            byte(UInt8(ascii: "\""))
        }
        if signedInfo {
            scratch.inner.clear()
            scratch.inner.v2Transaction(spec.tx, signedDate: spec.signedDate, at: spec.signedDate)
            raw(",\"signedTransactionInfo\":\"")
            jws(scratch.inner, random: &random)
            byte(UInt8(ascii: "\""))
            if let renewal = spec.renewal, spec.signedDate % 4 == 0 {
                scratch.renewal.clear()
                scratch.renewal.v2RenewalInfo(spec.tx, autoRenew: renewal.autoRenew, signedDate: spec.signedDate,
                                              chainStart: renewal.chainStart)
                raw(",\"signedRenewalInfo\":\"")
                jws(scratch.renewal, random: &random)
                byte(UInt8(ascii: "\""))
            }
        } else {
            raw(",\"transactionInfo\":")
            v2Transaction(spec.tx, signedDate: spec.signedDate, at: spec.signedDate)
            if let renewal = spec.renewal, spec.signedDate % 4 == 0 {
                raw(",\"renewalInfo\":")
                v2RenewalInfo(spec.tx, autoRenew: renewal.autoRenew, signedDate: spec.signedDate,
                              chainStart: renewal.chainStart)
            }
        }
        raw("}}")
    }

    /// `responseBodyV1` (apple-formats.md §3), written as of `spec.signedDate`.
    private mutating func v1Notification(_ spec: NotificationSpec) {
        let tx = spec.tx
        let time = spec.signedDate
        raw("{\"notification_type\":\"")
        text(spec.v1Type ?? spec.type)
        raw("\",\"environment\":\"")
        text(tx.environment.v1Name)
        raw("\",\"bid\":\"com.example.game\",\"bvrs\":\"412\"")
        if let renewal = spec.renewal {
            raw(",\"auto_renew_product_id\":")
            string(tx.info.id)
            raw(renewal.autoRenew ? ",\"auto_renew_status\":\"true\"" : ",\"auto_renew_status\":\"false\"")
        }
        raw(",\"unified_receipt\":{\"status\":0,\"environment\":\"")
        text(tx.environment.rawValue)
        raw("\",\"latest_receipt\":\"MIIUVQYJKoZIhvcNAQcCoIIURjCCFEICAQExCzAJBgUrDgMCGgUA\",\"latest_receipt_info\":[")
        // The chain's latest transactions (Apple sends up to 100; a few keep lines short).
        let items = spec.chain.isEmpty ? [tx] : Array(spec.chain.filter { $0.purchase <= time }.suffix(3))
        var first = true
        for item in items {
            if !first { byte(UInt8(ascii: ",")) }
            first = false
            legacyItem(item, at: time, ownership: true)
        }
        byte(UInt8(ascii: "]"))
        if let renewal = spec.renewal {
            raw(",\"pending_renewal_info\":[")
            pendingRenewal(tx, autoRenew: renewal.autoRenew)
            byte(UInt8(ascii: "]"))
        }
        raw("}}")
    }
}
