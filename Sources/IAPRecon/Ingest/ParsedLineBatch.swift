extension LineBatch {
    /// `parsed` packed for the store. With `packingRows` false, only the counts (what `validate`
    /// prints). Device ids are packed as their `pseudonyms`.
    init(_ parsed: [ParsedLine], packingRows: Bool = true, pseudonyms: DeviceIDPseudonyms? = nil) {
        self.init()
        for line in parsed {
            lines += 1
            counts.count(line.outcome)
            switch line.outcome {
            case .accepted(let raw) where packingRows, .ignoredKeeping(let raw) where packingRows:
                for row in raw { append(row, line: line.line, pseudonyms: pseudonyms) }
                // A notification's own row comes first; a set lookup, so a known type costs no allocation.
                if let notification = raw.first.flatMap(NotificationLine.typeAndVersion(of:)),
                   !NotificationParser.isKnown(type: notification.type, version: notification.version) {
                    undocumentedTypes.append((line.line, notification.type))
                }
                // An app row of a code Apple does not list may be an in-app type Apple added: left out of the tie-out, it is named.
                if let productType = raw.first.flatMap(SalesReportLine.productType(ofCoverage:)),
                   !AppleSalesParser.isDocumented(productType: productType) {
                    undocumentedTypes.append((line.line, productType))
                }
            case .accepted, .ignoredKeeping:
                break
            case .rejected(let reason):
                append(Reject(line: line.line, reason: reason, text: line.rejectedText ?? ""))
            case .blank, .ignored:
                break
            }
        }
    }
}
