import Foundation

/// The contract's time formats (CONTRACT.md "Times"), parsed independently of the generator.
enum ContractTime {
    static func parse(_ value: Any?) -> Int64? {
        if let number = value as? NSNumber, !(value is Bool) {
            return Int64(floor(number.doubleValue))
        }
        guard let text = value as? String, !text.isEmpty else { return nil }
        if text.allSatisfy({ $0.isNumber || $0 == "." }), let double = Double(text) {
            return Int64(floor(double))
        }
        return calendar(text)
    }

    static func calendar(_ text: String) -> Int64? {
        let chars = Array(text.utf8)
        guard chars.count >= 19, chars[4] == 45, chars[7] == 45, chars[10] == 84 || chars[10] == 32,
              chars[13] == 58, chars[16] == 58 else { return nil }
        func number(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= chars.count else { return nil }
            var value = 0
            for byte in chars[from..<(from + count)] {
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2), let hour = number(11, 2),
              let minute = number(14, 2), let second = number(17, 2),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60 else { return nil }
        var components = DateComponents()
        components.year = year
        components.month = month
        components.day = day
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        guard let date = calendar.date(from: components),
              calendar.component(.day, from: date) == day else { return nil }
        var ms = Int64(date.timeIntervalSince1970) * 1000 + Int64((hour * 3600 + minute * 60 + second) * 1000)
        var index = 19
        if index < chars.count, chars[index] == 46 {
            index += 1
            var scale: Int64 = 100
            var digits = 0
            while index < chars.count, chars[index] >= 48, chars[index] <= 57 {
                ms += Int64(chars[index] - 48) * scale
                scale /= 10
                index += 1
                digits += 1
            }
            if digits == 0 { return nil }
        }
        if index == chars.count { return ms }
        if chars[index] == 90 { return index + 1 == chars.count ? ms : nil }
        guard chars[index] == 43 || chars[index] == 45, let hours = number(index + 1, 2), chars.count == index + 6,
              chars[index + 3] == 58, let minutes = number(index + 4, 2) else { return nil }
        let offset = Int64(hours * 3600 + minutes * 60) * 1000
        return chars[index] == 43 ? ms - offset : ms + offset
    }
}
