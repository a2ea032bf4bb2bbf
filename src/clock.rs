//! Time as git-hand sees it: epoch milliseconds (UTC, `i64`), an injectable clock, TTL parsing,
//! and the two renderings users read (RFC 3339 for machines, "in 23m" for people).
//!
//! There is deliberately no way to set the clock through the environment: a zombie holder must
//! not be able to turn time back and revive its lease. Tests inject a [`ManualClock`] through the
//! library instead.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch, UTC.
pub(crate) type Millis = i64;

/// A source of the current time.
pub trait Clock {
    fn now_ms(&self) -> Millis;
}

/// The wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> Millis {
        match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
            // A clock set before 1970 reads as the epoch; the ledger's high-water mark keeps
            // such a clock from shortening or extending anything.
            Err(_) => 0,
        }
    }
}

/// A clock the caller moves by hand (tests, simulations). Every clone reads the same time, on
/// any thread: a test hands a clone to an operation's context
/// ([`crate::ops::Context::with_clock`]), which must stay `Sync` (spawn probes a slot on a
/// second thread), and moves time with the copy it keeps.
#[derive(Debug, Clone, Default)]
pub struct ManualClock(Arc<AtomicI64>);

impl ManualClock {
    pub fn new(now: Millis) -> Self {
        Self(Arc::new(AtomicI64::new(now)))
    }
    pub fn set(&self, now: Millis) {
        self.0.store(now, Ordering::SeqCst);
    }
    pub fn advance(&self, by: Millis) {
        self.0.fetch_add(by, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> Millis {
        self.0.load(Ordering::SeqCst)
    }
}

impl<C: Clock + ?Sized> Clock for std::rc::Rc<C> {
    fn now_ms(&self) -> Millis {
        (**self).now_ms()
    }
}

/// A TTL that is not one of `90s`, `30m`, `2h`, `1d`, or is zero or longer than ten years.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum BadDuration {
    #[error("invalid duration {0:?}: expected a whole number and a unit, like 90s, 30m, 2h or 1d")]
    Form(String),
    #[error("invalid duration {0:?}: a lease lasts at least 1s and at most 3650d")]
    Range(String),
}

/// Parses a TTL (`90s`, `30m`, `2h`, `1d`) into milliseconds. Zero is refused: a lease that is
/// already over when granted is a mistake, not a request.
pub(crate) fn parse_ttl(text: &str) -> Result<Millis, BadDuration> {
    let bad = || BadDuration::Form(text.to_string());
    let split = text.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
    let (digits, unit) = text.split_at(split);
    let n: i64 = digits.parse().map_err(|_| bad())?;
    let scale: i64 = match unit {
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return Err(bad()),
    };
    match n.checked_mul(scale) {
        Some(ms) if ms > 0 && ms <= 3650 * 86_400_000 => Ok(ms),
        _ => Err(BadDuration::Range(text.to_string())),
    }
}

/// Renders a duration compactly, the way `parse_ttl` reads it back ("23m", "2h", "3d", "45s").
pub(crate) fn short_duration(ms: Millis) -> String {
    let s = ms.unsigned_abs() / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86_400 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}

/// "in 23m" for a future instant, "2h ago" for a past one.
pub fn relative(at: Millis, now: Millis) -> String {
    if at >= now {
        format!("in {}", short_duration(at - now))
    } else {
        format!("{} ago", short_duration(now - at))
    }
}

/// Formats epoch milliseconds as RFC 3339 UTC with millisecond precision
/// (`2026-11-29T10:56:25.123Z`), through jiff's calendar.
///
/// An instant beyond jiff's years -9999..=9999 is shown as the nearest one it can render: no
/// ledger holds such a time unless the machine's clock read it, and a message must still print.
pub(crate) fn rfc3339(ms: Millis) -> String {
    let at = jiff::Timestamp::from_millisecond(ms).unwrap_or(if ms < 0 {
        jiff::Timestamp::MIN
    } else {
        jiff::Timestamp::MAX
    });
    format!("{at:.3}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_accepts_the_four_units() {
        assert_eq!(parse_ttl("90s"), Ok(90_000));
        assert_eq!(parse_ttl("30m"), Ok(1_800_000));
        assert_eq!(parse_ttl("2h"), Ok(7_200_000));
        assert_eq!(parse_ttl("1d"), Ok(86_400_000));
    }

    #[test]
    fn a_ttl_of_the_right_form_but_out_of_range_says_so() {
        for text in ["0s", "0d", "3651d", "99999999999999d"] {
            assert_eq!(parse_ttl(text), Err(BadDuration::Range(text.into())));
        }
        assert_eq!(parse_ttl("1w"), Err(BadDuration::Form("1w".into())));
    }

    #[test]
    fn ttl_rejects_everything_else() {
        for bad in [
            "",
            "s",
            "10",
            "1.5h",
            "-1m",
            "0s",
            "1w",
            "1 h",
            "1H",
            "m5",
            "99999999999999d",
        ] {
            assert!(parse_ttl(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn rfc3339_renders_utc_with_millis() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(1_795_949_785_123), "2026-11-29T10:56:25.123Z");
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(rfc3339(-1), "1969-12-31T23:59:59.999Z");
        assert_eq!(rfc3339(4_102_444_800_000), "2100-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(i64::MAX), "9999-12-30T22:00:00.999Z");
    }

    #[test]
    fn relative_reads_like_a_person_would_say_it() {
        assert_eq!(relative(23 * 60_000, 0), "in 23m");
        assert_eq!(relative(0, 2 * 3_600_000 + 5), "2h ago");
        assert_eq!(relative(5_000, 0), "in 5s");
    }
}
