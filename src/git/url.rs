//! Normalizing a remote URL into an issue namespace, so that every spelling of one remote
//! (`git@github.com:o/r.git`, `https://github.com/o/r`, `ssh://git@github.com/o/r`) is one
//! namespace and two clones of one remote share issue leases.

/// `host/path` for network URLs (scheme, user, port and `.git` dropped, host lower-cased);
/// the path itself, without `.git`, for local remotes.
pub fn normalize_remote_url(url: &str) -> String {
    let url = url.trim();
    let (rest, network) = match url.split_once("://") {
        Some(("file", rest)) => (rest, false),
        Some((_, rest)) => (rest, true),
        // scp-like `user@host:path` (but not a Windows-ish `C:\` or a local path with a colon
        // after a slash).
        None => match url.split_once(':') {
            Some((host, path)) if !host.contains('/') && !host.is_empty() => {
                return finish(&format!(
                    "{}/{}",
                    host_only(host),
                    path.trim_start_matches('/')
                ));
            }
            _ => (url, false),
        },
    };
    if !network {
        return finish(rest);
    }
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    finish(&format!("{}/{}", host_only(authority), path))
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
    }
}
