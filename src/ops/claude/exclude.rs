//! What Claude Code writes into a worktree it runs in, excluded from git's view so a session's
//! slot comes back clean (a slot with untracked files is never reused) and nothing of it is
//! committed by `git add -A`.
//!
//! git reads one `info/exclude`, the common dir's, for every worktree (a worktree's own admin
//! dir has none git reads), so the lines go there, in a block of their own that names git-hand;
//! they name only files Claude Code writes per user, which no one commits anywhere.

use super::ClaudeError;
use std::io::Write;
use std::path::Path;

use crate::git::Repo;
use crate::hint::say;
use crate::ops::{Error, Result};

/// The first line of git-hand's block in `info/exclude`.
fn begin() -> String {
    say("# git-hand: what Claude Code writes in a worktree (")
        .hand("install --claude")
        .text(")")
        .into()
}

/// The patterns: the per-user settings Claude Code writes in a project it runs in.
pub(crate) const PATTERNS: &[&str] = &["/.claude/settings.local.json"];

/// Appends git-hand's block to the repository's `info/exclude` unless it is there.
pub(crate) fn ensure(repo: &Repo) -> Result<()> {
    let path = repo.loc.common_dir.join("info").join("exclude");
    let have = match crate::repo_file::read_regular(&path, crate::repo_file::SETTINGS_CAP) {
        Ok(Some(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
        Ok(None) => String::new(),
        Err(e) => return Err(cannot(&path, &e)),
    };
    if has_block(&have) {
        return Ok(());
    }
    std::fs::create_dir_all(path.parent().unwrap_or(Path::new(".")))
        .map_err(|e| cannot(&path, &e))?;
    let mut block = String::new();
    if !have.is_empty() && !have.ends_with('\n') {
        block.push('\n');
    }
    block.push_str(&begin());
    block.push('\n');
    for p in PATTERNS {
        block.push_str(p);
        block.push('\n');
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(block.as_bytes()))
        .map_err(|e| cannot(&path, &e))
}

fn has_block(text: &str) -> bool {
    let begin = begin();
    text.lines().any(|l| l == begin)
}

fn cannot(path: &Path, e: &dyn std::fmt::Display) -> Error {
    ClaudeError::ExcludeUnwritable {
        path: path.to_path_buf(),
        patterns: PATTERNS.iter().map(|p| p.to_string()).collect(),
        reason: e.to_string(),
    }
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_is_found_by_its_first_line() {
        assert!(has_block(&format!("*.o\n{}\n/.claude/x\n", begin())));
        assert!(!has_block("*.o\n# git-hand\n"));
    }
}
