//! What a lease is on and what one acquisition of it is: [`Resource`], [`Tenure`] and where a
//! tenure stands at an instant. Plain values shared by the lease engine ([`super::leases`]), the
//! event log and the tasks; the SQL that reads and writes them lives in the engine.

use serde::{Deserialize, Serialize};

use super::ids::{LeaseId, WorktreeKey};
use crate::clock::Millis;

/// What kind of thing a lease is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResourceKind {
    /// A pool slot; key: the realpath of its work tree, on a team ledger after its machine's
    /// id and a colon (`<machine>:<path>`), so that two machines' slots at one path are two
    /// resources with two token histories.
    Worktree,
    /// An issue; key: `<namespace>#<issue id>`.
    Issue,
}

crate::word::words!(ResourceKind: "resource kind");

/// Something leasable.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Resource {
    pub kind: ResourceKind,
    pub key: String,
}

impl Resource {
    /// The worktree at `key` on a file ledger (one machine): the key is the path.
    pub fn worktree(key: &WorktreeKey) -> Self {
        Self::worktree_on("", key)
    }

    /// The worktree at `key` on `machine` (empty on a file ledger: the key is the path, as it
    /// always was). Ops ask a [`super::View::worktree`], a [`super::Slot`] or a
    /// [`super::Task`], which know the machine.
    pub(crate) fn worktree_on(machine: &str, key: &WorktreeKey) -> Self {
        let key = if machine.is_empty() {
            key.to_string()
        } else {
            format!("{machine}:{key}")
        };
        Self {
            kind: ResourceKind::Worktree,
            key,
        }
    }
    /// The machine and worktree a worktree resource names, the inverse of
    /// [`Resource::worktree_on`]. `qualified`: keys carry their machine (a team ledger:
    /// `<machine>:<path>`, a machine id never holding a `:`); otherwise the key is the path
    /// alone, which may.
    pub(crate) fn worktree_parts(&self, qualified: bool) -> (&str, WorktreeKey) {
        let (machine, path) = match self.key.split_once(':') {
            Some((machine, path)) if qualified => (machine, path),
            _ => ("", self.key.as_str()),
        };
        (
            machine,
            WorktreeKey::from_canonical(std::path::Path::new(path)),
        )
    }

    pub fn issue(namespace: &str, id: &str) -> Self {
        Self {
            kind: ResourceKind::Issue,
            key: format!("{namespace}#{id}"),
        }
    }
}

/// One acquisition of one resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tenure {
    pub lease_id: LeaseId,
    pub resource: Resource,
    pub token: i64,
    pub holder: String,
    /// The TTL the tenure was granted with; a renewal without a TTL reuses it.
    pub ttl_ms: Option<Millis>,
    pub acquired_at: Millis,
    pub renewed_at: Option<Millis>,
    /// `None`: open-ended.
    pub expires_at: Option<Millis>,
    pub ended_at: Option<Millis>,
    pub end_reason: Option<String>,
}

/// Where a tenure stands at an instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TenureState {
    Live,
    /// Not ended, but past its expiry: anyone may take the resource over.
    Expired,
    Ended,
}

impl Tenure {
    pub fn state(&self, now: Millis) -> TenureState {
        if self.ended_at.is_some() {
            TenureState::Ended
        } else if self.expires_at.is_some_and(|e| e <= now) {
            TenureState::Expired
        } else {
            TenureState::Live
        }
    }
    pub(crate) fn is_live(&self, now: Millis) -> bool {
        self.state(now) == TenureState::Live
    }
}

#[cfg(test)]
mod worktree_key_tests {
    use super::*;

    #[test]
    fn a_worktree_resource_gives_back_its_machine_and_path() {
        let key = WorktreeKey::from_canonical(std::path::Path::new("/srv/a:b/1/app"));
        let team = Resource::worktree_on("laptop", &key);
        assert_eq!(team.worktree_parts(true), ("laptop", key.clone()));
        // On a file ledger the key is the path, `:` and all.
        let file = Resource::worktree(&key);
        assert_eq!(file.worktree_parts(false), ("", key));
    }
}
