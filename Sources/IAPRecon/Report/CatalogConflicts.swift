/// Products the catalog files describe in more than one way: a type, subscription group, price or
/// currency changed between day folders' catalogs, or a product typed twice. One line says what the
/// product is for every transaction, its last in path order (as the join reads the catalog), and a
/// person is told which, as for fx rates that disagree (`FXRates.warnings`).
struct CatalogConflicts {
    /// Each product described otherwise, by product id: its distinct descriptions in path order,
    /// each by the first line giving it, and the line that is used.
    private(set) var conflicts: [(productID: String, descriptions: [CatalogRow], used: CatalogRow)] = []

    /// `rows` in path then line order (`ReportStore.catalogRows`).
    init(rows: [CatalogRow]) {
        var byProduct: [String: (descriptions: [CatalogRow], used: CatalogRow)] = [:]
        for row in rows {
            var product = byProduct[row.productID] ?? ([], row)
            if !product.descriptions.contains(where: { Self.describeAlike($0, row) }) { product.descriptions.append(row) }
            product.used = row
            byProduct[row.productID] = product
        }
        conflicts = byProduct.keys.sorted().compactMap { productID in
            guard let product = byProduct[productID], product.descriptions.count > 1 else { return nil }
            return (productID, product.descriptions, product.used)
        }
    }

    /// One line per product described otherwise, naming each description with its line and the
    /// line used; past ten, how many more.
    var warnings: [String] {
        var lines = conflicts.prefix(10).map { conflict in
            let described = conflict.descriptions.map { "\(Self.description($0)) (\($0.path):\($0.line))" }
            let count = described.count == 2 ? "two" : String(described.count)
            return "catalog.csv describes \(conflict.productID) \(count) ways, " + described.dropLast().joined(separator: ", ")
                + " and " + (described.last ?? "") + ": the last line in path order, \(conflict.used.path):\(conflict.used.line), is used"
        }
        if conflicts.count > 10 { lines.append("catalog.csv describes \(conflicts.count - 10) more products more than one way") }
        return lines
    }

    /// Two lines say the same of a product: one type, group and currency, and prices of one amount (`0.99` is `0.990`).
    private static func describeAlike(_ a: CatalogRow, _ b: CatalogRow) -> Bool {
        guard a.type == b.type, a.subscriptionGroup == b.subscriptionGroup, a.currency == b.currency else { return false }
        if let first = a.price.flatMap(Amount.parse), let second = b.price.flatMap(Amount.parse) { return first == second }
        return a.price == b.price
    }

    /// `consumable 0.99 USD`, `auto_renewable in premium 9.99 USD`.
    private static func description(_ row: CatalogRow) -> String {
        [row.type, row.subscriptionGroup.map { "in " + $0 }, row.price, row.currency].compactMap { $0 }.joined(separator: " ")
    }
}
