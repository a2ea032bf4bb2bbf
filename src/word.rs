//! One spelling per word. Every enum whose variants are words a user or a ledger row sees
//! (`unknown-lease`, `tearing-down`, `pre-push`) is spelled by its serde derive and by nothing
//! else: [`words!`] gives it `as_str`, `Display` and `FromStr` through serde's names, so its JSON,
//! its text and the value stored in the ledger cannot drift apart.
//!
//! It knows no type of the crate; it must not grow a hand-written table of words.

use serde::de::DeserializeOwned;
use serde::de::IntoDeserializer;
use serde::de::value::StrDeserializer;
use serde::ser::{self, Impossible, Serialize};

/// The serde name of a unit variant: `Verdict::UnknownLease` → `"unknown-lease"`.
///
/// Only for enums of unit variants (the ones [`words!`] is used on): anything else has no one
/// word and gets `""`, which the tests of each such enum would catch.
pub fn name<T: Serialize>(value: &T) -> &'static str {
    value.serialize(VariantName).unwrap_or_default()
}

/// The unit variant serde spells `word`, if there is one.
pub fn parse<T: DeserializeOwned>(word: &str) -> Option<T> {
    let de: StrDeserializer<'_, serde::de::value::Error> = word.into_deserializer();
    T::deserialize(de).ok()
}

/// A word that names no variant: `unknown TaskState "paused"`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} {word:?}")]
pub struct Unknown {
    /// What the word should have named (`TaskState`, `resource kind`).
    pub what: &'static str,
    pub word: String,
}

/// `as_str`, `Display` and `FromStr` from serde's spelling, for enums of unit variants that
/// derive `Serialize` and `Deserialize`. `words!(TaskState: "TaskState")`: the literal names the
/// type in [`Unknown`]'s message.
macro_rules! words {
    ($($ty:ident: $what:literal),+ $(,)?) => {$(
        impl $ty {
            /// Its one spelling (serde's): in JSON, in text and in the ledger.
            pub fn as_str(self) -> &'static str {
                $crate::word::name(&self)
            }
        }
        impl ::std::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
        impl ::std::str::FromStr for $ty {
            type Err = $crate::word::Unknown;
            fn from_str(s: &str) -> ::std::result::Result<Self, Self::Err> {
                $crate::word::parse(s).ok_or_else(|| $crate::word::Unknown {
                    what: $what,
                    word: s.to_string(),
                })
            }
        }
    )+};
}
pub(crate) use words;

/// A serializer that accepts only a unit variant and returns its name.
struct VariantName;

#[derive(Debug)]
struct NotAWord;

impl std::fmt::Display for NotAWord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not a unit variant")
    }
}
impl std::error::Error for NotAWord {}
impl ser::Error for NotAWord {
    fn custom<M: std::fmt::Display>(_: M) -> Self {
        NotAWord
    }
}

/// The methods of [`VariantName`] that refuse: every shape but a unit variant.
macro_rules! refuse {
    ($($method:ident($($arg:ty),*) -> $ok:ty;)*) => {$(
        fn $method(self, $(_: $arg),*) -> Result<$ok, NotAWord> {
            Err(NotAWord)
        }
    )*};
}

impl ser::Serializer for VariantName {
    type Ok = &'static str;
    type Error = NotAWord;
    type SerializeSeq = Impossible<&'static str, NotAWord>;
    type SerializeTuple = Impossible<&'static str, NotAWord>;
    type SerializeTupleStruct = Impossible<&'static str, NotAWord>;
    type SerializeTupleVariant = Impossible<&'static str, NotAWord>;
    type SerializeMap = Impossible<&'static str, NotAWord>;
    type SerializeStruct = Impossible<&'static str, NotAWord>;
    type SerializeStructVariant = Impossible<&'static str, NotAWord>;

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<&'static str, NotAWord> {
        Ok(variant)
    }

    refuse! {
        serialize_bool(bool) -> &'static str;
        serialize_i8(i8) -> &'static str;
        serialize_i16(i16) -> &'static str;
        serialize_i32(i32) -> &'static str;
        serialize_i64(i64) -> &'static str;
        serialize_u8(u8) -> &'static str;
        serialize_u16(u16) -> &'static str;
        serialize_u32(u32) -> &'static str;
        serialize_u64(u64) -> &'static str;
        serialize_f32(f32) -> &'static str;
        serialize_f64(f64) -> &'static str;
        serialize_char(char) -> &'static str;
        serialize_str(&str) -> &'static str;
        serialize_bytes(&[u8]) -> &'static str;
        serialize_none() -> &'static str;
        serialize_unit() -> &'static str;
        serialize_unit_struct(&'static str) -> &'static str;
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct(&'static str, usize) -> Self::SerializeStruct;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }

    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<&'static str, NotAWord> {
        Err(NotAWord)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<&'static str, NotAWord> {
        Err(NotAWord)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<&'static str, NotAWord> {
        Err(NotAWord)
    }
}

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
            assert_eq!($ty::$variant.as_str(), $word);
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
