//! Trusting a repository's committed `.handconfig` before its setup commands run, as direnv
//! and worktrunk do: cloning a repository must never make `git hand spawn` run its commands
//! unasked. `git hand trust` records the file's exact content (its blob id, `git hash-object`)
//! for its path; a file that changed since asks again. Commands from git's configuration are the
//! user's own and need no approval.
//!
//! The approvals live in the user's state directory (`$XDG_STATE_HOME/git-hand/trusted/`, else
//! `~/.local/state/git-hand/trusted/`), one file per approved path, not in the ledger: trust is
//! the user's, and it must not depend on which ledger a repository uses or survive only as long
//! as one does. The environment is read here for that directory.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use crate::git::ConfigFile;
use crate::ops::Result;
use crate::ops::repo::settings::Settings;
use crate::ops::repo::setup::Hook;
use crate::ops::repo::{RepoError, Skip};

/// Whether the user approved a file's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trust {
    /// This exact content.
    Trusted,
    /// Never approved.
    Unknown,
    /// Another content was approved (`approved` is its blob id): the file changed since.
    Changed { approved: String },
}

/// The directory that holds the approvals.
fn store() -> Result<PathBuf> {
    let state =
        crate::ledger::state_dir(|k: &str| std::env::var_os(k)).ok_or(RepoError::NoApprovalsDir)?;
    Ok(state.join("git-hand/trusted"))
}

/// The approval record of the file at `path`: named by a hash of the path, so each file has one.
fn record(path: &Path) -> Result<PathBuf> {
    let name = record_name(path.as_os_str().as_encoded_bytes());
    Ok(store()?.join(name))
}

/// A stable name for a path: FNV-1a, 64 bits, twice (the path and the path reversed), in hex.
/// Not a security boundary (the record holds the path, which is checked): only a file name.
fn record_name(bytes: &[u8]) -> String {
    let fnv = |it: &mut dyn Iterator<Item = &u8>| {
        it.fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
    };
    format!(
        "{:016x}{:016x}",
        fnv(&mut bytes.iter()),
        fnv(&mut bytes.iter().rev())
    )
}

/// Whether the user approved `file`'s content.
pub fn state(file: &ConfigFile) -> Result<Trust> {
    let text = match std::fs::read_to_string(record(file.path())?) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Trust::Unknown),
        Err(e) => {
            return Err(RepoError::ApprovalUnreadable {
                file: file.path().to_path_buf(),
                reason: e.to_string(),
            }
            .into());
        }
    };
    let mut lines = text.lines();
    let (hash, path) = (lines.next().unwrap_or(""), lines.next().unwrap_or(""));
    Ok(if path != file.path().to_string_lossy() {
        Trust::Unknown
    } else if hash == file.hash() {
        Trust::Trusted
    } else {
        Trust::Changed {
            approved: hash.to_string(),
        }
    })
}

/// Records the user's approval of `file`'s content as it was read, replacing any earlier one
/// (written whole, then renamed into place). Returns the record's path.
pub(crate) fn approve(file: &ConfigFile) -> Result<PathBuf> {
    let target = record(file.path())?;
    let failed = |e: std::io::Error| RepoError::ApprovalUnwritten {
        record: target.clone(),
        reason: e.to_string(),
    };
    let dir = target.parent().unwrap_or(Path::new("/"));
    // Private as the ledger's directory is (`0700`): trust run before any ledger exists once
    // made the state directory `0755`. A directory already there is left as it is.
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(failed)?;
    let mut temp = tempfile::NamedTempFile::new_in(dir).map_err(failed)?;
    let text = format!("{}\n{}\n", file.hash(), file.path().display());
    std::io::Write::write_all(&mut temp, text.as_bytes()).map_err(failed)?;
    temp.as_file().sync_all().map_err(failed)?;
    temp.persist(&target).map_err(|e| failed(e.error))?;
    Ok(target)
}

/// What in `file` holds a control or bidirectional-formatting character ([`crate::shown`]), as
/// shown: each line of its text (tabs, line ends and a CR before one aside) and each value of a
/// committable `hand.*` key (a quoted `\n` or `\b` in git's syntax makes one; tabs aside).
/// `git hand trust` approves none of it unless asked (`--allow-control-characters`): such a
/// character makes what a terminal shows differ from what runs (an `ESC[8m` once hid
/// `; touch PWNED`, in the listing and in `cat`).
pub(crate) fn control_characters(file: &ConfigFile) -> Vec<String> {
    let odd = |s: &str| s.chars().any(|c| c != '\t' && crate::shown::is_unsafe(c));
    let text = String::from_utf8_lossy(file.bytes());
    let lines = text
        .split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .enumerate()
        .filter(|(_, line)| odd(line))
        .map(|(n, line)| format!("line {}: {}", n + 1, crate::shown::shown(line.trim())));
    let values = crate::ops::repo::settings::KEYS
        .iter()
        .filter(|k| k.committable)
        .flat_map(|k| file.strings(k.name).into_iter().map(move |v| (k.name, v)))
        // A value whose line holds the character raw is listed by its line already.
        .filter(|(_, v)| odd(v) && !text.contains(v.as_str()))
        .map(|(key, v)| format!("{key} = {}", crate::shown::shown(&v)));
    lines.chain(values).collect()
}

/// Refuses to go on when a command `hooks` would run comes from a `.handconfig` the user has not
/// approved in its current content: nothing was run and nothing was changed. `skip` is the
/// command that goes on without the setup commands, where the caller has one to offer.
pub fn require(settings: &Settings<'_>, hooks: &[Hook], skip: Option<Skip>) -> Result<()> {
    let Some(file) = settings.file() else {
        return Ok(());
    };
    let from_file: Vec<String> = hooks
        .iter()
        .filter_map(|h| settings.setup_command(*h))
        .filter(|c| c.from_file)
        .map(|c| format!("{} = {}", c.hook.key(), crate::shown::shown(&c.command)))
        .collect();
    if from_file.is_empty() {
        return Ok(());
    }
    let changed = match state(file)? {
        Trust::Trusted => return Ok(()),
        Trust::Unknown => None,
        Trust::Changed { approved } => Some((
            crate::ids::short(&approved).to_string(),
            crate::ids::short(file.hash()).to_string(),
        )),
    };
    Err(RepoError::Untrusted {
        file: crate::shown::path(file.path()),
        commands: from_file,
        changed,
        skip,
    }
    .into())
}

#[cfg(test)]
mod tests {
    use super::{ConfigFile, control_characters, record_name};

    fn odd_in(text: &[u8]) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".handconfig");
        std::fs::write(&path, text).unwrap();
        control_characters(&ConfigFile::read(&path).unwrap().unwrap())
    }

    #[test]
    fn tabs_and_line_ends_are_no_control_characters_but_an_escape_or_a_quoted_one_is() {
        assert!(odd_in(b"[hand]\r\n\tonCreate = npm ci\r\n").is_empty());
        assert_eq!(
            odd_in(b"[hand]\n\tonCreate = \"a\x1b[8m;b\"\n"),
            ["line 2: \"onCreate = \\\"a\\e[8m;b\\\"\""]
        );
        assert_eq!(
            odd_in(b"[hand]\n\tonReuse = \"a\\nb\"\n"),
            ["hand.onReuse = \"a\\nb\""]
        );
        assert_eq!(
            odd_in("# \u{202e}\n".as_bytes()),
            ["line 1: \"# \\u{202e}\""]
        );
    }

    #[test]
    fn each_path_has_its_own_record_name() {
        assert_ne!(
            record_name(b"/a/.handconfig"),
            record_name(b"/b/.handconfig")
        );
        assert_eq!(record_name(b"/a").len(), 32);
    }
}
