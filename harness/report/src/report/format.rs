//! Helpers the renderers share.

use std::borrow::Cow;

/// Marker of clock-dependent lines.
pub const TIMING_MARKER: &str = "[timing]";

/// `n` with thousands separators (`20,000,000`), as rates are printed.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A control character or a line or paragraph separator (some readers take it for a line break).
fn escaped(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')
}

/// A name from the user's files as text output shows it (E5): each control character as
/// [`char::escape_debug`] writes it, so a name can neither forge an output line nor send a
/// terminal escape. JSON carries the name itself. Idempotent.
pub fn shown(s: &str) -> Cow<'_, str> {
    if !s.chars().any(escaped) {
        return Cow::Borrowed(s);
    }
    let mut o = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if escaped(c) {
            o.extend(c.escape_debug());
        } else {
            o.push(c);
        }
    }
    Cow::Owned(o)
}

/// `s` as XML 1.0 text or attribute value: markup escaped, and a character outside XML's
/// `Char` production (controls but tab and newline, U+FFFE, U+FFFF) as U+FFFD, so a name
/// from a user's file never makes junit.xml unparseable.
pub fn xml_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => o.push_str("&#xFFFD;"),
            '\u{FFFE}' | '\u{FFFF}' => o.push_str("&#xFFFD;"),
            c => o.push(c),
        }
    }
    o
}

pub fn each<T, U>(v: &[T], f: impl FnMut(&T) -> U) -> Vec<U> {
    v.iter().map(f).collect()
}

/// The element of `v` that `is` picks, `new()` pushed first when none does (a map that keeps
/// its insertion order).
pub fn find_or_push<T>(v: &mut Vec<T>, is: impl Fn(&T) -> bool, new: impl FnOnce() -> T) -> &mut T {
    let i = match v.iter().position(is) {
        Some(i) => i,
        None => {
            v.push(new());
            v.len() - 1
        }
    };
    &mut v[i]
}

#[cfg(test)]
mod tests {
    use super::shown;

    /// Control characters are escaped (`escape_debug`'s spelling), anything else is kept
    /// (non-ASCII too), and escaping twice changes nothing.
    #[test]
    fn shown_escapes_control_characters_only() {
        assert_eq!(shown("модель.neff"), "модель.neff");
        assert!(matches!(
            shown("sg00/PE.bin"),
            std::borrow::Cow::Borrowed(_)
        ));
        let s = "a\nb\r\t\u{1b}[2J\u{7f}\u{9b}\u{2028}\0\\n";
        let want = r"a\nb\r\t\u{1b}[2J\u{7f}\u{9b}\u{2028}\0\\n";
        assert_eq!(shown(s), want.replace(r"\\n", "\\n"));
        assert_eq!(shown(&shown(s)), shown(s));
    }

    /// XML 1.0 §2.2 `Char`: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF].
    fn xml_char(c: char) -> bool {
        matches!(c as u32, 0x9 | 0xA | 0xD | 0x20..=0xD7FF | 0xE000..=0xFFFD | 0x10000..=0x10FFFF)
    }

    #[test]
    fn every_escaped_character_is_an_xml_char_and_markup_is_escaped() {
        let probe: String = (0u32..0x80)
            .chain([
                0x85, 0xD7FF, 0xE000, 0xFFFD, 0xFFFE, 0xFFFF, 0x10000, 0x10FFFF,
            ])
            .filter_map(char::from_u32)
            .collect();
        let out = super::xml_escape(&probe);
        assert!(out.chars().all(xml_char), "{out:?}");
        assert!(!out.contains(['<', '>', '"', '\'']));
        assert_eq!(
            out.matches('&').count(),
            out.matches("&#xFFFD;").count() + 5
        );
    }
}
