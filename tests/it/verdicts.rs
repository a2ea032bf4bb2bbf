//! `ops::fence::verdict::judge` over every verdict, as a table: a real ledger file with an injected
//! clock (no sleeps), the credential from the environment or the stamp, and each rule
//! (DESIGN §6: `unmanaged`, `current`, `stale`, `expired`, `released`, `unknown-lease`, and
//! `issue-lost` and `no-credential` beside them).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use git_hand::clock::ManualClock;
use git_hand::ledger::{
    Acquire, By, LeaseId, Ledger, NewTask, Release, RepoId, Resource, Step, Tenure, WorktreeKey,
};
use git_hand::ops::fence::verdict::{
    Credential, CredentialRule, CredentialSource, Finding, Verdict, judge, parse_env_credential,
};
use git_hand::ops::pool::stamp::Stamp;

const T0: i64 = 1_795_949_785_000;
const MIN: i64 = 60_000;
/// The slot every case judges, and a second one of the same repository.
const SLOT: &str = "/pools/app-0a1b2c/1/app";
const OTHER_SLOT: &str = "/pools/app-0a1b2c/2/app";
/// A worktree that is no slot.
const MAIN: &str = "/work/app";
const NEVER_GRANTED: &str = "0123456789abcdef0123456789abcdef";

/// A worktree's key, as the ledger stores it.
fn key(path: &str) -> WorktreeKey {
    WorktreeKey::from_canonical(Path::new(path))
}

/// A ledger with one repository and two slots, and a clock the test moves.
struct World {
    _dir: tempfile::TempDir,
    clock: Rc<ManualClock>,
    ledger: Ledger,
    repo_id: RepoId,
    tasks: u32,
}

/// What a holder presents, and the rule it is judged under.
struct Presented {
    workdir: &'static str,
    stamp: Option<Stamp>,
    env: Option<Result<Credential, String>>,
    rule: CredentialRule,
}

impl World {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let clock = Rc::new(ManualClock::new(T0));
        let mut ledger = Ledger::open_creating(dir.path().join("ledger.sqlite"))
            .map(|l| l.with_clock(Box::new(clock.clone())))
            .unwrap();
        let repo_id = ledger
            .write(|tx| {
                let repo = tx.ensure_repo(Path::new("/work/app/.git"))?;
                tx.ensure_slot(&repo.id, 1, &key(SLOT))?;
                tx.ensure_slot(&repo.id, 2, &key(OTHER_SLOT))?;
                Ok(repo.id)
            })
            .unwrap();
        Self {
            _dir: dir,
            clock,
            ledger,
            repo_id,
            tasks: 0,
        }
    }

    fn ledger_path(&self) -> PathBuf {
        match self.ledger.place() {
            git_hand::ledger::Place::File(path) => path,
            other => panic!("a file ledger, not {other}"),
        }
    }

    /// Leases `slot` to a new task (with `ttl`, and the issue lease `issue` when given), as spawn
    /// records it: the tenure and an active task naming it.
    fn lease(&mut self, slot: &str, ttl: Option<i64>, issue: Option<&Tenure>) -> Tenure {
        self.tasks += 1;
        let name = format!("t{}", self.tasks);
        let repo_id = self.repo_id.clone();
        self.ledger
            .write(|tx| {
                let Acquire::Acquired { tenure, .. } =
                    tx.acquire(&Resource::worktree(&key(slot)), "alice", ttl)?
                else {
                    panic!("{slot} is held");
                };
                let branch = format!("hand/{name}");
                tx.insert_task(&NewTask {
                    repo_id: &repo_id,
                    name: &name,
                    slot_path: &key(slot),
                    lease_id: &tenure.lease_id,
                    issue: issue.map(|t| t.resource.key.as_str()),
                    issue_lease_id: issue.map(|t| &t.lease_id),
                    branch: &branch,
                    base_oid: "0000000000000000000000000000000000000000",
                    holder: "alice",
                    pid: 1,
                    pid_start: None,
                    pid_ns: None,
                    step: Step::Active,
                    remote: None,
                    base_ref: None,
                })?;
                Ok(tenure)
            })
            .unwrap()
    }

    /// Acquires issue `id` for `holder`.
    fn issue(&mut self, id: &str, holder: &str) -> Tenure {
        let res = Resource::issue("example.com/app", id);
        match self
            .ledger
            .write(|tx| tx.acquire(&res, holder, None))
            .unwrap()
        {
            Acquire::Acquired { tenure, .. } => tenure,
            Acquire::Held(t) => panic!("issue {id} is held by {}", t.holder),
        }
    }

    /// Ends `tenure` by its lease id.
    fn release(&mut self, tenure: &Tenure) {
        let released = self
            .ledger
            .write(|tx| tx.release(&tenure.resource, By::Lease(&tenure.lease_id)))
            .unwrap();
        assert!(
            matches!(released, Release::Released(Some(_))),
            "{released:?}"
        );
    }

    fn judge(&mut self, p: Presented) -> Finding {
        self.ledger
            .read(|view| {
                judge(
                    view,
                    &key(p.workdir),
                    p.stamp.as_ref(),
                    p.env.clone(),
                    p.rule,
                )
            })
            .unwrap()
    }
}

/// `GIT_HAND_LEASE` and `GIT_HAND_TOKEN` of `tenure`, as the environment carries them.
fn env_of(tenure: &Tenure) -> Option<Result<Credential, String>> {
    env_raw(tenure.lease_id.as_str(), &tenure.token.to_string())
}

/// The credential the environment variables `lease` and `token` carry (empty: unset).
fn env_raw(lease: &str, token: &str) -> Option<Result<Credential, String>> {
    let set = |v: &str| (!v.is_empty()).then(|| OsStr::new(v).to_owned());
    parse_env_credential(set(lease).as_deref(), set(token).as_deref())
        .map(|parsed| parsed.map_err(|e| e.in_env()))
}

/// The stamp spawn writes into `tenure`'s slot.
fn stamp_of(w: &World, tenure: &Tenure) -> Option<Stamp> {
    Some(Stamp {
        lease_id: tenure.lease_id.clone(),
        token: tenure.token,
        task: "t".into(),
        ledger: git_hand::ledger::Place::File(w.ledger_path()),
    })
}

/// In the slot, with the environment's credential (else `stamp`), under the default rule.
fn in_slot(env: Option<Result<Credential, String>>, stamp: Option<Stamp>) -> Presented {
    Presented {
        workdir: SLOT,
        stamp,
        env,
        rule: CredentialRule::StampSuffices,
    }
}

/// One row: a name that says the case, the world it builds and what it presents, the verdict.
struct Case {
    name: &'static str,
    build: fn(&mut World) -> Presented,
    want: Verdict,
}

const CASES: &[Case] = &[
    Case {
        name: "a worktree that is no slot and has no stamp is unmanaged",
        build: |_| Presented {
            workdir: MAIN,
            stamp: None,
            env: None,
            rule: CredentialRule::EnvRequired,
        },
        want: Verdict::Unmanaged,
    },
    Case {
        name: "the slot's live lease from the environment is current",
        build: |w| {
            let t = w.lease(SLOT, Some(30 * MIN), None);
            in_slot(env_of(&t), None)
        },
        want: Verdict::Current,
    },
    Case {
        name: "the slot's live lease from the stamp alone is current",
        build: |w| {
            let t = w.lease(SLOT, None, None);
            let stamp = stamp_of(w, &t);
            in_slot(None, stamp)
        },
        want: Verdict::Current,
    },
    Case {
        name: "a lease id without its token is judged by the lease id",
        build: |w| {
            let t = w.lease(SLOT, None, None);
            in_slot(env_raw(t.lease_id.as_str(), ""), None)
        },
        want: Verdict::Current,
    },
    Case {
        name: "a lease one minute before its expiry is current",
        build: |w| {
            let t = w.lease(SLOT, Some(30 * MIN), None);
            w.clock.advance(29 * MIN);
            in_slot(env_of(&t), None)
        },
        want: Verdict::Current,
    },
    Case {
        name: "a lease superseded by a newer tenure of the slot is stale",
        build: |w| {
            let a = w.lease(SLOT, None, None);
            w.release(&a);
            w.lease(SLOT, None, None);
            in_slot(env_of(&a), None)
        },
        want: Verdict::Stale,
    },
    Case {
        name: "a lease superseded by a tenure that ended since is still stale",
        build: |w| {
            let a = w.lease(SLOT, None, None);
            w.release(&a);
            let b = w.lease(SLOT, None, None);
            w.release(&b);
            in_slot(env_of(&a), None)
        },
        want: Verdict::Stale,
    },
    Case {
        name: "an expired lease taken over by the next spawn is stale",
        build: |w| {
            let a = w.lease(SLOT, Some(30 * MIN), None);
            w.clock.advance(31 * MIN);
            w.lease(SLOT, None, None);
            in_slot(env_of(&a), None)
        },
        want: Verdict::Stale,
    },
    Case {
        name: "the environment's stale credential wins over a current stamp",
        build: |w| {
            let a = w.lease(SLOT, None, None);
            w.release(&a);
            let b = w.lease(SLOT, None, None);
            let stamp = stamp_of(w, &b);
            in_slot(env_of(&a), stamp)
        },
        want: Verdict::Stale,
    },
    Case {
        name: "a lease past its expiry is expired",
        build: |w| {
            let t = w.lease(SLOT, Some(30 * MIN), None);
            w.clock.advance(31 * MIN);
            in_slot(env_of(&t), None)
        },
        want: Verdict::Expired,
    },
    Case {
        name: "a lease at the very instant it expires is expired",
        build: |w| {
            let t = w.lease(SLOT, Some(30 * MIN), None);
            w.clock.advance(30 * MIN);
            in_slot(env_of(&t), None)
        },
        want: Verdict::Expired,
    },
    Case {
        name: "an expired lease from the stamp is expired",
        build: |w| {
            let t = w.lease(SLOT, Some(MIN), None);
            w.clock.advance(2 * MIN);
            let stamp = stamp_of(w, &t);
            in_slot(None, stamp)
        },
        want: Verdict::Expired,
    },
    Case {
        name: "a released lease is released",
        build: |w| {
            let t = w.lease(SLOT, None, None);
            w.release(&t);
            in_slot(env_of(&t), None)
        },
        want: Verdict::Released,
    },
    Case {
        name: "the stamp of a torn-down task is released",
        build: |w| {
            let t = w.lease(SLOT, None, None);
            w.release(&t);
            let stamp = stamp_of(w, &t);
            in_slot(None, stamp)
        },
        want: Verdict::Released,
    },
    Case {
        name: "a free slot with no credential and no stamp is released",
        build: |w| {
            let t = w.lease(SLOT, None, None);
            w.release(&t);
            in_slot(None, None)
        },
        want: Verdict::Released,
    },
    Case {
        name: "a leased slot with no credential and no stamp is unknown-lease",
        build: |w| {
            w.lease(SLOT, None, None);
            in_slot(None, None)
        },
        want: Verdict::UnknownLease,
    },
    Case {
        name: "a well-formed lease id the ledger never granted is unknown-lease",
        build: |w| {
            w.lease(SLOT, None, None);
            in_slot(env_raw(NEVER_GRANTED, "1"), None)
        },
        want: Verdict::UnknownLease,
    },
    Case {
        name: "another slot's lease is unknown-lease here",
        build: |w| {
            w.lease(SLOT, None, None);
            let other = w.lease(OTHER_SLOT, None, None);
            in_slot(env_of(&other), None)
        },
        want: Verdict::UnknownLease,
    },
    Case {
        name: "the slot's live lease with another token is unknown-lease",
        build: |w| {
            let t = w.lease(SLOT, None, None);
            in_slot(env_raw(t.lease_id.as_str(), "7"), None)
        },
        want: Verdict::UnknownLease,
    },
    Case {
        name: "a superseded lease with a wrong token is unknown-lease, not stale",
        build: |w| {
            let a = w.lease(SLOT, None, None);
            w.release(&a);
            w.lease(SLOT, None, None);
            in_slot(env_raw(a.lease_id.as_str(), "2"), None)
        },
        want: Verdict::UnknownLease,
    },
    Case {
        name: "a lease id that does not parse is unknown-lease, never a fall back to the stamp",
        build: |w| {
            let t = w.lease(SLOT, None, None);
            let stamp = stamp_of(w, &t);
            in_slot(env_raw("not-a-lease", "1"), stamp)
        },
        want: Verdict::UnknownLease,
    },
    Case {
        name: "a token without a lease id is unknown-lease",
        build: |w| {
            let t = w.lease(SLOT, None, None);
            let stamp = stamp_of(w, &t);
            in_slot(env_raw("", "1"), stamp)
        },
        want: Verdict::UnknownLease,
    },
    Case {
        name: "a token that is no positive integer is unknown-lease",
        build: |w| {
            let t = w.lease(SLOT, None, None);
            in_slot(env_raw(t.lease_id.as_str(), "-1"), None)
        },
        want: Verdict::UnknownLease,
    },
    Case {
        name: "a stamp in a worktree the ledger has no slot for is still judged",
        build: |w| {
            let t = w.lease(SLOT, None, None);
            let stamp = stamp_of(w, &t);
            Presented {
                workdir: MAIN,
                stamp,
                env: None,
                rule: CredentialRule::StampSuffices,
            }
        },
        want: Verdict::UnknownLease,
    },
    Case {
        name: "a task whose issue lease was released is issue-lost",
        build: |w| {
            let issue = w.issue("42", "alice");
            let t = w.lease(SLOT, None, Some(&issue));
            w.release(&issue);
            in_slot(env_of(&t), None)
        },
        want: Verdict::IssueLost,
    },
    Case {
        name: "a task whose issue lease another holder took over is issue-lost",
        build: |w| {
            let issue = w.issue("42", "alice");
            let t = w.lease(SLOT, None, Some(&issue));
            w.release(&issue);
            w.issue("42", "bob");
            in_slot(env_of(&t), None)
        },
        want: Verdict::IssueLost,
    },
    Case {
        name: "a task whose issue lease is still its own is current",
        build: |w| {
            let issue = w.issue("42", "alice");
            let t = w.lease(SLOT, None, Some(&issue));
            in_slot(env_of(&t), None)
        },
        want: Verdict::Current,
    },
    Case {
        name: "under requireCredential a current stamp alone is no-credential",
        build: |w| {
            let t = w.lease(SLOT, None, None);
            let mut p = in_slot(None, stamp_of(w, &t));
            p.rule = CredentialRule::EnvRequired;
            p
        },
        want: Verdict::NoCredential,
    },
    Case {
        name: "under requireCredential the environment's credential is current",
        build: |w| {
            let t = w.lease(SLOT, None, None);
            let mut p = in_slot(env_of(&t), stamp_of(w, &t));
            p.rule = CredentialRule::EnvRequired;
            p
        },
        want: Verdict::Current,
    },
    Case {
        name: "under requireCredential a released stamp is released, not no-credential",
        build: |w| {
            let t = w.lease(SLOT, None, None);
            w.release(&t);
            let mut p = in_slot(None, stamp_of(w, &t));
            p.rule = CredentialRule::EnvRequired;
            p
        },
        want: Verdict::Released,
    },
];

#[test]
fn judge_gives_each_case_its_verdict() {
    let mut wrong = vec![];
    for case in CASES {
        let mut world = World::new();
        let presented = (case.build)(&mut world);
        let finding = world.judge(presented);
        if finding.verdict != case.want {
            wrong.push(format!(
                "{}: want {:?}, got {:?}",
                case.name, case.want, finding.verdict
            ));
        }
        assert_eq!(
            finding.verdict.allows(),
            matches!(case.want, Verdict::Unmanaged | Verdict::Current),
            "{}",
            case.name
        );
    }
    assert!(wrong.is_empty(), "wrong verdicts:\n{}", wrong.join("\n"));
}

#[test]
fn every_verdict_has_a_case() {
    let all = [
        Verdict::Unmanaged,
        Verdict::Current,
        Verdict::Stale,
        Verdict::Expired,
        Verdict::Released,
        Verdict::UnknownLease,
        Verdict::IssueLost,
        Verdict::NoCredential,
    ];
    for verdict in all {
        assert!(
            CASES.iter().any(|c| c.want == verdict),
            "no case judges {verdict:?}"
        );
    }
}

#[test]
fn a_stale_finding_names_the_tenure_that_superseded_it() {
    let mut w = World::new();
    let a = w.lease(SLOT, None, None);
    w.release(&a);
    let b = w.lease(SLOT, None, None);
    let f = w.judge(in_slot(env_of(&a), None));
    assert_eq!(f.verdict, Verdict::Stale);
    assert_eq!(f.tenure.as_ref().map(|t| t.token), Some(a.token));
    assert_eq!(f.newest.as_ref().map(|t| &t.lease_id), Some(&b.lease_id));
    assert_eq!(b.token, a.token + 1);
    assert_eq!(f.slot, Some(key(SLOT)));
    assert_eq!(f.now, T0);
}

#[test]
fn an_unknown_lease_finding_says_what_was_presented_and_why() {
    let mut w = World::new();
    let t = w.lease(SLOT, None, None);
    let f = w.judge(in_slot(env_raw(NEVER_GRANTED, "3"), None));
    assert_eq!(f.verdict, Verdict::UnknownLease);
    assert_eq!(
        f.credential,
        Some(Credential {
            lease_id: LeaseId::parse(NEVER_GRANTED).unwrap(),
            token: Some(3),
            source: CredentialSource::Env,
        })
    );
    assert!(f.tenure.is_none(), "{f:?}");
    assert_eq!(f.newest.as_ref().map(|n| &n.lease_id), Some(&t.lease_id));

    let f = w.judge(in_slot(env_raw("nope", ""), None));
    assert_eq!(f.verdict, Verdict::UnknownLease);
    assert!(f.credential.is_none(), "{f:?}");
    let why = f.credential_error.unwrap_or_default();
    assert!(why.contains("GIT_HAND_LEASE"), "{why}");
}

#[test]
fn an_issue_lost_finding_names_who_holds_the_issue_now() {
    let mut w = World::new();
    let issue = w.issue("42", "alice");
    let t = w.lease(SLOT, None, Some(&issue));
    w.release(&issue);
    let bobs = w.issue("42", "bob");
    let f = w.judge(in_slot(env_of(&t), None));
    assert_eq!(f.verdict, Verdict::IssueLost);
    assert_eq!(
        f.issue_now.map(|n| (n.holder, n.token)),
        Some(("bob".into(), bobs.token))
    );
}
