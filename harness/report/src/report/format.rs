//! Helpers the renderers share.

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
