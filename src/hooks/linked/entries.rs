//! What each file of L should be (rules 3 and 4): the plan a sync writes and a check compares,
//! the forwarders' text and `linked.config`'s.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::{
    EntryChange, FORWARDER_MARKER, HOOK_NAMES, LinkedError, Paths, RECORD_PREFIX,
    REFERENCE_TRANSACTION, is_hook, main_worktree,
};
use crate::hint::say;
use crate::hooks::{CHAINED_SUFFIX, chain::is_our_shim, files::io_err, shim};

/// The target of a forwarder [`sync`](super::sync) wrote (`<D>/<name>`, or `./<D>/<name>` for a relative
/// D), for "in force" to follow (rule 6). `None`: not a forwarder.
pub fn forward_target(bytes: &[u8]) -> Option<PathBuf> {
    let head = format!("#!/bin/sh\n{FORWARDER_MARKER}\n[ -x ");
    let (target, _) = sh_word(bytes.strip_prefix(head.as_bytes())?)?;
    // Only what sync writes, byte for byte: an edited forwarder is not followed.
    (forwarder(Path::new(OsStr::from_bytes(&target))) == bytes)
        .then(|| PathBuf::from(OsString::from_vec(target)))
}

/// The text of a forwarder to `target`: git's own rule for a hook that is not (or no longer)
/// executable is to skip it, so the forwarder does too; `exec` keeps git's stdin and makes `$0`
/// the target's path (pre-commit's script and git-hand's shim find their files beside `$0`).
pub(super) fn forwarder(target: &Path) -> Vec<u8> {
    let q = shim::sh_quote_bytes(target.as_os_str().as_bytes());
    let mut text = Vec::new();
    text.extend_from_slice(b"#!/bin/sh\n");
    text.extend_from_slice(FORWARDER_MARKER.as_bytes());
    text.extend_from_slice(b"\n[ -x ");
    text.extend_from_slice(&q);
    text.extend_from_slice(b" ] || exit 0\nexec ");
    text.extend_from_slice(&q);
    text.extend_from_slice(b" \"$@\"\n");
    text
}

/// What one file of L should be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Want {
    /// A regular file with these bytes, mode 0755.
    File(Vec<u8>),
    Link(PathBuf),
    Nothing,
}

/// One file of L: what it should be, whether it is, and what writing it would be reported as.
pub(super) struct Step {
    pub(super) path: PathBuf,
    pub(super) want: Want,
    pub(super) change: EntryChange,
    pub(super) now: Have,
}

impl Step {
    /// Something git-hand did not write holds the place: reported, and moved aside by [`sync`](super::sync)
    /// when it is a file ([`Self::is_displaceable`]), else left alone.
    pub(super) fn is_foreign(&self) -> bool {
        !self.matches() && !self.now.is_ours()
    }

    /// A foreign regular file: [`sync`](super::sync) moves it aside (a rename keeps every byte).
    pub(super) fn is_displaceable(&self) -> bool {
        self.is_foreign() && matches!(self.now, Have::File { .. })
    }

    pub(super) fn matches(&self) -> bool {
        match (&self.want, &self.now) {
            (Want::File(bytes), Have::File { bytes: have, exec }) => *exec && bytes == have,
            (Want::Link(target), Have::Link(have)) => target == have,
            (Want::Nothing, Have::Nothing) => true,
            _ => false,
        }
    }
}

/// What a file of L is now. Never follows a link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Have {
    Nothing,
    File {
        bytes: Vec<u8>,
        exec: bool,
    },
    Link(PathBuf),
    /// A directory, a FIFO, a socket, a device: nothing git-hand writes.
    Other,
}

impl Have {
    /// Whether [`sync`](super::sync) may replace or remove it: nothing, a link (L's links are git-hand's:
    /// nothing else makes one there), a forwarder exactly as `sync` writes it, or git-hand's
    /// shim (of any version).
    pub(super) fn is_ours(&self) -> bool {
        match self {
            Have::Nothing | Have::Link(_) => true,
            Have::File { bytes, .. } => forward_target(bytes).is_some() || shim::is_ours(bytes),
            Have::Other => false,
        }
    }
}

pub(super) struct Plan {
    pub(super) entries: Vec<Step>,
    pub(super) config: Vec<u8>,
}

pub(super) fn plan(paths: &Paths, d: &Path, reftx_shim: &str) -> Result<Plan, LinkedError> {
    let relative = d.is_relative();
    // Where D's hooks are looked for: D itself, or a relative D under the main worktree (none in
    // a bare repository: no forwarders then).
    let probe = match relative {
        true => main_worktree(&paths.common)?.map(|top| top.join(d)),
        false => Some(d.to_path_buf()),
    };
    if !relative && (d == paths.hooks || fs::canonicalize(d).ok() == Some(paths.hooks.clone())) {
        return Err(LinkedError::Loop { d: d.to_path_buf() });
    }
    // What a forwarder execs: hooks run at the worktree's top, so a relative D is `./<D>`.
    let target = |name: &str| match relative {
        true => Path::new(".").join(d).join(name),
        false => d.join(name),
    };
    let has = |name: &str| probe.as_ref().is_some_and(|p| is_hook(&p.join(name)));
    let mut entries = Vec::new();
    // githooks(5) as of git 2.47, and any other hook D holds (a newer git's name): a hook D has
    // is forwarded whatever git-hand's list knows.
    let newer: Vec<String> = probe
        .as_ref()
        .map(|p| newer_hook_names(p))
        .unwrap_or_default();
    let names = HOOK_NAMES
        .iter()
        .copied()
        .chain(newer.iter().map(String::as_str));
    for name in names {
        let path = paths.hooks.join(name);
        let (want, change) = if name == REFERENCE_TRANSACTION {
            (
                Want::File(reftx_shim.as_bytes().to_vec()),
                EntryChange::Shim,
            )
        } else if has(name) {
            (Want::File(forwarder(&target(name))), EntryChange::Forwarder)
        } else if relative {
            (Want::Nothing, EntryChange::Removed)
        } else {
            (Want::Link(d.join(name)), EntryChange::Link)
        };
        entries.push(step(path, want, change)?);
    }
    // The shim's chained hook is D's reference-transaction; when that is git-hand's own shim
    // (installed before issue 25), the user's hook is the one it chained.
    let chained = format!("{REFERENCE_TRANSACTION}{CHAINED_SUFFIX}");
    let d_reftx = probe.as_ref().map(|p| p.join(REFERENCE_TRANSACTION));
    let ours = d_reftx.as_ref().is_some_and(|p| is_our_shim(p));
    let chain_to = match (has(REFERENCE_TRANSACTION), ours) {
        (true, false) => Some(REFERENCE_TRANSACTION.to_string()),
        (true, true) if has(&chained) => Some(chained.clone()),
        _ => None,
    };
    let want = match chain_to {
        Some(name) => Want::File(forwarder(&target(&name))),
        // D has no reference-transaction hook yet: a dangling link, so one added there later runs
        // in slots at once (through the shim, as its chained hook), as every other name's does.
        None if !relative && !ours => Want::Link(d.join(REFERENCE_TRANSACTION)),
        None => Want::Nothing,
    };
    let change = match want {
        Want::Nothing => EntryChange::Removed,
        Want::Link(_) => EntryChange::Link,
        Want::File(_) => EntryChange::Chained,
    };
    entries.push(step(paths.hooks.join(&chained), want, change)?);
    Ok(Plan {
        entries,
        config: linked_config(paths, d),
    })
}

/// The hooks in `d` whose names git-hand's list does not know: executable files named as git
/// names hooks (lowercase words and dashes: no `.sample`, no `.git-hand-chained`).
pub(super) fn newer_hook_names(d: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(d) else {
        return vec![];
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| {
            !n.is_empty()
                && n.bytes().all(|b| b.is_ascii_lowercase() || b == b'-')
                && !HOOK_NAMES.contains(&n.as_str())
                && is_hook(&d.join(n))
        })
        .collect();
    names.sort();
    names
}

pub(super) fn step(path: PathBuf, want: Want, change: EntryChange) -> Result<Step, LinkedError> {
    let now = have(&path)?;
    Ok(Step {
        path,
        want,
        change,
        now,
    })
}

pub(super) fn have(path: &Path) -> Result<Have, LinkedError> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Have::Nothing),
        Err(e) => return Err(io_err("look at", path)(e).into()),
    };
    if meta.file_type().is_symlink() {
        let target = fs::read_link(path).map_err(io_err("read the link", path))?;
        return Ok(Have::Link(target));
    }
    if !meta.is_file() {
        return Ok(Have::Other);
    }
    let bytes = fs::read(path).map_err(io_err("read", path))?;
    Ok(Have::File {
        bytes,
        exec: meta.permissions().mode() & 0o111 != 0,
    })
}

/// `linked.config`: the record (rule 4, a comment git ignores) and `core.hooksPath = L`.
pub(super) fn linked_config(paths: &Paths, d: &Path) -> Vec<u8> {
    let mut text = Vec::new();
    text.extend_from_slice(RECORD_PREFIX.as_bytes());
    text.extend_from_slice(&config_quote(d.as_os_str().as_bytes()));
    text.extend_from_slice(b" and common dir ");
    text.extend_from_slice(&config_quote(paths.common.as_os_str().as_bytes()));
    let record: String = say("\n# by git-hand, for linked worktrees only (docs/hooks.md); ")
        .hand("install")
        .text(" rewrites it\n[core]\n\thooksPath = ")
        .into();
    text.extend_from_slice(record.as_bytes());
    text.extend_from_slice(&config_quote(paths.hooks.as_os_str().as_bytes()));
    text.push(b'\n');
    text
}

/// A git config value in double quotes: `\`, `"`, newline and tab escaped, so any path is one
/// value (and one line).
pub(super) fn config_quote(bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![b'"'];
    for &b in bytes {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'"' => out.extend_from_slice(b"\\\""),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\t' => out.extend_from_slice(b"\\t"),
            _ => out.push(b),
        }
    }
    out.push(b'"');
    out
}

/// The inverse of [`config_quote`] at the start of `text`: the value and what follows it.
pub(super) fn config_unquote(text: &[u8]) -> Option<(Vec<u8>, &[u8])> {
    let mut rest = text.strip_prefix(b"\"")?;
    let mut out = Vec::new();
    loop {
        let (&b, tail) = rest.split_first()?;
        rest = tail;
        match b {
            b'"' => return Some((out, rest)),
            b'\\' => {
                let (&e, tail) = rest.split_first()?;
                rest = tail;
                out.push(match e {
                    b'n' => b'\n',
                    b't' => b'\t',
                    other => other,
                });
            }
            _ => out.push(b),
        }
    }
}

/// The inverse of [`shim::sh_quote_bytes`] at the start of `text` (a path may hold newlines, so no line
/// splitting): the word and what follows it.
pub(super) fn sh_word(text: &[u8]) -> Option<(Vec<u8>, &[u8])> {
    let mut rest = text.strip_prefix(b"'")?;
    let mut out = Vec::new();
    loop {
        let end = rest.iter().position(|b| *b == b'\'')?;
        out.extend_from_slice(&rest[..end]);
        rest = &rest[end + 1..];
        match rest.strip_prefix(b"\\''") {
            Some(after) => {
                out.push(b'\'');
                rest = after;
            }
            None => return Some((out, rest)),
        }
    }
}
