//! `.worktreeinclude`: the file of patterns Claude Code, Conductor, worktrunk, gtr and opencode
//! read at the top of the main worktree to know which ignored files a new worktree gets. Read
//! here so that a repository set up for those tools needs nothing more for git-hand, and so
//! that a Claude Code session whose worktree git-hand makes (its `WorktreeCreate` hook replaces
//! Claude Code's own copy) still gets them.
//!
//! It owns reading the file and turning its lines into patterns, as git reads a `.gitignore`
//! (`add_patterns_from_buffer` in git's `dir.c`): a UTF-8 byte order mark at the start is
//! skipped, a line ending in `\r\n` loses the `\r`, a line starting with `#` is a comment (`\#`
//! is a pattern starting with `#`), a NUL ends the line's pattern, trailing spaces go unless
//! escaped with `\`, and blank lines are dropped. Everything else (`!` negation, `/` anchors, `**`, a trailing `/` for
//! directories) is left for git to match, so a line means exactly what it would in a
//! `.gitignore`. Lines are bytes: a pattern need not be UTF-8, as a file name need not.
//!
//! The file is the repository's, so it is read as `.handconfig` is ([`crate::repo_file`]):
//! never through a symbolic link, never a FIFO or a device, never more than
//! [`SETTINGS_CAP`](crate::repo_file::SETTINGS_CAP). What matches, and what is copied, is
//! [`super`]'s business.

use std::path::Path;

use crate::repo_file::{self, RepoFileError};

/// The file's name, at the top of the main worktree.
pub const FILE: &str = ".worktreeinclude";

/// The patterns of `main`'s `.worktreeinclude`, in order: `Ok(None)` when there is no such
/// file (the common case, which costs one `open`), `Ok(Some(vec![]))` for one that holds no
/// pattern, an error for one git-hand will not read (a link, not a regular file, too large).
pub fn read(main: &Path) -> Result<Option<Vec<Vec<u8>>>, RepoFileError> {
    let bytes = repo_file::read_regular(&main.join(FILE), repo_file::SETTINGS_CAP)?;
    Ok(bytes.map(|b| patterns(&b)))
}

/// The patterns in a `.worktreeinclude`'s content (see the module docs).
fn patterns(content: &[u8]) -> Vec<Vec<u8>> {
    let content = content.strip_prefix(b"\xef\xbb\xbf").unwrap_or(content);
    content
        .split(|b| *b == b'\n')
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
        .filter(|line| !line.starts_with(b"#"))
        // Git's patterns are C strings: a NUL ends one (and an argument cannot hold it).
        .map(|line| line.split(|b| *b == 0).next().unwrap_or_default())
        .map(trim_trailing_spaces)
        .filter(|line| !line.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

/// The line without its trailing spaces, as git trims them: a space escaped with `\` stays, and
/// so does everything before it; tabs and other whitespace are kept.
fn trim_trailing_spaces(line: &[u8]) -> &[u8] {
    let mut spaces_from = None;
    let mut i = 0;
    while i < line.len() {
        match line[i] {
            b' ' => {
                spaces_from.get_or_insert(i);
            }
            b'\\' => {
                // The escaped byte, whatever it is, is part of the pattern.
                i += 1;
                spaces_from = None;
                if i == line.len() {
                    return line;
                }
            }
            _ => spaces_from = None,
        }
        i += 1;
    }
    spaces_from.map_or(line, |from| &line[..from])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(content: &str) -> Vec<String> {
        patterns(content.as_bytes())
            .iter()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect()
    }

    #[test]
    fn comments_blank_lines_and_line_endings_are_read_as_git_reads_a_gitignore() {
        let content = "\u{feff}# secrets\n.env\r\n\n   \n!.env.example\n\\#literal\n  lead\n";
        assert_eq!(
            lines(content),
            [".env", "!.env.example", "\\#literal", "  lead"]
        );
        assert_eq!(lines("no newline at the end"), ["no newline at the end"]);
        assert!(lines("").is_empty());
        assert!(lines("# only a comment\n").is_empty());
    }

    #[test]
    fn trailing_spaces_go_unless_escaped_and_tabs_stay() {
        assert_eq!(lines("a.log   \n"), ["a.log"]);
        assert_eq!(lines("a\\ \n"), ["a\\ "]);
        assert_eq!(lines("a\\  \n"), ["a\\ "]);
        assert_eq!(lines("a\t\n"), ["a\t"]);
        assert_eq!(lines("a\\\n"), ["a\\"]);
    }

    #[test]
    fn a_pattern_need_not_be_utf8_and_ends_at_a_nul() {
        assert_eq!(patterns(b"caf\xe9.env\n"), [b"caf\xe9.env".to_vec()]);
        assert_eq!(
            patterns(b".env \0junk\n\0\n"),
            [b".env".to_vec()],
            "what follows a NUL is not part of the pattern"
        );
    }

    #[test]
    fn no_file_is_none_and_a_symlinked_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(dir.path()).unwrap(), None);
        std::fs::write(dir.path().join("elsewhere"), ".env\n").unwrap();
        std::os::unix::fs::symlink("elsewhere", dir.path().join(FILE)).unwrap();
        assert!(matches!(
            read(dir.path()),
            Err(RepoFileError::Symlink { .. })
        ));
        std::fs::remove_file(dir.path().join(FILE)).unwrap();
        std::fs::write(dir.path().join(FILE), "# none\n").unwrap();
        assert_eq!(read(dir.path()).unwrap(), Some(vec![]));
    }
}
