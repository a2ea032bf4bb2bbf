//! `git hand config`: every `hand.*` key's value in effect, where it comes from and why git-hand
//! would refuse it, and the repository's `.handconfig` with whether its content was approved.
//! Reads only. A child of `settings` (which every operation reads) because it also asks
//! `trust`, which itself reads settings.

use std::path::PathBuf;

use super::{KEYS, Key, Origin, Settings, file_path, remote_urls, require_lease};
use crate::git::Repo;
use crate::ops::repo::trust::{self, Trust};

/// One key as `git hand config` shows it.
#[derive(Debug, Clone)]
pub struct Entry {
    pub key: &'static str,
    /// Whether every value counts ([`Key::multi`]).
    pub multi: bool,
    /// The values in effect (as written, or the default), in git's order: at most one for a
    /// key that is not `multi`; none when unset without a default.
    pub values: Vec<String>,
    /// Where the value comes from (for a `multi` key git's configuration sets, the last one).
    pub origin: Origin,
    /// Why git-hand would refuse the value.
    pub problem: Option<String>,
    /// What else to know about how the values are read (empty `hand.requireLease` and
    /// `hand.remoteUrl` values skipped).
    pub note: Option<String>,
}

/// The repository's `.handconfig` as `git hand config` shows it.
#[derive(Debug, Clone)]
pub struct FileReport {
    pub path: PathBuf,
    /// Its blob id, when it exists.
    pub hash: Option<String>,
    /// Whether its content was approved, when it exists.
    pub trust: Option<Trust>,
}

/// Every `hand.*` key's value in effect and where it comes from.
#[derive(Debug, Clone)]
pub struct Report {
    /// `None` for a bare repository.
    pub file: Option<FileReport>,
    pub entries: Vec<Entry>,
    /// Keys the file sets that only git's configuration may set.
    pub ignored: Vec<&'static str>,
}

/// `git hand config`: reads only.
pub fn report(repo: &Repo) -> crate::ops::Result<Report> {
    let settings = Settings::load(repo)?;
    let file = match file_path(repo) {
        None => None,
        Some(path) => Some(FileReport {
            path,
            hash: settings.file().map(|f| f.hash().to_string()),
            trust: settings.file().map(trust::state).transpose()?,
        }),
    };
    let entries = KEYS.iter().map(|k| entry(&settings, k)).collect();
    Ok(Report {
        file,
        entries,
        ignored: settings.ignored_in_file(),
    })
}

/// `k`'s values in effect, where they come from, and why git-hand would refuse them.
fn entry(settings: &Settings<'_>, k: &Key) -> Entry {
    let origin = settings.origin(k.name);
    match k.name {
        "hand.requireLease" => return require_lease_entry(settings.repo, k, origin),
        "hand.remoteUrl" => return remote_urls_entry(settings.repo, k, origin),
        "hand.ledger" => {
            if let Some(env) = ledger_env_entry(k, &origin) {
                return env;
            }
        }
        _ => {}
    }
    let (values, problem) = if k.multi {
        (settings.strings(k.name), None)
    } else {
        let (value, problem) = match settings.judged(k.name) {
            Ok(value) => (value, None),
            Err(e) => (settings.string(k.name), Some(e.to_string())),
        };
        let value = match (&origin, value) {
            (Origin::Default, None) => k.default.map(str::to_string),
            (_, value) => value,
        };
        (value.into_iter().collect(), problem)
    };
    Entry {
        key: k.name,
        multi: k.multi,
        values,
        origin,
        problem,
        note: None,
    }
}

/// `hand.requireLease` as the hook reads it: trimmed, empty values skipped (and said so), each
/// value that can match no branch a problem (the hook refuses every push while there is one).
fn require_lease_entry(repo: &Repo, k: &Key, origin: Origin) -> Entry {
    let read = require_lease(repo);
    let problem = (!read.invalid.is_empty()).then(|| {
        let dir = &repo.loc.common_dir;
        read.invalid
            .iter()
            .map(|bad| {
                format!(
                    "{bad}; the hook refuses every push until it is fixed: {}",
                    bad.unset_command(dir)
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    });
    Entry {
        key: k.name,
        multi: k.multi,
        values: read.patterns,
        origin,
        problem,
        note: skipped_note(k, read.skipped),
    }
}

/// `hand.remoteUrl` as the hook reads it: blank values skipped (and said so), the others as
/// written.
/// In a bare repository (a server's), no value is said too: the branch fence then covers no
/// push over ssh or https (issue 22: it is never silently off).
fn remote_urls_entry(repo: &Repo, k: &Key, origin: Origin) -> Entry {
    let read = remote_urls(repo);
    let uncovered = (repo.loc.workdir.is_none() && read.urls.is_empty()).then(|| {
        format!(
            "hand.remoteUrl is not set: the server's branch fence covers pushes to {} by its \
             path only, none over ssh or https; name each URL clients push to: git -C {} \
             config --add hand.remoteUrl <url>",
            repo.loc.common_dir.display(),
            repo.loc.common_dir.display()
        )
    });
    let note = match (skipped_note(k, read.skipped), uncovered) {
        (Some(a), Some(b)) => Some(format!("{a}; {b}")),
        (a, b) => a.or(b),
    };
    Entry {
        key: k.name,
        multi: k.multi,
        values: read.urls,
        origin,
        problem: None,
        note,
    }
}

/// `hand.ledger` when `GIT_HAND_LEDGER` overrides it: the variable's value is the one in
/// effect, and git's value (if any) is only said to be overridden (issue 22: `config` showed
/// git's as in effect). On a server the hook reads neither variable nor anything but the
/// repository's own `hand.ledger`; `config` shows what this shell's verbs use.
fn ledger_env_entry(k: &Key, origin: &Origin) -> Option<Entry> {
    const VAR: &str = "GIT_HAND_LEDGER";
    let value = std::env::var(VAR).ok().filter(|v| !v.is_empty())?;
    let note = match origin {
        Origin::Git(g) => Some(format!(
            "{VAR} overrides hand.ledger from git config ({}{})",
            g.scope,
            g.file
                .as_ref()
                .map(|f| format!(": {}", f.display()))
                .unwrap_or_default()
        )),
        _ => None,
    };
    Some(Entry {
        key: k.name,
        multi: k.multi,
        values: vec![value],
        origin: Origin::Env(VAR),
        problem: None,
        note,
    })
}

/// The note for a server key whose `skipped` empty values the hook ignores.
fn skipped_note(k: &Key, skipped: usize) -> Option<String> {
    (skipped > 0).then(|| {
        format!(
            "{}: {} empty value{} skipped (the hook ignores {})",
            k.name,
            skipped,
            if skipped == 1 { "" } else { "s" },
            if skipped == 1 { "it" } else { "them" }
        )
    })
}
