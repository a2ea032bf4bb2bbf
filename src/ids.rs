//! Random identifiers: lease ids (16 bytes), repo ids (8 bytes), rendered as lower-case hex.
//!
//! Read from the operating system's CSPRNG (`getrandom(2)`, through the `getrandom` crate that
//! tempfile already brings in): lease ids are credentials a holder presents, so they must not be
//! guessable from the clock or the process id.

use std::fmt::Write as _;

/// `n` random bytes as `2n` lower-case hex characters.
pub(crate) fn random_hex(n: usize) -> std::io::Result<String> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).map_err(|e| match e.raw_os_error() {
        Some(errno) => std::io::Error::from_raw_os_error(errno),
        None => std::io::Error::other(e),
    })?;
    let mut hex = String::with_capacity(2 * n);
    for b in bytes {
        // Writing into a String cannot fail.
        let _ = write!(hex, "{b:02x}");
    }
    Ok(hex)
}

/// A fresh lease id: 128 random bits, 32 hex characters.
pub fn lease_id() -> std::io::Result<String> {
    random_hex(16)
}

/// An id or object name as git-hand shows it in a sentence: its first 10 characters (all of a
/// shorter one).
pub fn short(s: &str) -> &str {
    &s[..s.len().min(10)]
}

/// True when `s` looks like a lease id (32 lower-case hex characters).
pub fn is_lease_id(s: &str) -> bool {
    s.len() == 32 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    #[test]
    fn lease_ids_are_32_hex_and_distinct() {
        let a = super::lease_id().unwrap();
        let b = super::lease_id().unwrap();
        assert!(super::is_lease_id(&a) && super::is_lease_id(&b));
        assert_ne!(a, b);
    }

    #[test]
    fn random_hex_renders_each_byte_as_two_lower_case_digits() {
        let hex = super::random_hex(5).unwrap();
        assert_eq!(hex.len(), 10);
        assert!(hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')));
    }
}
