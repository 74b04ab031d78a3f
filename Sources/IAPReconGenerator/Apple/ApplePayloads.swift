/// Writers for Apple's payloads: verifyReceipt responses and their items
/// (apple-formats.md §1), decoded V2 transactions and renewal infos (§2.4–2.5),
/// and JWS compact strings (§2.1).
extension LineBuffer {
    /// A `receipt.in_app[]` / `latest_receipt_info[]` item as Apple sends it: every value a string.
    mutating func legacyItem(_ tx: AppleTransaction, at time: Millis, ownership: Bool) {
        raw("{\"quantity\":\"")
        int(tx.quantity)
        raw("\",\"product_id\":")
        string(tx.info.id)
        raw(",\"transaction_id\":\"")
        text(tx.id)
        raw("\",\"original_transaction_id\":\"")
        text(tx.originalId)
        raw("\",\"purchase_date_ms\":")
        msString(tx.purchase)
        raw(",\"original_purchase_date_ms\":")
        msString(tx.originalPurchase)
        if tx.info.isSubscription {
            raw(",\"expires_date_ms\":")
            msString(tx.expires(at: time))
            raw(",\"web_order_line_item_id\":\"")
            text(tx.webOrderLineItemId)
            raw("\",\"subscription_group_identifier\":\"")
            text(tx.info.appleGroup)
            byte(UInt8(ascii: "\""))
        }
        raw(",\"is_trial_period\":\"false\"")
        if ownership || tx.familyShared {
            raw(tx.familyShared ? ",\"in_app_ownership_type\":\"FAMILY_SHARED\"" : ",\"in_app_ownership_type\":\"PURCHASED\"")
        }
        if let token = tx.appAccountToken {
            raw(",\"app_account_token\":\"")
            text(token)
            byte(UInt8(ascii: "\""))
        }
        if let revocation = tx.revocation(at: time) {
            raw(",\"cancellation_date_ms\":")
            msString(revocation.time)
            raw(",\"cancellation_reason\":\"")
            int(revocation.reason)
            byte(UInt8(ascii: "\""))
        }
        byte(UInt8(ascii: "}"))
    }

    /// A `pending_renewal_info[]` item for a subscription chain's latest transaction.
    mutating func pendingRenewal(_ tx: AppleTransaction, autoRenew: Bool) {
        raw("{\"auto_renew_product_id\":")
        string(tx.info.id)
        raw(",\"product_id\":")
        string(tx.info.id)
        raw(",\"original_transaction_id\":\"")
        text(tx.originalId)
        raw(autoRenew ? "\",\"auto_renew_status\":\"1\"}" : "\",\"auto_renew_status\":\"0\",\"expiration_intent\":\"1\",\"is_in_billing_retry_period\":\"0\"}")
    }

    /// A verifyReceipt answer with status 0. `inApp` and `latest` are already filtered to `time`.
    mutating func verifyReceiptResponse(environment: AppleEnvironment, inApp: [AppleTransaction],
                                        latest: [AppleTransaction], pending: [(AppleTransaction, Bool)],
                                        at time: Millis) {
        let production = environment == .production
        raw("{\"status\":0,\"environment\":")
        string(environment.rawValue)
        raw(production ? ",\"receipt\":{\"receipt_type\":\"Production\",\"adam_id\":1460000000"
                       : ",\"receipt\":{\"receipt_type\":\"ProductionSandbox\",\"adam_id\":0")
        raw(",\"bundle_id\":\"com.example.game\",\"application_version\":\"412\",\"request_date_ms\":")
        msString(time)
        raw(",\"in_app\":[")
        for (index, tx) in inApp.enumerated() {
            if index > 0 { byte(UInt8(ascii: ",")) }
            legacyItem(tx, at: time, ownership: false)
        }
        raw("]}")
        if !latest.isEmpty {
            raw(",\"latest_receipt_info\":[")
            for (index, tx) in latest.enumerated() {
                if index > 0 { byte(UInt8(ascii: ",")) }
                legacyItem(tx, at: time, ownership: true)
            }
            raw("],\"pending_renewal_info\":[")
            for (index, item) in pending.enumerated() {
                if index > 0 { byte(UInt8(ascii: ",")) }
                pendingRenewal(item.0, autoRenew: item.1)
            }
            raw("],\"latest_receipt\":\"MIIUVQYJKoZIhvcNAQcCoIIURjCCFEICAQExCzAJBgUrDgMCGgUA\"")
        }
        byte(UInt8(ascii: "}"))
    }

    /// A time as a V2 JSON number; Xcode transactions carry fractional milliseconds.
    mutating func v2Time(_ time: Millis, fractional: Bool) {
        int(time)
        if fractional {
            byte(UInt8(ascii: "."))
            padded(Int(time % 9973), width: 4)
        }
    }

    /// A decoded `JWSTransactionDecodedPayload`, as seen at `time` (revocation fields only once revoked,
    /// the expiry as extended by then).
    mutating func v2Transaction(_ tx: AppleTransaction, signedDate: Millis, at time: Millis) {
        let fractional = tx.environment == .xcode
        raw("{\"transactionId\":\"")
        text(tx.id)
        raw("\",\"originalTransactionId\":\"")
        text(tx.originalId)
        if tx.info.isSubscription {
            raw("\",\"webOrderLineItemId\":\"")
            text(tx.webOrderLineItemId)
        }
        raw("\",\"bundleId\":\"com.example.game\",\"productId\":")
        string(tx.info.id)
        if tx.info.isSubscription {
            raw(",\"subscriptionGroupIdentifier\":\"")
            text(tx.info.appleGroup)
            byte(UInt8(ascii: "\""))
        }
        raw(",\"purchaseDate\":")
        v2Time(tx.purchase, fractional: fractional)
        raw(",\"originalPurchaseDate\":")
        v2Time(tx.originalPurchase, fractional: fractional)
        if tx.info.isSubscription {
            raw(",\"expiresDate\":")
            v2Time(tx.expires(at: time), fractional: fractional)
        }
        raw(",\"quantity\":")
        int(tx.quantity)
        raw(",\"type\":")
        string(tx.info.type.appleName)
        if let token = tx.appAccountToken {
            raw(",\"appAccountToken\":\"")
            text(token)
            byte(UInt8(ascii: "\""))
        }
        raw(tx.familyShared ? ",\"inAppOwnershipType\":\"FAMILY_SHARED\"" : ",\"inAppOwnershipType\":\"PURCHASED\"")
        raw(",\"signedDate\":")
        v2Time(signedDate, fractional: fractional)
        if let revocation = tx.revocation(at: time) {
            raw(",\"revocationReason\":")
            int(revocation.reason)
            raw(",\"revocationDate\":")
            int(revocation.time)
            if revocation.showsType {
                raw(",\"revocationType\":\"")
                text(revocation.type.appleName)
                byte(UInt8(ascii: "\""))
            }
            if case .prorated(let percentage) = revocation.type {
                raw(",\"revocationPercentage\":")
                int(percentage)
            }
        }
        raw(",\"environment\":\"")
        text(tx.environment.rawValue)
        raw(tx.isRenewal ? "\",\"transactionReason\":\"RENEWAL\",\"storefront\":\"" : "\",\"transactionReason\":\"PURCHASE\",\"storefront\":\"")
        let country = Catalog.countries[tx.country]
        text(country.storefront)
        raw("\",\"storefrontId\":\"")
        text(country.storefrontId)
        // Apple's price is the transaction's, for its whole quantity.
        raw("\",\"price\":")
        int(tx.priceMilli * Int64(tx.quantity))
        raw(",\"currency\":\"")
        text(Catalog.currencies[tx.currency].code)
        raw("\"}")
    }

    /// A decoded `JWSRenewalInfoDecodedPayload` for a chain whose latest transaction is `tx`.
    mutating func v2RenewalInfo(_ tx: AppleTransaction, autoRenew: Bool, signedDate: Millis, chainStart: Millis) {
        raw("{\"originalTransactionId\":\"")
        text(tx.originalId)
        raw("\",\"autoRenewProductId\":")
        string(tx.info.id)
        raw(",\"productId\":")
        string(tx.info.id)
        raw(autoRenew ? ",\"autoRenewStatus\":1" : ",\"autoRenewStatus\":0,\"expirationIntent\":1")
        raw(",\"signedDate\":")
        int(signedDate)
        raw(",\"environment\":\"")
        text(tx.environment.rawValue)
        raw("\",\"recentSubscriptionStartDate\":")
        int(chainStart)
        raw(",\"renewalDate\":")
        int(tx.expires(at: signedDate))
        raw(",\"renewalPrice\":")
        int(tx.priceMilli)
        raw(",\"currency\":\"")
        text(Catalog.currencies[tx.currency].code)
        raw("\"}")
    }

    /// `payload` as a JWS compact string (unquoted), signed with the test chain.
    ///
    /// The nonce takes eight words of `random`, so the signature is reproducible and the
    /// stream advances as it always has: the rest of the data does not depend on signing.
    mutating func jws(_ payload: LineBuffer, random: inout SeededRandom) {
        let start = bytes.count
        bytes.append(contentsOf: TestSigningChain.signer.encodedHeader)
        byte(UInt8(ascii: "."))
        Base64.appendURL(payload.bytes, to: &bytes)
        var seed: [UInt8] = []
        seed.reserveCapacity(64)
        for _ in 0..<8 {
            var word = random.next()
            withUnsafeBytes(of: &word) { seed.append(contentsOf: $0) }
        }
        let signature = TestSigningChain.signer.sign(bytes[start...], nonceSeed: seed)
        byte(UInt8(ascii: "."))
        Base64.appendURL(signature, to: &bytes)
    }
}
