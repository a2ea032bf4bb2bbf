//! Random identifiers: lease ids (16 bytes), repo ids (8 bytes), rendered as lower-case hex.
//!
//! Read from the operating system's CSPRNG: lease ids are credentials a holder presents, so they
//! must not be guessable from the clock or the process id.

use std::io::Read;

/// `n` random bytes as `2n` lower-case hex characters.
pub fn random_hex(n: usize) -> std::io::Result<String> {
    let mut bytes = vec![0u8; n];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A fresh lease id: 128 random bits, 32 hex characters.
pub fn lease_id() -> std::io::Result<String> {
    random_hex(16)
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
}
