//! The environment variables an operation reads, as a value: the process's own (the binary) or
//! a fixed set (a test's world), so that a test never sets the variables of the process every
//! other test runs in. `ops::Context` carries one; what it reads goes through it.

use std::collections::BTreeMap;
use std::ffi::OsString;

/// The environment variables an operation reads: the process's own, read when asked (the
/// binary), or a fixed set (a test), so that a test never sets the variables of the process
/// every other test runs in.
#[derive(Debug, Clone, Default)]
pub struct Env {
    /// `None`: the process's environment.
    vars: Option<BTreeMap<OsString, OsString>>,
}

impl Env {
    /// The process's environment.
    pub fn process() -> Self {
        Self { vars: None }
    }

    /// Exactly these variables, and no other.
    pub fn of<K: Into<OsString>, V: Into<OsString>>(
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        Self {
            vars: Some(
                vars.into_iter()
                    .map(|(k, v)| (k.into(), v.into()))
                    .collect(),
            ),
        }
    }

    /// Variable `key`, as `std::env::var_os` answers.
    pub fn var_os(&self, key: &str) -> Option<OsString> {
        match &self.vars {
            None => std::env::var_os(key),
            Some(vars) => vars.get(std::ffi::OsStr::new(key)).cloned(),
        }
    }

    /// Variable `key` when it is UTF-8, as `std::env::var(key).ok()` answers.
    pub fn var(&self, key: &str) -> Option<String> {
        self.var_os(key).and_then(|v| v.into_string().ok())
    }
}
