/// Characters a reader cannot see: controls, and format characters such as bidi overrides and
/// zero-width spaces. Wherever iaprecon shows text that came from input (a terminal, a page), it
/// shows these as `\u{1B}`, so that input can never move a cursor, recolour a terminal or hide
/// part of an id.
public enum HiddenCharacters {
    public static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        // ASCII's only hidden characters are its controls; the Unicode tables are for the rest,
        // and looking every character of a long history up in them took most of printing it.
        if scalar.isASCII { return scalar.value < 0x20 || scalar.value == 0x7F }
        return switch scalar.properties.generalCategory {
        case .control, .format: true
        default: false
        }
    }

    /// `text` with each hidden character shown as `\u{1B}`: what a terminal prints, and what a reject's
    /// reason quotes of a value, where a byte order mark beside a date would leave one that reads as good.
    public static func visible(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isHidden) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if isHidden(scalar) {
                out += shown(scalar)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// How a hidden character is shown: `\u{1B}`.
    public static func shown(_ scalar: Unicode.Scalar) -> String {
        "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
    }
}
