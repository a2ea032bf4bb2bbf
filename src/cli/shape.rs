//! How the facts other rooms return read in `--json`: a shape here for each fact a verb's JSON
//! embeds, so the structs of `ops`, `hooks` and `ledger` carry no serializer of their own and a
//! field renamed there cannot change an output without a change here (docs/cli.md documents
//! each field). Values that are one word (an enum of `word::words!`, an id) serialize as that
//! word wherever they stand.

use std::path::Path;

use serde::Serialize;

use crate::hint::{Hint, Words};
use crate::hooks::{Change, Enforcer, HookChange, HookName, Lapse, LapseKind};
use crate::ledger::{LeaseId, Resource, ResourceKind};
use crate::ops::claude::settings as claude;
use crate::ops::fence::credential::{Credential, CredentialSource};
use crate::ops::on_hook::PushTarget;
use crate::ops::pool::Skipped;
use crate::ops::prune::Kept;
use crate::ops::prune::branches::{Deleted, KeptBranch};
use crate::ops::repo::include::{Copied, How, NotCopied, Reason, Source};

/// Each of `facts` in its shape.
pub(super) fn each<'a, T, S: From<&'a T>>(facts: &'a [T]) -> Vec<S> {
    facts.iter().map(S::from).collect()
}

/// One hook file an install or uninstall looked at.
#[derive(Serialize)]
pub(super) struct HookChangeJson<'a> {
    hook: HookName,
    path: &'a Path,
    change: Change,
    chained: Option<&'a Path>,
}

impl<'a> From<&'a HookChange> for HookChangeJson<'a> {
    fn from(c: &'a HookChange) -> Self {
        Self {
            hook: c.hook,
            path: &c.path,
            change: c.change,
            chained: c.chained.as_deref(),
        }
    }
}

/// What a lease is of: `{"kind": "issue", "key": ...}`.
#[derive(Serialize)]
pub(super) struct ResourceJson<'a> {
    kind: ResourceKind,
    key: &'a str,
}

impl<'a> From<&'a Resource> for ResourceJson<'a> {
    fn from(r: &'a Resource) -> Self {
        Self {
            kind: r.kind,
            key: &r.key,
        }
    }
}

/// A slot a spawn did not take, and why.
#[derive(Serialize)]
pub(super) struct SkippedJson<'a> {
    path: &'a str,
    why: &'a [String],
}

impl<'a> From<&'a Skipped> for SkippedJson<'a> {
    fn from(s: &'a Skipped) -> Self {
        Self {
            path: &s.path,
            why: &s.why,
        }
    }
}

/// A slot prune left in place.
#[derive(Serialize)]
pub(super) struct KeptJson<'a> {
    path: &'a str,
    why: &'a [String],
    hint: Option<&'a Hint>,
}

impl<'a> From<&'a Kept> for KeptJson<'a> {
    fn from(k: &'a Kept) -> Self {
        Self {
            path: &k.path,
            why: &k.why,
            hint: k.hint.as_ref(),
        }
    }
}

/// A branch prune deleted, and where it pointed.
#[derive(Serialize)]
pub(super) struct DeletedJson<'a> {
    branch: &'a str,
    oid: &'a str,
    tasks: &'a [String],
}

impl<'a> From<&'a Deleted> for DeletedJson<'a> {
    fn from(d: &'a Deleted) -> Self {
        Self {
            branch: &d.branch,
            oid: &d.oid,
            tasks: &d.tasks,
        }
    }
}

/// A branch prune left in place.
#[derive(Serialize)]
pub(super) struct KeptBranchJson<'a> {
    branch: &'a str,
    why: &'a [String],
    hint: Option<&'a str>,
}

impl<'a> From<&'a KeptBranch> for KeptBranchJson<'a> {
    fn from(k: &'a KeptBranch) -> Self {
        Self {
            branch: &k.branch,
            why: &k.why,
            hint: k.hint.as_deref(),
        }
    }
}

/// What `hand.include` copied into a new slot.
#[derive(Serialize)]
pub(super) struct CopiedJson<'a> {
    path: &'a str,
    files: u64,
    bytes: u64,
    how: How,
    source: Source,
}

impl<'a> From<&'a Copied> for CopiedJson<'a> {
    fn from(c: &'a Copied) -> Self {
        Self {
            path: &c.path,
            files: c.files,
            bytes: c.bytes,
            how: c.how,
            source: c.source,
        }
    }
}

/// What `hand.include` matched and did not copy, and why.
#[derive(Serialize)]
pub(super) struct NotCopiedJson<'a> {
    path: &'a str,
    reason: Reason,
    detail: Option<&'a str>,
    source: Source,
}

impl<'a> From<&'a NotCopied> for NotCopiedJson<'a> {
    fn from(n: &'a NotCopied) -> Self {
        Self {
            path: &n.path,
            reason: n.reason,
            detail: n.detail.as_deref(),
            source: n.source,
        }
    }
}

/// The credential a process presents.
#[derive(Serialize)]
pub(super) struct CredentialJson<'a> {
    lease_id: &'a LeaseId,
    token: Option<i64>,
    source: CredentialSource,
}

impl<'a> From<&'a Credential> for CredentialJson<'a> {
    fn from(c: &'a Credential) -> Self {
        Self {
            lease_id: &c.lease_id,
            token: c.token,
            source: c.source,
        }
    }
}

/// Where a push from here goes.
#[derive(Serialize)]
pub(super) struct PushTargetJson<'a> {
    remote: &'a str,
    url: Option<&'a str>,
    branch: &'a str,
    via: &'a str,
}

impl<'a> From<&'a PushTarget> for PushTargetJson<'a> {
    fn from(t: &'a PushTarget) -> Self {
        Self {
            remote: &t.remote,
            url: t.url.as_deref(),
            branch: &t.branch,
            via: t.via,
        }
    }
}

/// What runs git-hand's pre-push check: `{"kind": "shim"}`, `{"kind": "manager", "file": ..}`
/// or `{"kind": "nothing"}`.
#[derive(Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "file")]
pub(super) enum EnforcerJson<'a> {
    Shim,
    Manager(&'a Path),
    Nothing,
}

impl<'a> From<&'a Enforcer> for EnforcerJson<'a> {
    fn from(e: &'a Enforcer) -> Self {
        match e {
            Enforcer::Shim => Self::Shim,
            Enforcer::Manager(file) => Self::Manager(file),
            Enforcer::Nothing => Self::Nothing,
        }
    }
}

/// Why git-hand's hooks are not in force for a worktree.
#[derive(Serialize)]
pub(super) struct LapseJson<'a> {
    kind: LapseKind,
    message: &'a str,
    hints: &'a [Hint],
    repairable: bool,
}

impl<'a> From<&'a Lapse> for LapseJson<'a> {
    fn from(l: &'a Lapse) -> Self {
        Self {
            kind: l.kind,
            message: &l.message,
            hints: &l.hints,
            repairable: l.repairable,
        }
    }
}

/// Whether git-hand's Claude Code hooks are in force, where `install --claude` wrote them.
#[derive(Serialize)]
pub(super) struct ClaudeInForceJson<'a> {
    in_force: bool,
    files: &'a [std::path::PathBuf],
    timeout: u64,
    lapses: Vec<ClaudeLapseJson<'a>>,
}

impl<'a> From<&'a claude::InForce> for ClaudeInForceJson<'a> {
    fn from(c: &'a claude::InForce) -> Self {
        Self {
            in_force: c.in_force,
            files: &c.files,
            timeout: c.timeout,
            lapses: each(&c.lapses),
        }
    }
}

/// What lapsed in one of Claude Code's settings files.
#[derive(Serialize)]
pub(super) struct ClaudeLapseJson<'a> {
    kind: claude::LapseKind,
    file: &'a Path,
    event: Option<claude::Event>,
    message: &'a str,
    fix: &'a Words,
}

impl<'a> From<&'a claude::Lapse> for ClaudeLapseJson<'a> {
    fn from(l: &'a claude::Lapse) -> Self {
        Self {
            kind: l.kind,
            file: &l.file,
            event: l.event,
            message: &l.message,
            fix: &l.fix,
        }
    }
}
