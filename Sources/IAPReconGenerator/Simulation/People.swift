/// Accounts, devices, sign-ups and what the MMP saw of them.
extension SlotSimulation {
    /// A new phone with its MMP install at `installAt`.
    mutating func newDevice(country: Int, installAt: Millis, attributed: Bool = true) -> Device {
        let campaignIndex = random.weighted(Campaigns.weightsByCountry[country])
        var device = Device(idfv: uuid(uppercase: true), idfa: random.chance(0.3) ? uuid(uppercase: true) : nil,
                            appsflyerId: String(installAt) + "-" + String(random.next() % 9_000_000_000_000_000_000 + 1_000_000_000_000_000_000),
                            installAt: installAt, profile: nil)
        if attributed {
            let campaign = Campaigns.acquisition[campaignIndex]
            device.profile = LineBuffer.mmpProfile(
                campaign: campaign, adset: random.pick(campaign.adsets),
                touchAt: installAt - random.int64(30_000, 3 * Clock.day), installAt: installAt,
                country: Catalog.countries[country], device: device, deviceType: random.pick(AppsFlyer.deviceTypes),
                osVersion: random.pick(AppsFlyer.osVersions), appVersion: random.pick(AppsFlyer.appVersions),
                wifi: random.chance(0.6), ipTail: random.below(100_000), retargeting: false)
            if campaign.isPaid { run.countInstall(campaign: campaignIndex, at: installAt) }
        }
        return device
    }

    /// Signs a user up at `registeredAt` on a new phone (installed shortly before) or on `sharedDevice`.
    mutating func makePerson(registeredAt: Millis, secondary: Bool = false, sharedDevice: Device? = nil,
                             country fixedCountry: Int? = nil, method fixedMethod: String? = nil,
                             style fixedStyle: ClientStyle? = nil) throws -> Person {
        let country = fixedCountry ?? random.weighted(Catalog.countryWeights)
        let device: Device
        if let sharedDevice {
            device = sharedDevice
        } else {
            let installAt = max(start, registeredAt - random.int64(20_000, 3 * Clock.hour))
            device = newDevice(country: country, installAt: installAt, attributed: !random.chance(Tuning.lostInstallChance))
            if let profile = device.profile {
                let customerUserId = random.chance(0.2) ? userId(secondary: secondary) : ""
                line.mmpRow(profile, eventAt: installAt, name: "install", value: "", revenue: "", revenueCurrency: "",
                            revenueUSD: "", customerUserId: customerUserId)
                try emitMMP(at: installAt)
            }
        }
        let style: ClientStyle
        switch random.weighted([50, 34, 16]) {
        case 0: style = .legacyReceipt
        case 1: style = .storeKit2
        default: style = .storeKit2Signed
        }
        var person = Person(userId: userId(secondary: secondary), country: country, registeredAt: registeredAt,
                            device: device, style: fixedStyle ?? style)
        let methods = Catalog.countries[country].code == "KR"
            ? ["kakao", "kakao", "apple", "guest", "google", "email"]
            : ["apple", "apple", "guest", "google", "facebook", "email"]
        try registration(person, method: fixedMethod ?? random.pick(methods))
        if device.profile != nil {
            try mmpEvent(person, name: "af_complete_registration", at: registeredAt + random.int64(500, 20_000),
                         value: "{\"af_registration_method\":\"app\"}")
        }
        if random.chance(Tuning.retargetChance), !secondary {
            let campaign = random.pick(Campaigns.retargeting)
            person.retargetFrom = registeredAt + random.int64(3 * Clock.day, 20 * Clock.day)
            person.retargetProfile = LineBuffer.mmpProfile(
                campaign: campaign, adset: campaign.adsets[0], touchAt: person.retargetFrom - 600_000,
                installAt: device.installAt, country: Catalog.countries[country], device: device,
                deviceType: AppsFlyer.deviceTypes[0], osVersion: AppsFlyer.osVersions[0],
                appVersion: AppsFlyer.appVersions[0], wifi: true, ipTail: random.below(100_000), retargeting: true)
        }
        if device.profile != nil, sharedDevice == nil, random.chance(Tuning.reinstallChance) {
            // A reinstall after sign-up: a second install row the user's attribution must not take.
            let again = registeredAt + random.int64(Clock.day, 10 * Clock.day)
            var reinstall = newDevice(country: country, installAt: again)
            reinstall.idfv = device.idfv
            if let profile = reinstall.profile {
                line.mmpRow(profile, eventAt: again, name: "install", value: "", revenue: "", revenueCurrency: "",
                            revenueUSD: "", customerUserId: person.userId)
                try emitMMP(at: again)
            }
        }
        return person
    }

    /// A `registrations` line; some sign-ups lack device ids.
    mutating func registration(_ person: Person, method: String) throws {
        let style: TimeStyle = random.chance(0.8) ? .isoSecondsZ : .isoMillisZ
        line.raw("{\"ts\":")
        line.jsonTime(person.registeredAt, style)
        line.raw(",\"user_id\":")
        line.string(person.userId)
        line.raw(",\"method\":")
        line.string(method)
        if random.chance(0.92) {
            line.raw(",\"idfv\":\"")
            line.text(person.device.idfv)
            line.byte(UInt8(ascii: "\""))
        }
        if let idfa = person.device.idfa {
            line.raw(",\"idfa\":\"")
            line.text(idfa)
            line.byte(UInt8(ascii: "\""))
        } else if random.chance(0.25) {
            line.raw(",\"idfa\":\"00000000-0000-0000-0000-000000000000\"")
        }
        if random.chance(0.85) {
            line.raw(",\"appsflyer_id\":\"")
            line.text(person.device.appsflyerId)
            line.byte(UInt8(ascii: "\""))
        }
        if random.chance(0.97) {
            line.raw(",\"country\":\"")
            line.text(Catalog.countries[person.country].code)
            line.byte(UInt8(ascii: "\""))
        }
        line.byte(UInt8(ascii: "}"))
        try emit(.registrations, at: style.effective(person.registeredAt))
    }

    /// Writes the MMP row in `line`, sometimes twice (a repeated export row is one row).
    mutating func emitMMP(at time: Millis) throws {
        let effective = TimeStyle.spaced.effective(time)
        guard effective <= asOf else {
            line.clear()
            return
        }
        if random.chance(Tuning.mmpRepeatChance) {
            let copy = line
            try emit(.attribution, at: effective)
            line = copy
            run.truth.nearMiss("mmp_repeated_row")
        }
        try emit(.attribution, at: effective)
    }

    /// An in-app event row for a signed-up user (Customer User ID set).
    mutating func mmpEvent(_ person: Person, name: String, at time: Millis, value: String) throws {
        guard let profile = person.device.profile else { return }
        line.mmpRow(profile, eventAt: time, name: name, value: value, revenue: "", revenueCurrency: "", revenueUSD: "",
                    customerUserId: person.userId)
        try emitMMP(at: time)
    }

    /// `af_purchase` as the MMP's SDK reported it; the MMP's claim, not verified revenue.
    mutating func mmpPurchase(_ person: Person, _ tx: AppleTransaction, at time: Millis) throws {
        guard person.device.profile != nil, random.chance(Tuning.mmpPurchaseShare) else { return }
        let currency = tx.currency
        let milli = tx.priceMilli * Int64(tx.quantity)
        var amount = LineBuffer(capacity: 16)
        amount.money(milli, currency: currency)
        let revenue = String(decoding: amount.bytes, as: UTF8.self)
        var usd = LineBuffer(capacity: 16)
        usd.decimal(run.fx.usdTenThousandths(milli: milli, currency: currency, day: run.folder.day(of: time)),
                    scale: 4, minimumFraction: 4)
        let code = Catalog.currencies[currency].code
        let value = "{\"af_revenue\":\"" + revenue + "\",\"af_currency\":\"" + code + "\",\"af_content_id\":\""
            + tx.info.id + "\",\"af_quantity\":" + String(tx.quantity) + "}"
        let columns = random.chance(0.9)
        for profile in [person.device.profile, time >= person.retargetFrom ? person.retargetProfile : nil] {
            guard let profile else { continue }
            line.mmpRow(profile, eventAt: time, name: "af_purchase", value: value, revenue: columns ? revenue : "",
                        revenueCurrency: columns ? code : "",
                        revenueUSD: columns ? String(decoding: usd.bytes, as: UTF8.self) : "",
                        customerUserId: person.userId)
            try emitMMP(at: time)
        }
    }

    /// An install that never signs up.
    mutating func ghostInstall() throws {
        let country = random.weighted(Catalog.countryWeights)
        let installAt = time(start, asOf - Clock.minute)
        let device = newDevice(country: country, installAt: installAt)
        guard let profile = device.profile else { return }
        line.mmpRow(profile, eventAt: installAt, name: "install", value: "", revenue: "", revenueCurrency: "",
                    revenueUSD: "", customerUserId: "")
        try emitMMP(at: installAt)
    }

    /// Session starts of the days a user comes back: unknown server events and MMP events.
    /// `onSession` runs for each session (purchases, receipt checks) when given.
    mutating func sessions(_ person: inout Person, until end: Millis? = nil,
                           onSession: (inout SlotSimulation, inout Person, Millis) throws -> Void) throws {
        let last = min(end ?? asOf, asOf) - 2 * Clock.minute
        guard last > person.registeredAt else { return }
        let engagement = [0.3, 0.6, 0.85][random.weighted([50, 35, 15])]
        let firstDay = run.folder.day(of: person.registeredAt)
        let lastDay = run.folder.day(of: last)
        for day in firstDay...lastDay {
            let age = Double(day - firstDay)
            if day != firstDay, !random.chance(engagement * (0.25 + 0.75 / (1 + age / 2))) { continue }
            let dayStart = max(start + Int64(day) * Clock.day, person.registeredAt + Clock.minute)
            let dayEnd = min(start + Int64(day + 1) * Clock.day - 1, last)
            guard dayEnd > dayStart else { continue }
            for _ in 0..<random.int(1, 3) {
                let at = time(dayStart, dayEnd)
                if random.chance(Tuning.unknownEventChance) { try unknownEvent(person, at: at) }
                if random.chance(Tuning.loginEventChance) {
                    try mmpEvent(person, name: "af_login", at: at + 2_000, value: random.chance(0.5) ? "null" : "")
                }
                if random.chance(Tuning.levelEventChance) {
                    try mmpEvent(person, name: "af_level_achieved", at: at + random.int64(60_000, 900_000),
                                 value: "{\"af_level\":\"" + String(random.int(2, 80)) + "\"}")
                }
                try onSession(&self, &person, at)
            }
        }
    }
}
