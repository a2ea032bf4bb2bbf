//! Named crash points: `GIT_HAND_FAILPOINT=<name>` makes the process abort at that step.
//!
//! This only ever kills the process, like a power cut or `kill -9` would, so it is safe to keep in
//! release builds: the tests use it to crash spawn and teardown at every step and prove that the
//! ledger and the worktrees are consistent afterwards.

use std::sync::OnceLock;

/// Aborts the process if `GIT_HAND_FAILPOINT` names `name`.
pub fn hit(name: &str) {
    static ARMED: OnceLock<Option<String>> = OnceLock::new();
    let armed = ARMED.get_or_init(|| std::env::var("GIT_HAND_FAILPOINT").ok());
    if armed.as_deref() == Some(name) {
        eprintln!("git-hand: failpoint {name} hit, aborting");
        std::process::abort();
    }
}
