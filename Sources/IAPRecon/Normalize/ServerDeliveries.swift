/// Delivery lines → deliveries: log shippers repeat lines, and each delivery counts once.
///
/// A delivery is one per transaction and `delivery_id` (an id is unique within its transaction
/// only, CONTRACT.md §1.1), or per identical time, user, transaction, product and quantity where
/// there is none; so a delivery never spans transactions. Its first line in file order (files in
/// path order, then line) gives its fields, and the lines it had are its copies; but its time is
/// its earliest line's, since a retry logged later (or by a host whose file sorts first) delivered
/// nothing new, and its order is the first line's that names one, since a copy may name the order
/// the first line left out.
///
/// The store keeps every accepted line once; the copies are collapsed each time a stage reads
/// them (here, or as `StoredDeliveries` reads them), so a replaced or late file needs no staged
/// copy rebuilt.
enum ServerDeliveries {
    /// `lines`, all of one transaction and in file order, as its deliveries: each delivery's first
    /// line (with its earliest time, and the first order its lines name) and where it is, and how
    /// many lines the log had of it, in the order of their first lines. A `StoredDeliveries.Cursor`
    /// stops at the same first lines of a transaction's stored lines.
    static func collapsed<Source>(_ lines: some Sequence<(line: DeliveryLine, source: Source)>)
        -> [(line: DeliveryLine, source: Source, copies: Int)] {
        var deliveries: [(line: DeliveryLine, source: Source, copies: Int)] = []
        var indexOfKey: [DeliveryLine.Key: Int] = [:]
        for (line, source) in lines {
            if let index = indexOfKey[line.key] {
                deliveries[index].copies += 1
                deliveries[index].line.ms = min(deliveries[index].line.ms, line.ms)
                if deliveries[index].line.orderID == nil { deliveries[index].line.orderID = line.orderID }
            } else {
                indexOfKey[line.key] = deliveries.count
                deliveries.append((line, source, 1))
            }
        }
        return deliveries
    }
}
