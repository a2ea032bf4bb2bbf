//! Where the ledger lives: `GIT_HAND_LEDGER`, else `git config hand.ledger`, else
//! `$XDG_STATE_HOME/git-hand/ledger.sqlite` (`~/.local/state/git-hand/ledger.sqlite` when unset).

use std::path::PathBuf;

/// The ledger path and where it came from (shown by `status` and in errors).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerLocation {
    pub path: PathBuf,
    pub source: &'static str,
}

/// Resolves the ledger location. `config` is the value of `hand.ledger`, read by the caller
/// (this module does not know git); `env` reads the environment.
pub fn default_location(
    env: impl Fn(&str) -> Option<std::ffi::OsString>,
    config: Option<PathBuf>,
) -> Option<LedgerLocation> {
    // The path ends up in stamps that hooks read from other directories: make it absolute.
    let absolute = |mut l: LedgerLocation| {
        l.path = std::path::absolute(&l.path).unwrap_or(l.path);
        l
    };
    locate(env, config).map(absolute)
}

fn locate(
    env: impl Fn(&str) -> Option<std::ffi::OsString>,
    config: Option<PathBuf>,
) -> Option<LedgerLocation> {
    let nonempty = |k: &str| env(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(path) = nonempty("GIT_HAND_LEDGER") {
        return Some(LedgerLocation {
            path,
            source: "GIT_HAND_LEDGER",
        });
    }
    if let Some(path) = config {
        return Some(LedgerLocation {
            path,
            source: "git config hand.ledger",
        });
    }
    Some(LedgerLocation {
        path: state_dir(&env)?.join("git-hand/ledger.sqlite"),
        source: "default",
    })
}

/// The user's state directory: `$XDG_STATE_HOME` when it is an absolute path, else
/// `$HOME/.local/state` (the XDG default); `None` when neither is set. git-hand keeps the default
/// ledger there, and the approvals of `.handconfig` files (`ops/trust.rs`).
pub fn state_dir(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let nonempty = |k: &str| env(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    nonempty("XDG_STATE_HOME")
        .filter(|p| p.is_absolute())
        .or_else(|| nonempty("HOME").map(|h| h.join(".local/state")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<std::ffi::OsString> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).map(Into::into)
    }

    #[test]
    fn env_beats_config_beats_xdg_beats_home() {
        let all = [
            ("GIT_HAND_LEDGER", "/l"),
            ("XDG_STATE_HOME", "/x"),
            ("HOME", "/h"),
        ];
        let cfg = Some(PathBuf::from("/c"));
        assert_eq!(
            default_location(env(&all), cfg.clone()).unwrap().path,
            PathBuf::from("/l")
        );
        assert_eq!(
            default_location(env(&all[1..]), cfg).unwrap().path,
            PathBuf::from("/c")
        );
        assert_eq!(
            default_location(env(&all[1..]), None).unwrap().path,
            PathBuf::from("/x/git-hand/ledger.sqlite")
        );
        assert_eq!(
            default_location(env(&all[2..]), None).unwrap().path,
            PathBuf::from("/h/.local/state/git-hand/ledger.sqlite")
        );
        assert_eq!(default_location(env(&[]), None), None);
    }
}
