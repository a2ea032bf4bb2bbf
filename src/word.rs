//! One spelling per word. Every enum whose variants are words a user or a ledger row sees
//! (`unknown-lease`, `tearing-down`, `pre-push`) is spelled by its serde derive and by nothing
//! else: [`words!`] gives it `Display` and `FromStr` through serde's names (read and
//! written by `serde_plain`), so its JSON, its text and the value stored in the ledger cannot
//! drift apart.
//!
//! It knows no type of the crate; it must not grow a hand-written table of words.

/// A word that names no variant: `unknown TaskState "paused"`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} {word:?}")]
pub struct Unknown {
    /// What the word should have named (`TaskState`, `resource kind`).
    pub what: &'static str,
    pub word: String,
}

/// `Display` and `FromStr` from serde's spelling, for enums of unit variants that
/// derive `Serialize` and `Deserialize`. `words!(TaskState: "TaskState")`: the literal names the
/// type in [`Unknown`]'s message.
macro_rules! words {
    ($($ty:ident: $what:literal),+ $(,)?) => {$(
        ::serde_plain::derive_display_from_serialize!($ty);
        impl ::std::str::FromStr for $ty {
            type Err = $crate::word::Unknown;
            fn from_str(s: &str) -> ::std::result::Result<Self, Self::Err> {
                ::serde_plain::from_str(s).map_err(|_| $crate::word::Unknown {
                    what: $what,
                    word: s.to_string(),
                })
            }
        }
    )+};
}
pub(crate) use words;

#[cfg(test)]
mod tests {
    use crate::cli::Kind;
    use crate::hooks::{Change, FileState, HookName, LapseKind, Manager, Warning};
    use crate::ledger::{EndReason, EventKind, ResourceKind, Step, TaskState};
    use crate::ops::doctor::ProblemKind;
    use crate::ops::fence::verdict::Verdict;

    /// Every word as it was spelled by hand before serde spelled it: the ledger stores some of
    /// them, scripts read the others, so none may change.
    macro_rules! assert_words {
        ($($ty:ident { $($variant:ident = $word:literal),+ $(,)? })+) => {$($(
            assert_eq!($ty::$variant.to_string(), $word);
            assert_eq!($word.parse::<$ty>(), Ok($ty::$variant));
        )+)+};
    }

    #[test]
    fn every_word_keeps_the_spelling_the_ledger_and_scripts_know() {
        assert_words! {
            Verdict {
                Unmanaged = "unmanaged", Current = "current", Stale = "stale",
                Expired = "expired", Released = "released", UnknownLease = "unknown-lease",
                IssueLost = "issue-lost", NoCredential = "no-credential",
            }
            LapseKind {
                Missing = "missing", NotExecutable = "not-executable", HooksPath = "hooks-path",
                Renamed = "renamed", Foreign = "foreign", ChainedBroken = "chained-broken",
                PostCheckout = "post-checkout", NotOnPath = "not-on-path",
                ReferenceTransaction = "reference-transaction",
            }
            HookName {
                PrePush = "pre-push", PostCheckout = "post-checkout",
                ReferenceTransaction = "reference-transaction",
            }
            Manager {
                Husky = "husky", PreCommit = "pre-commit", Lefthook = "lefthook",
                GitLfs = "git-lfs", HandWritten = "hand-written",
            }
            Change {
                Installed = "installed", Upgraded = "upgraded", Rewritten = "rewritten",
                Unchanged = "unchanged", Chained = "chained", Removed = "removed",
                Restored = "restored", NotInstalled = "not-installed", NotOurs = "not-ours",
            }
            Warning { NotOnPath = "not-on-path" }
            FileState {
                Missing = "missing", Current = "current", Stale = "stale",
                NotExecutable = "not-executable", Foreign = "foreign",
            }
            ResourceKind { Worktree = "worktree", Issue = "issue" }
            EventKind {
                Acquired = "acquired", Reacquired = "reacquired", Renewed = "renewed",
                Released = "released", Ended = "ended", Refused = "refused",
                PushRefused = "push-refused", RefUpdateRefused = "ref-update-refused",
                Repaired = "repaired", SlotPruned = "slot-pruned", TaskSpawned = "task-spawned",
                TaskDone = "task-done", WorktreeAdded = "worktree-added",
                CheckedOut = "checked-out", Migrated = "migrated",
            }
            TaskState {
                Spawning = "spawning", Active = "active", TearingDown = "tearing-down",
                Done = "done",
            }
            Step {
                Intent = "intent", Preparing = "preparing", Creating = "creating",
                Active = "active", Detached = "detached", SlotReleased = "slot-released",
                Done = "done",
            }
            EndReason {
                TornDown = "torn-down", LeaseEnded = "lease-ended", SpawnFailed = "spawn-failed",
                AbandonedSpawn = "abandoned-spawn", SlotMissing = "slot-missing",
                SlotUnproven = "slot-unproven",
            }
            Kind { Failed = "failed", Usage = "usage", Precondition = "precondition" }
            ProblemKind {
                LedgerMissing = "ledger-missing", LedgerDamaged = "ledger-damaged",
                StuckSpawn = "stuck-spawn", StuckTeardown = "stuck-teardown",
                ExpiredLease = "expired-lease", MissingSlot = "missing-slot",
                UnknownSlot = "unknown-slot", UnusableSlot = "unusable-slot",
                UnprovenSlot = "unproven-slot", PrunableWorktree = "prunable-worktree",
                HalfAddedWorktree = "half-added-worktree", HooksNotInForce = "hooks-not-in-force",
                ClaudeHooksLapsed = "claude-hooks-lapsed",
                UnfencedRemote = "unfenced-remote",
            }
        }
    }

    #[test]
    fn a_word_no_variant_has_is_refused_with_what_it_should_have_named() {
        let e = "paused".parse::<TaskState>().unwrap_err();
        assert_eq!(e.to_string(), "unknown TaskState \"paused\"");
        assert!("Done".parse::<TaskState>().is_err(), "spelled exactly");
    }
}
