//! Normalizing a remote URL into an issue namespace, so that every spelling of one remote
//! (`git@github.com:o/r.git`, `https://github.com/o/r`, `ssh://git@github.com/o/r`) is one
//! namespace and two clones of one remote share issue leases.

use gix::bstr::ByteSlice;

/// `host/path` for network URLs (scheme, user, port and `.git` dropped, host lower-cased);
/// the path itself, without `.git`, for local remotes. Parsed as git parses a remote, with
/// gix-url (issue 22: a hand-written parser read `file://localhost/srv/x.git` as the host
/// `localhost`, while git ignores a `file://` URL's host). What does not parse is kept as
/// written.
pub(crate) fn normalize_remote_url(url: &str) -> String {
    let url = url.trim();
    let Ok(parsed) = gix::url::parse(url.as_bytes().as_bstr()) else {
        return finish(url);
    };
    let path = parsed.path.to_str_lossy();
    match (&parsed.scheme, parsed.host()) {
        (gix::url::Scheme::File, _) => finish(&path),
        (_, Some(host)) => finish(&format!(
            "{}/{}",
            host_only(host),
            path.trim_start_matches('/')
        )),
        (_, None) => finish(url),
    }
}

/// The local path a remote names, as git reads it: a path, or a `file://` URL, whose host git
/// ignores (`file://localhost/srv/x.git` is `/srv/x.git`). `None` for a network URL.
pub(crate) fn local_path(url: &str) -> Option<std::path::PathBuf> {
    let parsed = gix::url::parse(url.trim().as_bytes().as_bstr()).ok()?;
    if parsed.scheme != gix::url::Scheme::File {
        return None;
    }
    gix::path::from_bstring(parsed.path).ok()
}

/// `user@Host:22` → `host`.
fn host_only(authority: &str) -> String {
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match host.rsplit_once(':') {
        Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => host,
    };
    host.to_ascii_lowercase()
}

fn finish(s: &str) -> String {
    let s = s.trim_end_matches('/');
    s.strip_suffix(".git")
        .unwrap_or(s)
        .trim_end_matches('/')
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::normalize_remote_url as n;

    #[test]
    fn every_spelling_of_one_remote_is_one_namespace() {
        for url in [
            "git@github.com:o/r.git",
            "https://github.com/o/r",
            "ssh://git@github.com/o/r",
            "https://user@GitHub.com/o/r.git/",
            "ssh://git@github.com:22/o/r.git",
            "git://github.com/o/r",
        ] {
            assert_eq!(n(url), "github.com/o/r", "{url}");
        }
    }

    #[test]
    fn local_remotes_keep_their_path() {
        assert_eq!(n("/srv/git/origin.git"), "/srv/git/origin");
        assert_eq!(n("file:///srv/git/origin.git"), "/srv/git/origin");
        assert_eq!(n("../origin"), "../origin");
        // git ignores a file:// URL's host.
        assert_eq!(n("file://localhost/srv/git/origin.git"), "/srv/git/origin");
        assert_eq!(
            super::local_path("file://localhost/srv/o.git").as_deref(),
            Some(std::path::Path::new("/srv/o.git"))
        );
        assert_eq!(super::local_path("git@host:o/r.git"), None);
    }
}
