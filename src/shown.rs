//! How a string that came from outside git-hand (a repository's file, a pusher, a file name) is
//! shown on a terminal or in a log: what is shown is what it holds.
//!
//! A setup command once printed with its raw bytes in the "not trusted" refusal and in
//! `git hand trust`'s listing: an `ESC[8m` in it hid `; touch PWNED` from the user who then
//! trusted it. A string with nothing a terminal could act on (a control character, or a
//! bidirectional-formatting one that reorders what is drawn) is shown as it is; any other is
//! shown quoted in C style as git quotes an odd path (`"a\eb"`), with `\` and `"` escaped so
//! the quoted form reads one way only. It must not be used for what is parsed (JSON, a value
//! written back): only for what a person reads.

use std::borrow::Cow;
use std::fmt::Write;

/// Whether `c` is a character a terminal acts on or draws out of order: a control character
/// (C0, DEL, C1) or a bidirectional-formatting one (Trojan Source).
pub(crate) fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Whether `s` holds a character [`shown`] would escape.
pub(crate) fn needs_escaping(s: &str) -> bool {
    s.chars().any(is_unsafe)
}

/// `s` as a person may safely read it: itself when it holds no control or bidirectional
/// character, else quoted and escaped (`\e`, `\n`, `\t`, `\x7f`, `\u{202e}`).
pub fn shown(s: &str) -> Cow<'_, str> {
    if !needs_escaping(s) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\x0b' => out.push_str("\\v"),
            '\x0c' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            '\x1b' => out.push_str("\\e"),
            c if u32::from(c) < 0x100 && is_unsafe(c) => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c if is_unsafe(c) => {
                let _ = write!(out, "\\u{{{:04x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    Cow::Owned(out)
}

/// A path as [`shown`] shows a string (bytes that are not UTF-8 as `U+FFFD`).
pub fn path(p: &std::path::Path) -> String {
    shown(&p.to_string_lossy()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_string_is_shown_as_it_is() {
        assert!(matches!(
            shown("npm ci && echo \"done\" \\"),
            Cow::Borrowed(_)
        ));
        assert_eq!(shown("héllo wörld"), "héllo wörld");
    }

    #[test]
    fn a_control_or_bidi_character_is_escaped_and_the_string_quoted() {
        assert_eq!(
            shown("echo hi\x1b[8m; touch PWNED"),
            "\"echo hi\\e[8m; touch PWNED\""
        );
        assert_eq!(
            shown("a\nb\tc\r\x00\x7f\u{9b}"),
            "\"a\\nb\\tc\\r\\x00\\x7f\\x9b\""
        );
        assert_eq!(shown("x\u{202e}y\"\\"), "\"x\\u{202e}y\\\"\\\\\"");
        assert!(needs_escaping("\u{2066}"));
        assert!(!needs_escaping("tab-free"));
    }

    #[test]
    fn a_path_is_shown_as_a_string() {
        assert_eq!(path(std::path::Path::new("/a/b\nc")), "\"/a/b\\nc\"");
    }
}
