//! Files a checkout lacks (`.env`, `node_modules/`, `target/`, `*.local`), copied from the main
//! worktree into a slot spawn has just created: what the `hand.include` patterns match, and what
//! the main worktree's `.worktreeinclude` ([`worktreeinclude`]: the file Claude Code, Conductor,
//! worktrunk, gtr and opencode read) matches.
//!
//! What is copied, and why each rule:
//! - Only a path git ignores and does not track. Git matches the patterns (`git ls-files
//!   --others --ignored -x <pattern>`, gitignore syntax, a matched directory taken whole), so a
//!   pattern means what it would mean in `.gitignore`. A tracked match is never copied (the
//!   checkout has the task's own version) and is reported. An untracked path git does not ignore
//!   is reported and not copied either: in the slot it would show in `git status` (so the slot
//!   could never be torn down clean or reused) and an agent's `git add -A` would commit it.
//! - Each source is matched on its own and a path either selects is copied: a `!` line in
//!   `.worktreeinclude` excludes what that file's own lines matched, never a `hand.include`
//!   match (a file shared with other tools must not undo what git-hand was told). A path both
//!   select is copied once and reported as `hand.include`'s; a path under a directory one of
//!   them copies whole is part of that copy.
//! - Never over anything the slot has: a path that exists there, or under a parent that is not a
//!   real directory there (a tracked symlink), is reported and left alone.
//! - Never through a symbolic link out of the main worktree: a matched path that is a link is
//!   copied, as a link, only if it is relative and stays inside the main worktree (so it means
//!   the same in the slot); links inside a copied directory are copied as links, never followed.
//! - Whole or not at all: each match is copied to a temporary name beside its destination
//!   (`.git-hand-tmp-*`), then renamed; a failure removes the temporary copy.
//! - By [`crate::platform::clone`], which keeps what `cp -a` keeps (modes, times, links as links)
//!   and clones the blocks where the filesystem can (btrfs, XFS, APFS) and copies them otherwise.
//!   A match is reported `reflink` when every file in it was cloned; one with no regular file
//!   (a link, empty directories) takes what the others' files showed of the filesystem.
//!
//! Only a new slot gets the copies. A reused slot keeps the ignored files its last task left
//! (teardown's clean never removes ignored files), and those may be newer than the main
//! worktree's (a `node_modules` the task rebuilt): refreshing them would overwrite work, so a
//! reused slot is never touched.
//!
//! A failure to copy is a warning, not a failed spawn: the slot is a correct checkout without the
//! file, and the report names what was not copied and why. A `.worktreeinclude` git-hand will not
//! read (a symbolic link, not a regular file, larger than the cap) is such a failure too: it is
//! reported, nothing it names is copied, and `hand.include` is copied as ever.

pub mod worktreeinclude;

use std::collections::{BTreeMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::{self, Write as _};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::process::Stdio;

use serde::{Deserialize, Serialize};

use crate::git::{Git, Repo};
use crate::platform::clone::{Cloned, Cloner};

/// The patterns to copy into a new slot: every value of `hand.include` (git config, else the
/// committed `.handconfig`: [`crate::ops::repo::settings`]), blank ones dropped. The one place they are read.
/// Spawn's check has already refused a `.handconfig` that does not parse, so a failure to load
/// the settings here means no patterns.
pub fn patterns(repo: &Repo) -> Vec<String> {
    crate::ops::repo::settings::Settings::load(repo)
        .map(|settings| settings.include())
        .unwrap_or_default()
        .into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

/// Where a pattern came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Source {
    /// A value of `hand.include` (git config, else `.handconfig`).
    #[serde(rename = "hand.include")]
    HandInclude,
    /// A line of the main worktree's `.worktreeinclude`.
    #[serde(rename = ".worktreeinclude")]
    WorktreeInclude,
}

/// One source's patterns, matched on their own (see the module docs).
struct Patterns {
    source: Source,
    patterns: Vec<Vec<u8>>,
}

/// The sources that hold a pattern: `hand.include`, then `.worktreeinclude`. A
/// `.worktreeinclude` that cannot be read is reported in `skipped`, and gives no pattern.
fn sources(repo: &Repo, main: &Path, skipped: &mut Vec<NotCopied>) -> Vec<Patterns> {
    let mut sources = Vec::new();
    let configured = patterns(repo);
    if !configured.is_empty() {
        sources.push(Patterns {
            source: Source::HandInclude,
            patterns: configured.into_iter().map(String::into_bytes).collect(),
        });
    }
    match worktreeinclude::read(main) {
        Ok(None) => {}
        Ok(Some(patterns)) if patterns.is_empty() => {}
        Ok(Some(patterns)) => sources.push(Patterns {
            source: Source::WorktreeInclude,
            patterns,
        }),
        Err(e) => skipped.push(not_read(e)),
    }
    sources
}

/// The one entry that reports a `.worktreeinclude` nothing was copied from, and why.
fn not_read(why: impl std::fmt::Display) -> NotCopied {
    skip(
        worktreeinclude::FILE.to_string(),
        Reason::Failed,
        Some(format!("{why}; nothing it names was copied")),
        Source::WorktreeInclude,
    )
}

/// What a spawn copied into its new slot, and what it did not.
#[derive(Debug, Clone, Default)]
pub struct Included {
    pub copied: Vec<Copied>,
    pub skipped: Vec<NotCopied>,
}

/// One path copied whole: a file, a link or a directory with everything in it.
#[derive(Debug, Clone)]
pub struct Copied {
    /// Relative to the worktree's top; a directory ends with `/`.
    pub path: String,
    /// Files and links copied (directories not counted).
    pub files: u64,
    pub bytes: u64,
    pub how: How,
    /// The patterns that selected it.
    pub source: Source,
}

/// How the blocks got there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum How {
    /// Cloned: the filesystem shares the blocks until either side writes.
    Reflink,
    Copy,
}

/// A path a pattern matched that was not copied.
#[derive(Debug, Clone)]
pub struct NotCopied {
    pub path: String,
    pub reason: Reason,
    /// What went wrong, for `failed`; what the link points to, for `symlink-outside`.
    pub detail: Option<String>,
    /// The patterns that matched it (for a pattern git could not match, or a
    /// `.worktreeinclude` that could not be read, the source of that pattern or file).
    pub source: Source,
}

/// Why a matched path was not copied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// Git tracks it: the checkout has it.
    Tracked,
    /// Untracked but not ignored: it would make the slot unclean.
    NotIgnored,
    /// A symbolic link that leads out of the main worktree.
    SymlinkOutside,
    /// The slot already has something at that path (or a parent that is no directory).
    InSlot,
    /// Reading, listing or copying it failed.
    Failed,
}

crate::word::words!(How: "include method", Reason: "include reason", Source: "include source");

/// Where a copy is, for a progress line: before each path, with the totals.
#[derive(Debug, Clone, Copy)]
pub struct Copying<'a> {
    pub path: &'a str,
    pub files: u64,
    pub bytes: u64,
    pub done_bytes: u64,
    pub total_files: u64,
    pub total_bytes: u64,
}

/// Copies what the patterns match in the main worktree into `slot`, a new slot (see the module
/// docs). Never fails: what could not be copied is in [`Included::skipped`]. Without a
/// `.worktreeinclude` and with no `hand.include`, it runs no git at all.
pub fn include(repo: &Repo, slot: &Path, progress: &dyn Fn(Copying<'_>)) -> Included {
    let mut out = Included::default();
    let Some(main) = repo.main_workdir() else {
        return out;
    };
    let sources = sources(repo, &main, &mut out.skipped);
    if sources.is_empty() {
        return out;
    }
    let git = Git::new(&main);
    // Keyed by path, so each is reported once, in git's (byte) order; the first source to
    // select a path keeps it.
    let mut tracked = BTreeMap::new();
    let mut untracked = BTreeMap::new();
    for Patterns { source, patterns } in &sources {
        match Listed::of(&git, patterns) {
            Ok(listed) => {
                for p in listed.tracked {
                    tracked.entry(p).or_insert(*source);
                }
                for p in listed.untracked {
                    untracked.entry(p).or_insert(*source);
                }
            }
            // `.worktreeinclude` is one entry, as when it cannot be read: the file may hold
            // thousands of lines.
            Err(e) if *source == Source::WorktreeInclude => out.skipped.push(not_read(e)),
            Err(e) => out.skipped.extend(
                patterns
                    .iter()
                    .map(|p| skip(lossy(p), Reason::Failed, Some(e.clone()), *source)),
            ),
        }
    }
    out.skipped.extend(
        tracked
            .into_iter()
            .map(|(p, source)| skip(lossy(&p), Reason::Tracked, None, source)),
    );
    let paths: Vec<Vec<u8>> = untracked.keys().cloned().collect();
    let ignored = match check_ignore(&git, &paths) {
        Ok(ignored) => ignored,
        Err(e) => {
            out.skipped.extend(
                untracked
                    .into_iter()
                    .map(|(p, source)| skip(lossy(&p), Reason::Failed, Some(e.clone()), source)),
            );
            return out;
        }
    };
    let mut plans = Vec::new();
    // The last directory planned to be copied whole: a path under it (another source's
    // `node_modules/a.js` when `node_modules/` is copied) is part of that copy, not a path the
    // slot already has. In byte order, a directory's contents follow it.
    let mut copied_dir: Option<&[u8]> = None;
    for (rel, source) in &untracked {
        if copied_dir.is_some_and(|dir| rel.starts_with(dir)) {
            continue;
        }
        if !ignored.contains(rel) {
            out.skipped
                .push(skip(lossy(rel), Reason::NotIgnored, None, *source));
            continue;
        }
        match Plan::of(&main, slot, rel, *source) {
            Ok(plan) => {
                if rel.ends_with(b"/") {
                    copied_dir = Some(rel);
                }
                plans.push(plan);
            }
            Err((reason, detail)) => out.skipped.push(skip(lossy(rel), reason, detail, *source)),
        }
    }
    copy_all(&plans, &mut out, progress);
    out
}

fn skip(path: String, reason: Reason, detail: Option<String>, source: Source) -> NotCopied {
    NotCopied {
        path,
        reason,
        detail,
        source,
    }
}

fn lossy(p: &[u8]) -> String {
    String::from_utf8_lossy(p).into_owned()
}

/// Copies each planned path, saying before each where the copy is.
fn copy_all(plans: &[Plan], out: &mut Included, progress: &dyn Fn(Copying<'_>)) {
    let total_files = plans.iter().map(|p| p.files).sum();
    let total_bytes = plans.iter().map(|p| p.bytes).sum();
    let mut cloner = Cloner::new();
    let mut done_bytes = 0;
    let mut copied = Vec::new();
    for plan in plans {
        let path = lossy(&plan.rel);
        progress(Copying {
            path: &path,
            files: plan.files,
            bytes: plan.bytes,
            done_bytes,
            total_files,
            total_bytes,
        });
        done_bytes += plan.bytes;
        match plan.copy(&mut cloner) {
            Ok(cloned) => copied.push((plan, path, cloned)),
            Err(e) => out
                .skipped
                .push(skip(path, Reason::Failed, Some(e), plan.source)),
        }
    }
    // What the files showed of the filesystem, for a copy that held none.
    let clones = copied
        .iter()
        .filter_map(|(_, _, cloned)| cloned.all_reflinked())
        .reduce(|a, b| a && b)
        .unwrap_or(false);
    out.copied
        .extend(copied.into_iter().map(|(plan, path, cloned)| Copied {
            path,
            files: plan.files,
            bytes: plan.bytes,
            how: if cloned.all_reflinked().unwrap_or(clones) {
                How::Reflink
            } else {
                How::Copy
            },
            source: plan.source,
        }));
}

/// What git says of one source's patterns in the main worktree: the tracked paths they match
/// and the untracked ones (a matched directory whole). Which of those git ignores is asked
/// once for every source ([`check_ignore`]).
struct Listed {
    tracked: Vec<Vec<u8>>,
    untracked: Vec<Vec<u8>>,
}

impl Listed {
    fn of(git: &Git, patterns: &[Vec<u8>]) -> Result<Self, String> {
        // Bytes, as the file held them: a pattern need not be UTF-8.
        let excludes: Vec<OsString> = patterns
            .iter()
            .map(|p| {
                let mut arg = OsString::from("--exclude=");
                arg.push(OsStr::from_bytes(p));
                arg
            })
            .collect();
        let ls = |what: &[&str]| -> Result<Vec<Vec<u8>>, String> {
            let args: Vec<&OsStr> = ["ls-files", "-z", "--ignored"]
                .into_iter()
                .chain(what.iter().copied())
                .map(OsStr::new)
                .chain(excludes.iter().map(OsString::as_os_str))
                .collect();
            let out = git.output(&args).map_err(|e| e.to_string())?;
            if !out.status.success() {
                return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
            }
            Ok(split_z(&out.stdout))
        };
        Ok(Self {
            tracked: ls(&["--cached"])?,
            untracked: whole_directories(ls(&["--others", "--directory"])?),
        })
    }
}

fn split_z(bytes: &[u8]) -> Vec<Vec<u8>> {
    bytes
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

/// `ls-files --others --ignored --directory` also lists an untracked directory that merely
/// contains a match (`pkg/` for `pkg/.env`), followed by the match: a directory with another
/// entry below it is dropped, so only what a pattern matched is copied.
fn whole_directories(mut listed: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    listed.sort();
    let keep: Vec<bool> = listed
        .iter()
        .enumerate()
        .map(|(i, p)| {
            !(p.ends_with(b"/") && listed.get(i + 1).is_some_and(|next| next.starts_with(p)))
        })
        .collect();
    listed
        .into_iter()
        .zip(keep)
        .filter_map(|(p, keep)| keep.then_some(p))
        .collect()
}

/// The paths git's own ignore rules (`.gitignore`, `info/exclude`, `core.excludesFile`) ignore.
fn check_ignore(git: &Git, paths: &[Vec<u8>]) -> Result<HashSet<Vec<u8>>, String> {
    if paths.is_empty() {
        return Ok(HashSet::new());
    }
    let mut child = git
        .command(&["check-ignore", "-z", "--stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run git check-ignore: {e}"))?;
    let input: Vec<u8> = paths
        .iter()
        .flat_map(|p| p.iter().chain(b"\0"))
        .copied()
        .collect();
    let mut stdin = child.stdin.take();
    // Written on its own thread: git answers while it reads, and both pipes can fill.
    let writer = std::thread::spawn(move || stdin.as_mut().map(|s| s.write_all(&input)));
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    let _ = writer.join();
    // Exit 1 means none is ignored.
    if !matches!(out.status.code(), Some(0 | 1)) {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    Ok(split_z(&out.stdout).into_iter().collect())
}

/// One matched path, proven copyable, and measured.
struct Plan {
    rel: Vec<u8>,
    source: Source,
    src: PathBuf,
    dest: PathBuf,
    files: u64,
    bytes: u64,
}

type Refusal = (Reason, Option<String>);

impl Plan {
    fn of(main: &Path, slot: &Path, rel: &[u8], source: Source) -> Result<Self, Refusal> {
        let rel_path = Path::new(OsStr::from_bytes(rel));
        let plain = rel_path
            .components()
            .all(|c| matches!(c, Component::Normal(_)));
        if !plain {
            return Err((Reason::Failed, Some("not a plain relative path".into())));
        }
        let src = main.join(rel_path);
        let meta = fs::symlink_metadata(&src).map_err(failed)?;
        if meta.is_symlink() {
            link_stays_inside(main, rel_path, &src)?;
        }
        let dest = slot.join(rel_path);
        parents_are_directories(slot, rel_path)?;
        if fs::symlink_metadata(&dest).is_ok() {
            return Err((Reason::InSlot, None));
        }
        let (files, bytes) = measure(&src).map_err(failed)?;
        Ok(Self {
            rel: rel.to_vec(),
            source,
            src,
            dest,
            files,
            bytes,
        })
    }

    /// Cloned to a temporary name beside the destination, then renamed: a failure never leaves
    /// a partial copy under the real name, and removes what it had copied.
    fn copy(&self, cloner: &mut Cloner) -> Result<Cloned, String> {
        let parent = self.dest.parent().unwrap_or(Path::new("."));
        fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        let tmp = parent.join(format!(
            ".git-hand-tmp-{}",
            crate::ids::random_hex(8).map_err(|e| e.to_string())?
        ));
        let copied = match cloner.clone_tree(&self.src, &tmp) {
            Ok(cloned) => {
                (fs::rename(&tmp, &self.dest).map(|()| cloned)).map_err(|e| e.to_string())
            }
            Err(e) => Err(e.to_string()),
        };
        if copied.is_err() {
            remove(&tmp);
        }
        copied
    }
}

fn failed(e: io::Error) -> Refusal {
    (Reason::Failed, Some(e.to_string()))
}

/// A matched link is copied only if it is relative and, read from where it sits, never leaves
/// the main worktree (lexically, so it means the same in the slot, and once resolved, so no link
/// on its way leads out).
fn link_stays_inside(main: &Path, rel: &Path, src: &Path) -> Result<(), Refusal> {
    let target = fs::read_link(src).map_err(failed)?;
    let outside = || Err((Reason::SymlinkOutside, Some(target.display().to_string())));
    if target.is_absolute() {
        return outside();
    }
    let mut depth = rel.components().count().saturating_sub(1);
    for c in target.components() {
        match c {
            Component::ParentDir if depth == 0 => return outside(),
            Component::ParentDir => depth -= 1,
            Component::Normal(_) => depth += 1,
            _ => {}
        }
    }
    let main = fs::canonicalize(main).map_err(failed)?;
    match fs::canonicalize(src) {
        Ok(resolved) if resolved.starts_with(&main) => Ok(()),
        _ => outside(),
    }
}

/// Every parent of `rel` that the slot has must be a real directory (a tracked symlink there
/// would lead the copy out of the slot); missing ones are created when copying.
fn parents_are_directories(slot: &Path, rel: &Path) -> Result<(), Refusal> {
    let mut at = slot.to_path_buf();
    let parents: Vec<_> = rel.components().collect();
    for c in &parents[..parents.len().saturating_sub(1)] {
        at.push(c);
        match fs::symlink_metadata(&at) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err((
                    Reason::InSlot,
                    Some(format!("{} is no directory", at.display())),
                ));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(failed(e)),
        }
    }
    Ok(())
}

/// Files (and links) and bytes under `path`, no link followed.
fn measure(path: &Path) -> io::Result<(u64, u64)> {
    let (mut files, mut bytes) = (0, 0);
    let mut stack = vec![path.to_path_buf()];
    while let Some(p) = stack.pop() {
        let meta = fs::symlink_metadata(&p)?;
        if meta.is_dir() {
            for entry in fs::read_dir(&p)? {
                stack.push(entry?.path());
            }
            continue;
        }
        files += 1;
        bytes += meta.len();
    }
    Ok((files, bytes))
}

fn remove(path: &Path) {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => {
            let _ = fs::remove_dir_all(path);
        }
        Ok(_) => {
            let _ = fs::remove_file(path);
        }
        Err(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_is_spelled_as_the_user_writes_it() {
        assert_eq!(Source::HandInclude.to_string(), "hand.include");
        assert_eq!(Source::WorktreeInclude.to_string(), ".worktreeinclude");
    }

    #[test]
    fn a_directory_that_only_contains_a_match_is_not_taken_whole() {
        let listed = [
            "pkg/.env",
            "node_modules/",
            "pkg/",
            "pkg/x/",
            "pkg/x/nm/",
            ".env",
        ]
        .map(|s| s.as_bytes().to_vec())
        .to_vec();
        let kept: Vec<String> = whole_directories(listed).iter().map(|p| lossy(p)).collect();
        assert_eq!(kept, [".env", "node_modules/", "pkg/.env", "pkg/x/nm/"]);
    }
}
