//! Rendering: JSON for scripts, aligned text for people, colour only where a person sees it.
//! Each verb's JSON is a `#[derive(Serialize)]` struct in its own file; the parts several verbs
//! share (a tenure's fields, an instant) are here.
//!
//! `say` is the one writer of `git-hand:` lines, and it never panics (a closed stderr is ignored).

use serde::{Serialize, Serializer};

use crate::clock::{Millis, relative, rfc3339};
use crate::ledger::{LeaseId, Tenure};
use crate::ops::Context;

/// Whether to colour human output: stdout is a terminal, `NO_COLOR` is unset and git's
/// `color.ui` is not `never`.
pub(crate) fn use_color(color_ui: Option<&str>) -> bool {
    use std::io::IsTerminal;
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        && !matches!(color_ui, Some("never" | "false"))
        && (matches!(color_ui, Some("always")) || std::io::stdout().is_terminal())
}

/// Paints text with an ANSI SGR code when colour is on.
#[derive(Debug, Clone, Copy)]
pub struct Paint(pub bool);

impl Paint {
    fn sgr(self, code: &str, s: &str) -> String {
        if self.0 {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    pub(crate) fn green(self, s: &str) -> String {
        self.sgr("32", s)
    }
    pub(crate) fn yellow(self, s: &str) -> String {
        self.sgr("33", s)
    }
    pub(crate) fn red(self, s: &str) -> String {
        self.sgr("31", s)
    }
    pub(crate) fn bold(self, s: &str) -> String {
        self.sgr("1", s)
    }
    pub(crate) fn dim(self, s: &str) -> String {
        self.sgr("2", s)
    }
}

/// An instant, in JSON as an RFC 3339 timestamp (`Option<Time>`: or null).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Time(pub Millis);

impl Time {
    pub fn of(at: Option<Millis>) -> Option<Time> {
        at.map(Time)
    }
}

impl Serialize for Time {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&rfc3339(self.0))
    }
}

/// "expires in 23m", "expired 2h ago", or "open-ended".
pub(crate) fn expiry_text(expires_at: Option<Millis>, now: Millis) -> String {
    match expires_at {
        None => "open-ended".into(),
        Some(at) if at > now => format!("expires {}", relative(at, now)),
        Some(at) => format!("expired {}", relative(at, now)),
    }
}

/// The stable JSON fields of a tenure (documented in docs/cli.md). Every field is null in
/// [`TenureJson::NONE`], for an outcome with no tenure; a tenure fills all but the last three.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TenureJson<'a> {
    pub lease_id: Option<&'a LeaseId>,
    pub token: Option<i64>,
    pub holder: Option<&'a str>,
    pub acquired_at: Option<Time>,
    pub renewed_at: Option<Time>,
    pub expires_at: Option<Time>,
    pub ended_at: Option<Time>,
    pub end_reason: Option<&'a str>,
}

impl<'a> TenureJson<'a> {
    pub(crate) const NONE: TenureJson<'static> = TenureJson {
        lease_id: None,
        token: None,
        holder: None,
        acquired_at: None,
        renewed_at: None,
        expires_at: None,
        ended_at: None,
        end_reason: None,
    };

    pub fn of(t: &'a Tenure) -> Self {
        Self {
            lease_id: Some(&t.lease_id),
            token: Some(t.token),
            holder: Some(&t.holder),
            acquired_at: Some(Time(t.acquired_at)),
            renewed_at: Time::of(t.renewed_at),
            expires_at: Time::of(t.expires_at),
            ended_at: Time::of(t.ended_at),
            end_reason: t.end_reason.as_deref(),
        }
    }
}

/// Names and values as one JSON object, in their order: the variables `spawn` and `env` hand
/// out (the credential, and with `hand.remoteFence` its push options' configuration entries).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Vars<'a, K>(pub &'a [(K, String)]);

impl<K: Serialize> Serialize for Vars<'_, K> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

/// Left-aligned columns, two spaces apart; the last column is not padded.
pub fn table(header: &[&str], rows: &[Vec<String>], paint: Paint) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<String>| {
        let last = cells.len().saturating_sub(1);
        let mut out = String::new();
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            out.push_str(cell);
            if i < last {
                out.push_str(&" ".repeat(w - cell.chars().count() + 2));
            }
        }
        out.trim_end().to_string() + "\n"
    };
    let head = line(header.iter().map(|h| h.to_string()).collect());
    let mut out = paint.bold(head.trim_end()) + "\n";
    for row in rows {
        out.push_str(&line(row.clone()));
    }
    out
}

pub(crate) fn paint(ctx: &Context) -> Paint {
    let color_ui = ctx.repo_opt().and_then(|r| r.config_string("color.ui"));
    Paint(super::output::use_color(color_ui.as_deref()))
}

/// Diagnostics on stderr, one `git-hand:` line each. Never panics: a closed stderr (an agent that
/// stopped reading) must not turn a spawn whose task is already active into a crash.
pub fn say(lines: impl IntoIterator<Item = impl std::fmt::Display>) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    for line in lines {
        let _ = writeln!(err, "git-hand: {line}");
    }
}
