//! `git hand config`: every `hand.*` value in effect and where it comes from (git's
//! configuration, with its scope and file; the repository's `.handconfig`; the default), and
//! whether the file's content is trusted.

use serde::Serialize;

use super::output::{paint, table};
use super::{Done, Failure};
use crate::ops::Context;
use crate::ops::repo::settings::report::Report;
use crate::ops::repo::settings::{self, Origin};
use crate::ops::repo::trust::Trust;

/// `config --json`.
#[derive(Serialize)]
struct ConfigJson<'a> {
    /// Null for a bare repository.
    file: Option<FileJson<'a>>,
    settings: Vec<EntryJson<'a>>,
    /// Keys the file sets that only git config may set: ignored.
    ignored: &'a [&'static str],
}

#[derive(Serialize)]
struct FileJson<'a> {
    path: &'a std::path::Path,
    exists: bool,
    /// Its blob id (`git hash-object`), null when it does not exist.
    hash: Option<&'a str>,
    /// `trusted`, `untrusted` or `changed`; null when it does not exist.
    trust: Option<TrustWord>,
}

#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "lowercase")]
enum TrustWord {
    Trusted,
    Untrusted,
    Changed,
}

impl TrustWord {
    fn of(trust: &Trust) -> Self {
        match trust {
            Trust::Trusted => TrustWord::Trusted,
            Trust::Unknown => TrustWord::Untrusted,
            Trust::Changed { .. } => TrustWord::Changed,
        }
    }
}

#[derive(Serialize)]
struct EntryJson<'a> {
    key: &'a str,
    /// The value of a key that has one; null for a multi-valued key (read `values`).
    value: Option<&'a str>,
    /// Whether every value counts (`hand.include`, `hand.remoteUrl`, `hand.requireLease`).
    multi: bool,
    /// Every value in effect, in git's order: at most one for a key that is not `multi`.
    values: &'a [String],
    /// `git`, `file`, `env` (`GIT_HAND_LEDGER`) or `default`.
    origin: &'static str,
    /// With `git`: `system`, `global`, `local`, `worktree`, `env` or `command` (`git -c`).
    scope: Option<&'static str>,
    /// The file the value was read from (null for the default and `git -c`).
    path: Option<&'a std::path::Path>,
    problem: Option<&'a str>,
    /// How the values were read, when there is something to say (empty values skipped).
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<&'a str>,
}

pub fn config(ctx: &Context, json: bool) -> Result<Done, Failure> {
    let mut report = settings::report::report(ctx.repo()?)?;
    without_passwords(&mut report);
    if json {
        return Done::json(&shape(&report), None);
    }
    Ok(Done::ok(text(ctx, &report)))
}

fn shape(r: &Report) -> ConfigJson<'_> {
    ConfigJson {
        file: r.file.as_ref().map(|f| FileJson {
            path: &f.path,
            exists: f.hash.is_some(),
            hash: f.hash.as_deref(),
            trust: f.trust.as_ref().map(TrustWord::of),
        }),
        settings: r
            .entries
            .iter()
            .map(|e| {
                let (origin, scope, path) = match &e.origin {
                    Origin::Git(g) => ("git", Some(g.scope), g.file.as_deref()),
                    Origin::File(p) => ("file", None, Some(p.as_path())),
                    Origin::Env(_) => ("env", None, None),
                    Origin::Default => ("default", None, None),
                };
                EntryJson {
                    key: e.key,
                    value: e.values.first().filter(|_| !e.multi).map(String::as_str),
                    multi: e.multi,
                    values: &e.values,
                    origin,
                    scope,
                    path,
                    problem: e.problem.as_deref(),
                    note: e.note.as_deref(),
                }
            })
            .collect(),
        ignored: &r.ignored,
    }
}

/// A team ledger's URL (`hand.ledger`) is shown without its password, as everywhere else; one
/// that does not parse is not shown at all (its password could be anywhere in it). Any other
/// URL with a password (an https `hand.remoteUrl` with a token in it) is shown with `***` for
/// the password.
fn without_passwords(r: &mut Report) {
    use crate::ledger::server::{ServerUrl, is_server_url};
    let values = r.entries.iter_mut().flat_map(|e| e.values.iter_mut());
    for v in values {
        if is_server_url(v) {
            *v = match ServerUrl::parse(v) {
                Ok(url) => url.to_string(),
                Err(_) => "postgres://... (not shown: it does not parse)".into(),
            };
        } else if let Some(masked) = password_masked(v) {
            *v = masked;
        }
    }
}

/// `scheme://user:password@host/...` as `scheme://user:***@host/...`; `None` for a value with
/// no password. The host starts after the last `@` before the first `/`, `?` or `#` (where git
/// ends the authority), so a password holding an unencoded `@` is masked whole.
fn password_masked(value: &str) -> Option<String> {
    let (scheme, rest) = value.split_once("://")?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (userinfo, host) = rest[..end].rsplit_once('@')?;
    let (user, _password) = userinfo.split_once(':')?;
    Some(format!("{scheme}://{user}:***@{host}{}", &rest[end..]))
}

fn text(ctx: &Context, r: &Report) -> String {
    // A row per value: a multi-valued key set three times is three rows, each whole (a
    // pattern or URL may hold spaces), and `grep hand.include` finds them all.
    let rows: Vec<Vec<String>> = r
        .entries
        .iter()
        .flat_map(|e| {
            let from = match &e.origin {
                Origin::Git(g) => match &g.file {
                    Some(file) => format!("git config ({}: {})", g.scope, file.display()),
                    None => format!("git config ({})", g.scope),
                },
                Origin::File(_) => settings::FILE_NAME.to_string(),
                Origin::Env(var) => var.to_string(),
                Origin::Default => "default".to_string(),
            };
            let values = match e.values.as_slice() {
                [] => vec!["(none)".to_string()],
                // A value from a committed file is shown escaped (`crate::shown`).
                values => values
                    .iter()
                    .map(|v| crate::shown::shown(v).into_owned())
                    .collect(),
            };
            values
                .into_iter()
                .map(move |value| vec![e.key.to_string(), value, from.clone()])
        })
        .collect();
    let mut out = file_line(r);
    out.push_str(&table(&["KEY", "VALUE", "FROM"], &rows, paint(ctx)));
    for e in &r.entries {
        if let Some(problem) = &e.problem {
            out.push_str(&format!("problem: {problem}\n"));
        }
        if let Some(note) = &e.note {
            out.push_str(&format!("note: {note}\n"));
        }
    }
    for key in &r.ignored {
        out.push_str(&format!(
            "ignored: {key} in {} (only git config sets it)\n",
            settings::FILE_NAME
        ));
    }
    out
}

/// The first line: where the file is, and whether its commands may run.
fn file_line(r: &Report) -> String {
    let Some(file) = &r.file else {
        return format!(
            "{}: none (a bare repository has no checkout)\n",
            settings::FILE_NAME
        );
    };
    let state = match &file.trust {
        None => "absent",
        Some(Trust::Trusted) => "trusted",
        Some(Trust::Unknown) => "not trusted: its commands do not run until git hand trust",
        Some(Trust::Changed { .. }) => {
            "changed since it was trusted: its commands do not run until git hand trust"
        }
    };
    format!(
        "{}: {} ({state})\n",
        settings::FILE_NAME,
        crate::shown::path(&file.path)
    )
}

#[cfg(test)]
mod tests {
    use super::password_masked;

    #[test]
    fn a_url_password_is_masked_and_nothing_else_is_touched() {
        let cases = [
            (
                "https://ci:tok3n@example.com/o/app.git",
                Some("https://ci:***@example.com/o/app.git"),
            ),
            (
                "https://:tok3n@example.com",
                Some("https://:***@example.com"),
            ),
            (
                "http://u:p@ss@host:8080?x#y",
                Some("http://u:***@host:8080?x#y"),
            ),
            ("https://ci@example.com/o/app", None),
            ("https://example.com/o/app@v1", None),
            ("git@example.com:o/app.git", None),
            ("ssh://git@example.com:22/o/app", None),
            ("/srv/git/app.git", None),
        ];
        for (value, want) in cases {
            assert_eq!(password_masked(value).as_deref(), want, "{value}");
        }
    }
}
