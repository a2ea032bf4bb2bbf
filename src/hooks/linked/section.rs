//! The `[includeIf "gitdir:./worktrees/**"]` section of `<common>/config` (rule 1): added and
//! removed through git, so the file comes back byte for byte, with the newline git adds to a
//! file that had none noted and taken back.

use std::ffi::OsStr;
use std::fs;
use std::io::{self, Write};
use std::path::Path;

use super::{
    INCLUDE_PATH, KEY, KEY_LISTED, LinkedError, Paths, SECTION, canonical, failed, git_err,
    git_output, own_dir, remove_if_present, write_plain,
};
use crate::hooks::files::io_err;

/// What [`include`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Included {
    Added,
    Unchanged,
}

/// What [`exclude`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Excluded {
    Removed,
    NotThere,
}

/// Rule 1: appends `[includeIf "gitdir:./worktrees/**"] path = git-hand/linked.config` to
/// `<common>/config` (through git), noting first whether the file ended in a newline.
pub fn include(common: &Path) -> Result<Included, LinkedError> {
    let paths = Paths::of(&canonical(common)?);
    match section(&paths)? {
        Section::Ours => return Ok(Included::Unchanged),
        Section::Other(found) => {
            return Err(LinkedError::SectionTaken {
                config: paths.repo_config,
                found,
            });
        }
        Section::Absent => {}
    }
    let before = fs::read(&paths.repo_config).map_err(io_err("read", &paths.repo_config))?;
    // A note is written, never removed here: a concurrent include may have appended the section
    // (and its newline) between our look and this read, and its note is the one that counts.
    // A stale note is harmless: the strip takes a newline only from a file of exactly that length.
    if !before.is_empty() && !before.ends_with(b"\n") {
        own_dir(&paths.own)?;
        write_plain(
            &paths.newline_note,
            Note::of(&before).text().as_bytes(),
            0o644,
        )?;
    }
    // Two spawns installing at once: the other one's git may hold `config.lock` for its own
    // write of this very section. Wait briefly for it, then see whether its write is ours too.
    for _ in 0..LOCK_ATTEMPTS {
        match config_file(&paths, &[KEY, INCLUDE_PATH], "add the includeIf section to") {
            Ok(()) => return Ok(Included::Added),
            Err(e) if e.is_lock_contention() => {
                if matches!(section(&paths)?, Section::Ours) {
                    return Ok(Included::Unchanged);
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(e) => return Err(e),
        }
    }
    config_file(&paths, &[KEY, INCLUDE_PATH], "add the includeIf section to")?;
    Ok(Included::Added)
}

/// How often [`include`] finds `config.lock` held by another git before it gives up.
pub(super) const LOCK_ATTEMPTS: usize = 10;

/// Whether [`include`] could add the section: refused (changing nothing) when the user has a
/// section of that name holding anything else. Asked before anything of the layout is written.
pub fn check_includable(common: &Path) -> Result<(), LinkedError> {
    let paths = Paths::of(&canonical(common)?);
    match section(&paths)? {
        Section::Other(found) => Err(LinkedError::SectionTaken {
            config: paths.repo_config,
            found,
        }),
        Section::Ours | Section::Absent => Ok(()),
    }
}

/// Rule 1: removes the section (through git) and the newline git added for it, so
/// `<common>/config` is byte for byte what it was before [`include`].
pub fn exclude(common: &Path) -> Result<Excluded, LinkedError> {
    let paths = Paths::of(&canonical(common)?);
    match section(&paths)? {
        // An earlier exclude removed the section but stopped before its newline was taken
        // back (the strip found git's lock): finish it, then forget the note.
        Section::Absent => {
            strip_noted_newline(&paths)?;
            return Ok(Excluded::NotThere);
        }
        Section::Other(found) => {
            return Err(LinkedError::SectionTaken {
                config: paths.repo_config,
                found,
            });
        }
        Section::Ours => {}
    }
    config_file(
        &paths,
        &["--remove-section", SECTION],
        "remove the includeIf section from",
    )?;
    strip_noted_newline(&paths)?;
    Ok(Excluded::Removed)
}

/// Takes back the newline git added when [`include`] appended the section to a file that had
/// none (its length then is in the note), and removes the note. A note that cannot be read is
/// an error, not an absent one: the newline would be left for good.
pub(super) fn strip_noted_newline(paths: &Paths) -> Result<(), LinkedError> {
    let noted = match fs::read_to_string(&paths.newline_note) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(io_err("read", &paths.newline_note)(e).into()),
    };
    if let Some(note) = noted.as_deref().and_then(Note::parse) {
        strip_final_newline(&paths.repo_config, note)?;
    }
    remove_if_present(&paths.newline_note)
}

/// What the newline note records of `<common>/config` as it was before [`include`]: its length
/// and a digest of its bytes, so the newline is taken back only from that very file (plus the
/// newline), never from one the user changed since to the same length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Note {
    pub(super) len: usize,
    /// FNV-1a of the bytes; absent in a note an earlier build wrote (length only).
    pub(super) digest: Option<u64>,
}

impl Note {
    pub(super) fn of(bytes: &[u8]) -> Note {
        Note {
            len: bytes.len(),
            digest: Some(fnv1a(bytes)),
        }
    }

    pub(super) fn text(&self) -> String {
        match self.digest {
            Some(d) => format!("{} {d:016x}", self.len),
            None => self.len.to_string(),
        }
    }

    pub(super) fn parse(text: &str) -> Option<Note> {
        let mut words = text.split_whitespace();
        let len = words.next()?.parse().ok()?;
        let digest = match words.next() {
            Some(d) => Some(u64::from_str_radix(d, 16).ok()?),
            None => None,
        };
        Some(Note { len, digest })
    }

    pub(super) fn matches(&self, bytes: &[u8]) -> bool {
        bytes.len() == self.len && self.digest.is_none_or(|d| d == fnv1a(bytes))
    }
}

/// FNV-1a, 64 bits: a digest to recognise a file by, not a defence against anyone.
pub(super) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Whether `<common>/config` holds the section exactly as `git config` appends it:
/// the header line, then the one key.
pub(super) fn included_as_written(config: &Path) -> Result<bool, LinkedError> {
    let text = match fs::read(config) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(io_err("read", config)(e).into()),
    };
    let header = "[includeIf \"gitdir:./worktrees/**\"]".as_bytes();
    let key = format!("path = {INCLUDE_PATH}");
    let lines: Vec<&[u8]> = text
        .split(|b| *b == b'\n')
        .map(|l| l.trim_ascii())
        .collect();
    Ok(lines
        .windows(2)
        .any(|w| w[0] == header && w[1] == key.as_bytes()))
}

/// Whether the section is there, and whether it holds only git-hand's line.
pub(super) enum Section {
    Absent,
    Ours,
    Other(String),
}

pub(super) fn section(paths: &Paths) -> Result<Section, LinkedError> {
    let ours = format!("{KEY_LISTED} {INCLUDE_PATH}");
    match section_listed(paths)? {
        Some(listed) if listed == ours => Ok(Section::Ours),
        Some(listed) => Ok(Section::Other(listed)),
        None if !has_header(&paths.repo_config)? => Ok(Section::Absent),
        // git lists no key of a header with nothing under it: such a header of the user's is
        // theirs, and `git config` would put our key under it instead of at the end. Or it is a
        // concurrent include's, written between git's read and ours: a second look tells.
        None => match section_listed(paths)? {
            Some(listed) if listed == ours => Ok(Section::Ours),
            _ => Ok(Section::Other(SECTION.into())),
        },
    }
}

/// The section's keys as `git config --get-regexp` lists them, `None` when it lists none.
pub(super) fn section_listed(paths: &Paths) -> Result<Option<String>, LinkedError> {
    let file = paths.repo_config.as_os_str();
    let args: [&OsStr; 5] = [
        "config".as_ref(),
        "-f".as_ref(),
        file,
        "--get-regexp".as_ref(),
        r"^includeif\.gitdir:\./worktrees/\*\*\.".as_ref(),
    ];
    let out = git_output(&paths.common, &args)
        .map_err(|source| git_err("read", &paths.repo_config, source))?;
    match out.status.code() {
        Some(0) => Ok(Some(
            String::from_utf8_lossy(&out.stdout).trim_end().to_string(),
        )),
        Some(1) => Ok(None),
        _ => Err(git_err(
            "read",
            &paths.repo_config,
            failed("config --get-regexp", &out),
        )),
    }
}

/// Whether `config` has a line opening the section (`[includeIf "gitdir:./worktrees/**"]`, the
/// section name in any case, as git reads it).
pub(super) fn has_header(config: &Path) -> Result<bool, LinkedError> {
    let text = fs::read(config).map_err(io_err("read", config))?;
    let header = b"[includeif \"gitdir:./worktrees/**\"]";
    Ok(text.split(|b| *b == b'\n').any(|line| {
        let line = line.trim_ascii();
        line.len() >= header.len() && line[..header.len()].eq_ignore_ascii_case(header)
    }))
}

/// `git config -f <common>/config <args>`, through the one runner.
pub(super) fn config_file(
    paths: &Paths,
    args: &[&str],
    action: &'static str,
) -> Result<(), LinkedError> {
    let mut all: Vec<&OsStr> = vec![
        "config".as_ref(),
        "-f".as_ref(),
        paths.repo_config.as_os_str(),
    ];
    all.extend(args.iter().map(|a| OsStr::new(*a)));
    let out = git_output(&paths.common, &all)
        .map_err(|source| git_err(action, &paths.repo_config, source))?;
    match out.status.success() {
        true => Ok(()),
        false => Err(git_err(
            action,
            &paths.repo_config,
            failed("config -f", &out),
        )),
    }
}

/// Takes away the newline git added at the end of `config`, which was the bytes `note` records
/// without it: only when the file is exactly those and a newline (lines someone added after the
/// section keep theirs, and so does a file changed since to the same length). Holds git's own lock (`config.lock`, created exclusively) so no git writes the
/// file meanwhile.
pub(super) fn strip_final_newline(config: &Path, note: Note) -> Result<(), LinkedError> {
    // Through a symlinked config, as git's own lock follows it: the file is replaced, the link kept.
    let config = &fs::canonicalize(config).unwrap_or_else(|_| config.to_path_buf());
    let lock = config.with_file_name(match config.file_name() {
        Some(name) => format!("{}.lock", name.to_string_lossy()),
        None => "config.lock".into(),
    });
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&lock)
        .map_err(io_err("lock", config))?;
    let result = (|| {
        let bytes = fs::read(config).map_err(io_err("read", config))?;
        let Some(kept) = bytes.strip_suffix(b"\n").filter(|k| note.matches(k)) else {
            return Ok(false);
        };
        let mode = fs::metadata(config)
            .map_err(io_err("look at", config))?
            .permissions();
        file.write_all(kept)
            .and_then(|()| file.set_permissions(mode))
            .and_then(|()| file.sync_all())
            .map_err(io_err("write", &lock))?;
        fs::rename(&lock, config).map_err(io_err("write", config))?;
        Ok::<bool, LinkedError>(true)
    })();
    if !matches!(result, Ok(true)) {
        let _ = fs::remove_file(&lock);
    }
    result.map(drop)
}
