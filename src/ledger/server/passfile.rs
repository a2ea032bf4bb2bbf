//! The password file (`~/.pgpass`, `passfile`, `PGPASSFILE`) with libpq's rules: a file group or
//! others can read is ignored with a notice, lines are `host:port:database:user:password` with
//! `*` matching anything and `\` escaping the next character, and the first match wins.
//!
//! It reads the file and answers one question; it never writes it and never puts the password
//! into a notice.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::url::{Host, Password, ServerUrl};

/// Something the caller may want to print: the password file was not used, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice(pub String);

impl std::fmt::Display for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What the password file gave for a URL.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Lookup {
    pub password: Option<Password>,
    /// Set when the file exists but was not read (open to others, not a plain file, unreadable).
    pub notice: Option<Notice>,
}

/// The password for `url` from its password file, when the URL (or `PGPASSWORD`) has none.
pub fn lookup(url: &ServerUrl) -> Lookup {
    if url.password.is_some() {
        return Lookup::default();
    }
    let Some(path) = &url.passfile else {
        return Lookup::default();
    };
    match read_private(path) {
        Ok(None) => Lookup::default(),
        Ok(Some(text)) => Lookup {
            password: find(&text, url),
            notice: None,
        },
        Err(notice) => Lookup {
            password: None,
            notice: Some(notice),
        },
    }
}

/// The file's text; `None` when there is no file (libpq says nothing then).
fn read_private(path: &Path) -> Result<Option<String>, Notice> {
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(Notice(format!(
                "password file \"{}\" cannot be read ({e}); it was not used",
                path.display()
            )));
        }
    };
    if !meta.is_file() {
        return Err(Notice(format!(
            "password file \"{}\" is not a plain file; it was not used",
            path.display()
        )));
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(Notice(format!(
            "password file \"{}\" has group or world access (mode {mode:04o}); permissions \
             should be u=rw (0600) or less; it was not used",
            path.display()
        )));
    }
    fs::read_to_string(path).map(Some).map_err(|e| {
        Notice(format!(
            "password file \"{}\" cannot be read ({e}); it was not used",
            path.display()
        ))
    })
}

/// The first line that matches the URL's host, port, database and user.
fn find(text: &str, url: &ServerUrl) -> Option<Password> {
    // libpq matches a unix-socket connection against `localhost` entries.
    let host = match &url.host {
        Host::Tcp(h) => h.as_str(),
        Host::Socket(_) => "localhost",
    };
    let port = url.port.to_string();
    let wanted = [host, port.as_str(), url.dbname.as_str(), url.user.as_str()];
    text.lines()
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .find_map(|line| {
            let mut rest = line;
            for want in wanted {
                rest = matches_field(rest, want)?;
            }
            let password = unescape(rest);
            (!password.is_empty()).then(|| Password::new(password))
        })
}

/// When the line's next field matches `want`, the rest of the line after its `:`.
fn matches_field<'a>(line: &'a str, want: &str) -> Option<&'a str> {
    if let Some(rest) = line.strip_prefix("*:") {
        return Some(rest);
    }
    let mut want = want.chars();
    let mut chars = line.char_indices();
    while let Some((i, c)) = chars.next() {
        let c = match c {
            ':' => return want.next().is_none().then(|| &line[i + 1..]),
            '\\' => match chars.next() {
                Some((_, escaped)) => escaped,
                None => '\\',
            },
            c => c,
        };
        if want.next() != Some(c) {
            return None;
        }
    }
    None
}

/// The password field with its backslash escapes removed; it ends at an unescaped `:`.
fn unescape(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut chars = field.chars();
    while let Some(c) = chars.next() {
        match c {
            ':' => break,
            // A backslash at the very end stays, as in libpq.
            '\\' => out.push(chars.next().unwrap_or('\\')),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;
    use std::path::PathBuf;

    fn url_with(url: &str, passfile: &Path) -> ServerUrl {
        let file = passfile.as_os_str().to_owned();
        let env = move |k: &str| -> Option<OsString> { (k == "PGPASSFILE").then(|| file.clone()) };
        ServerUrl::parse_with(url, &env, &|| Some("sysuser".into())).unwrap()
    }

    fn file(text: &str, mode: u32) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pgpass");
        fs::write(&path, text).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
        (dir, path)
    }

    fn password(text: &str, url: &str) -> Option<String> {
        let (_dir, path) = file(text, 0o600);
        let found = lookup(&url_with(url, &path));
        assert_eq!(found.notice, None);
        found.password.map(|p| p.reveal().to_string())
    }

    #[test]
    fn the_first_matching_line_wins_and_comments_are_skipped() {
        let text = "# db.example:5432:hand:bob:comment\n\
                    other:5432:hand:bob:wrong-host\n\
                    db.example:5433:hand:bob:wrong-port\n\
                    db.example:5432:hand:bob:first\n\
                    db.example:5432:hand:bob:second\n";
        assert_eq!(
            password(text, "postgres://bob@db.example/hand").as_deref(),
            Some("first")
        );
        assert_eq!(
            password(text, "postgres://bob@db.example:5433/hand").as_deref(),
            Some("wrong-port")
        );
        assert_eq!(password(text, "postgres://eve@db.example/hand"), None);
    }

    #[test]
    fn a_star_matches_any_value_of_its_field() {
        let text = "*:*:*:bob:any\n";
        assert_eq!(
            password(text, "postgres://bob@h:1/x").as_deref(),
            Some("any")
        );
        assert_eq!(password(text, "postgres://al@h:1/x"), None);
        // A star is a wildcard only as the whole field.
        assert_eq!(password("h*:5432:d:u:p\n", "postgres://u@hx/d"), None);
    }

    #[test]
    fn backslash_escapes_a_colon_or_a_backslash_in_any_field() {
        let text = "h:5432:a\\:b:u\\\\v:pa\\:ss\\\\w\n";
        assert_eq!(
            password(text, "postgres://u%5Cv@h/a%3Ab").as_deref(),
            Some("pa:ss\\w")
        );
    }

    #[test]
    fn the_password_ends_at_an_unescaped_colon() {
        assert_eq!(
            password("h:5432:d:u:pw:extra\n", "postgres://u@h/d").as_deref(),
            Some("pw")
        );
    }

    #[test]
    fn a_unix_socket_matches_localhost_entries() {
        let text = "db.example:5432:d:u:remote\nlocalhost:5999:d:u:local\n";
        assert_eq!(
            password(text, "postgres://u@/d?host=/tmp/sock&port=5999").as_deref(),
            Some("local")
        );
    }

    #[test]
    fn a_password_file_open_to_others_is_ignored_with_a_notice() {
        for mode in [0o644, 0o640, 0o604, 0o660] {
            let (_dir, path) = file("*:*:*:*:pw\n", mode);
            let found = lookup(&url_with("postgres://u@h/d", &path));
            assert_eq!(found.password, None, "mode {mode:o}");
            let notice = found.notice.expect("a notice").to_string();
            assert!(notice.contains("group or world access"), "{notice}");
            assert!(notice.contains(&path.display().to_string()), "{notice}");
            assert!(!notice.contains("pw\n"), "{notice}");
        }
        let (_dir, path) = file("*:*:*:*:pw\n", 0o400);
        let found = lookup(&url_with("postgres://u@h/d", &path));
        assert_eq!(
            found.password.map(|p| p.reveal().to_string()).as_deref(),
            Some("pw")
        );
    }

    #[test]
    fn a_missing_file_is_silent_and_a_directory_is_noticed() {
        let dir = tempfile::tempdir().unwrap();
        let found = lookup(&url_with("postgres://u@h/d", &dir.path().join("none")));
        assert_eq!(found, Lookup::default());
        let found = lookup(&url_with("postgres://u@h/d", dir.path()));
        assert!(
            found
                .notice
                .expect("a notice")
                .0
                .contains("not a plain file")
        );
    }

    #[test]
    fn the_file_is_not_read_when_the_url_has_a_password() {
        let (_dir, path) = file("*:*:*:*:from-file\n", 0o644);
        let found = lookup(&url_with("postgres://u:from-url@h/d", &path));
        assert_eq!(found, Lookup::default());
    }

    #[test]
    fn an_empty_password_in_the_file_counts_as_none() {
        assert_eq!(password("*:*:*:*:\n", "postgres://u@h/d"), None);
    }
}
