//! Which slot a spawn takes: a decision over the pool's facts ([`Pool`]: its slots as the ledger
//! has them, the numbers ever used, its size, the time) and what the disk says of a slot
//! ([`Disk`]), asked lazily: proving a slot reads its admin files and checking it for work runs
//! git, so a spawn asks only of the slots it tries, in order. `super::choose` answers from the
//! disk; a test answers with the facts it is about.
//!
//! An expired slot is proven safe before it is claimed, because claiming it ends its task's
//! lease for good: a slot whose task only let its lease lapse, with its work still in it, stays
//! that task's. A free slot is claimed first and proven after, so two parallel spawns never
//! probe or switch the same slot.

use std::path::{Path, PathBuf};

use super::slot::{self, NotTheSlot};
use super::{Plan, Skipped, SlotInfo};
use crate::ledger::{TenureState, WorktreeKey};

/// The pool as the ledger has it when a spawn plans.
pub struct Pool<'a> {
    /// Every present slot, with its holder and open tasks.
    pub infos: &'a [SlotInfo],
    /// Every slot number ever used, with its path: a pruned slot's number comes back at its
    /// own path only, so its token history continues.
    pub numbers_used: &'a [(i64, WorktreeKey)],
    /// At most this many slots (`hand.maxSlots`).
    pub max: i64,
    /// The ledger's time.
    pub now: i64,
    /// Slots found unsafe after a claim: not tried again.
    pub exclude: &'a [PathBuf],
    /// Where the scan of free slots starts: concurrent spawns all see the same free slots, and
    /// starting each at a different one (by pid) spreads their claims, so fewer lose a claim
    /// and plan again.
    pub first_free: usize,
}

/// What the disk says of a slot, as [`decide`] asks it.
pub trait Disk {
    /// Why a process in a PID namespace this process table cannot see may sit in the slot,
    /// if so (see `super::unseen_namespace`).
    fn unseen(&self, info: &SlotInfo) -> Option<String>;
    /// That the slot at `path` is the worktree git-hand made there.
    fn prove(&self, path: &Path) -> Result<(), NotTheSlot>;
    /// That nothing at all is at `path` (a slot the disk lost, to make again).
    fn prove_absent(&self, path: &Path) -> Result<(), NotTheSlot>;
    /// What in the slot at `path` a reuse would lose or disturb (none: it is safe).
    fn reuse_blockers(&self, path: &Path) -> Vec<String>;
    /// The path slot number `n` has.
    fn slot_path(&self, n: i64) -> PathBuf;
    /// Whether something is at number `n`'s directory already.
    fn number_taken(&self, n: i64) -> bool;
}

/// The slot to take: a free one (to claim, then prove safe), else an expired one proven safe,
/// else a new number while under `max`; with every slot skipped on the way and why. `Err`:
/// none, the pool is full (every slot skipped, and each live lease that holds one).
pub fn decide(
    pool: &Pool<'_>,
    disk: &dyn Disk,
) -> std::result::Result<(Plan, Vec<Skipped>), Vec<Skipped>> {
    let mut skipped = vec![];
    for info in candidates(pool) {
        let path = info.slot.path.as_path().to_path_buf();
        if pool.exclude.contains(&path) {
            continue;
        }
        // The collision guard keys on lease ids: a stale task row left by an interrupted
        // teardown names this slot but holds no tenure of it, so it must not block. Only rows
        // from older ledgers, with no lease id, fall back to the path.
        if let Some(legacy) = info.tasks.iter().find(|t| t.lease_id.is_none()) {
            skipped.push(skip(
                info,
                format!("task {} (no lease id) names it", legacy.name),
            ));
            continue;
        }
        // A process in a namespace this scan cannot see may sit in it: nothing would show it.
        if let Some(why) = disk.unseen(info) {
            skipped.push(skip(info, why));
            continue;
        }
        // Nothing is touched, or even probed, before the slot is proven to be itself.
        match disk.prove(&path) {
            Ok(()) => {}
            Err(gone) if gone.is_gone() => match disk.prove_absent(&path) {
                Ok(()) => return Ok((Plan::Recreate(path), skipped)),
                Err(e) => {
                    skipped.push(skip(info, slot::sets_aside(&e)));
                    continue;
                }
            },
            Err(e) => {
                skipped.push(skip(info, slot::sets_aside(&e)));
                continue;
            }
        }
        if info.is_free() {
            return Ok((Plan::Claim(path), skipped));
        }
        let why = disk.reuse_blockers(&path);
        if why.is_empty() {
            return Ok((Plan::Reuse(path), skipped));
        }
        skipped.push(Skipped {
            path: info.slot.path.to_string(),
            why,
        });
    }
    if (pool.infos.len() as i64) >= pool.max {
        skipped.extend(leased(pool));
        return Err(skipped);
    }
    let present: Vec<i64> = pool.infos.iter().map(|i| i.slot.n).collect();
    let n = new_number(&present, pool.numbers_used, &|n| disk.slot_path(n), &|n| {
        disk.number_taken(n)
    });
    Ok((
        Plan::Create {
            n,
            path: disk.slot_path(n),
        },
        skipped,
    ))
}

/// The number of a new slot: the lowest no present slot uses, whose directory is free, and
/// which, if an old pruned slot had it, comes back at the same path (`slot_path` and
/// `number_taken` as [`Disk`] answers them).
pub fn new_number(
    present: &[i64],
    numbers_used: &[(i64, WorktreeKey)],
    slot_path: &dyn Fn(i64) -> PathBuf,
    number_taken: &dyn Fn(i64) -> bool,
) -> i64 {
    let usable = |n: i64| {
        let key = WorktreeKey::from_canonical(&slot_path(n));
        !present.contains(&n)
            && numbers_used.iter().all(|(used, p)| *used != n || *p == key)
            && !number_taken(n)
    };
    (1..).find(|n| usable(*n)).unwrap_or(1)
}

fn skip(info: &SlotInfo, why: String) -> Skipped {
    Skipped {
        path: info.slot.path.to_string(),
        why: vec![why],
    }
}

/// The slots a spawn may take, in the order it tries them: the free ones (from
/// [`Pool::first_free`] round), then the expired ones.
fn candidates<'a>(pool: &Pool<'a>) -> impl Iterator<Item = &'a SlotInfo> {
    let free: Vec<&SlotInfo> = pool.infos.iter().filter(|i| i.is_free()).collect();
    let start = if free.is_empty() {
        0
    } else {
        pool.first_free % free.len()
    };
    let mut free_in_order = free[start..].to_vec();
    free_in_order.extend_from_slice(&free[..start]);
    let now = pool.now;
    let expired = pool.infos.iter().filter(move |i| {
        i.held
            .as_ref()
            .is_some_and(|t| t.state(now) == TenureState::Expired)
    });
    free_in_order.into_iter().chain(expired)
}

/// The slots live leases hold, each with its holder and task: why a full pool has no room.
fn leased<'a>(pool: &Pool<'a>) -> impl Iterator<Item = Skipped> + 'a {
    let now = pool.now;
    pool.infos
        .iter()
        .filter(move |i| {
            i.held
                .as_ref()
                .is_some_and(|t| t.state(now) == TenureState::Live)
        })
        .map(|info| {
            let task = info
                .tasks
                .first()
                .map_or_else(String::new, |t| format!(" by task {}", t.name));
            let holder = info.held.as_ref().map_or("", |t| t.holder.as_str());
            skip(info, format!("leased to {holder}{task}"))
        })
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;
    use crate::ledger::{LeaseId, RepoId, Resource, Slot, Tenure};

    const NOW: i64 = 1_000_000;

    /// The disk as a test tells it, which remembers what it was asked to check for work.
    #[derive(Default)]
    struct Told {
        /// Nothing at all is there.
        lost: Vec<i64>,
        /// Something else is there (a file where the slot was).
        not_itself: Vec<i64>,
        /// The slot holds this work.
        work: Vec<(i64, &'static str)>,
        /// Last used from a PID namespace this process table cannot see.
        unseen: Vec<i64>,
        /// A directory of this number exists already (no slot of the ledger's).
        taken: Vec<i64>,
        checked_for_work: RefCell<Vec<PathBuf>>,
    }

    fn path(n: i64) -> PathBuf {
        PathBuf::from(format!("/pools/app-0123ab/{n}/app"))
    }

    fn number(path: &Path) -> i64 {
        (1..100)
            .find(|n| super::tests::path(*n) == path)
            .unwrap_or(0)
    }

    impl Disk for Told {
        fn unseen(&self, info: &SlotInfo) -> Option<String> {
            self.unseen
                .contains(&info.slot.n)
                .then(|| "another PID namespace".into())
        }
        fn prove(&self, p: &Path) -> Result<(), NotTheSlot> {
            let path = p.to_path_buf();
            if self.lost.contains(&number(p)) {
                Err(NotTheSlot::Gone { path })
            } else if self.not_itself.contains(&number(p)) {
                Err(NotTheSlot::NotADirectory { path })
            } else {
                Ok(())
            }
        }
        fn prove_absent(&self, p: &Path) -> Result<(), NotTheSlot> {
            match self.lost.contains(&number(p)) {
                true => Ok(()),
                false => Err(NotTheSlot::NotADirectory {
                    path: p.to_path_buf(),
                }),
            }
        }
        fn reuse_blockers(&self, p: &Path) -> Vec<String> {
            self.checked_for_work.borrow_mut().push(p.to_path_buf());
            let n = number(p);
            let work = self.work.iter().filter(|(w, _)| *w == n);
            work.map(|(_, why)| why.to_string()).collect()
        }
        fn slot_path(&self, n: i64) -> PathBuf {
            path(n)
        }
        fn number_taken(&self, n: i64) -> bool {
            self.taken.contains(&n)
        }
    }

    /// Slot `n`, free or held by `holder` until `expires_at`.
    fn slot(n: i64, held: Option<(&str, i64)>) -> SlotInfo {
        let key = WorktreeKey::from_canonical(&path(n));
        SlotInfo {
            held: held.map(|(holder, expires_at)| Tenure {
                lease_id: LeaseId::parse(&format!("{n:032x}")).unwrap(),
                resource: Resource::worktree_on("", &key),
                token: n,
                holder: holder.into(),
                ttl_ms: Some(1000),
                acquired_at: 0,
                renewed_at: None,
                expires_at: Some(expires_at),
                ended_at: None,
                end_reason: None,
            }),
            slot: Slot {
                repo_id: RepoId::new("0123abcdef012345"),
                n,
                path: key,
                created_at: 0,
                machine: String::new(),
                pid_ns: None,
            },
            tasks: vec![],
            last_token: n,
        }
    }

    fn expired(n: i64) -> SlotInfo {
        slot(n, Some(("zombie", NOW - 1)))
    }

    fn live(n: i64) -> SlotInfo {
        slot(n, Some(("agent-7", NOW + 60_000)))
    }

    fn pool(infos: &[SlotInfo], max: i64) -> Pool<'_> {
        Pool {
            infos,
            numbers_used: &[],
            max,
            now: NOW,
            exclude: &[],
            first_free: 0,
        }
    }

    fn plan(pool: &Pool<'_>, disk: &Told) -> Plan {
        decide(pool, disk).map(|(plan, _)| plan).unwrap()
    }

    #[test]
    fn a_free_slot_is_claimed_before_an_expired_one_and_checked_for_work_only_after_the_claim() {
        let disk = Told::default();
        let infos = [expired(1), slot(2, None)];
        assert_eq!(plan(&pool(&infos, 2), &disk), Plan::Claim(path(2)));
        assert!(disk.checked_for_work.borrow().is_empty());
    }

    #[test]
    fn an_expired_slot_with_work_in_it_stays_its_tasks_and_one_without_is_reused() {
        let disk = Told {
            work: vec![(1, "2 commits on no branch")],
            ..Told::default()
        };
        let infos = [expired(1), expired(2)];
        let (plan, skipped) = decide(&pool(&infos, 2), &disk).unwrap();
        assert_eq!(plan, Plan::Reuse(path(2)));
        assert_eq!(skipped.len(), 1);
        assert_eq!(skipped[0].path, path(1).display().to_string());
        assert_eq!(skipped[0].why, ["2 commits on no branch"]);
    }

    #[test]
    fn a_slot_the_disk_lost_is_made_again_and_one_that_is_not_itself_is_set_aside_untouched() {
        let disk = Told {
            lost: vec![2],
            not_itself: vec![1],
            ..Told::default()
        };
        let infos = [expired(1), expired(2)];
        let (plan, skipped) = decide(&pool(&infos, 2), &disk).unwrap();
        assert_eq!(plan, Plan::Recreate(path(2)));
        assert!(skipped[0].why[0].contains("not the slot git-hand made"));
        assert!(disk.checked_for_work.borrow().is_empty(), "never probed");
    }

    #[test]
    fn slots_excluded_after_a_claim_or_in_a_namespace_out_of_sight_are_passed_over() {
        let disk = Told {
            unseen: vec![2],
            ..Told::default()
        };
        let infos = [slot(1, None), slot(2, None), slot(3, None)];
        let excluded = [path(1)];
        let pool = Pool {
            exclude: &excluded,
            ..pool(&infos, 3)
        };
        let (plan, skipped) = decide(&pool, &disk).unwrap();
        assert_eq!(plan, Plan::Claim(path(3)));
        assert_eq!(skipped.len(), 1, "an excluded slot was skipped already");
        assert_eq!(skipped[0].why, ["another PID namespace"]);
    }

    #[test]
    fn concurrent_spawns_start_their_scan_of_free_slots_at_different_slots() {
        let disk = Told::default();
        let infos = [slot(1, None), slot(2, None), slot(3, None)];
        let claimed: Vec<Plan> = (0..4)
            .map(|first_free| {
                let pool = Pool {
                    first_free,
                    ..pool(&infos, 3)
                };
                plan(&pool, &disk)
            })
            .collect();
        let paths = [1, 2, 3, 1].map(|n| Plan::Claim(path(n)));
        assert_eq!(claimed, paths);
    }

    #[test]
    fn a_full_pool_names_each_live_lease_and_a_new_slot_takes_the_lowest_number_it_may() {
        let disk = Told {
            work: vec![(2, "uncommitted changes")],
            taken: vec![3],
            ..Told::default()
        };
        let infos = [live(1), expired(2)];
        let Err(skipped) = decide(&pool(&infos, 2), &disk) else {
            panic!("a full pool has no slot");
        };
        let why: Vec<&str> = skipped.iter().map(|s| s.why[0].as_str()).collect();
        assert_eq!(why, ["uncommitted changes", "leased to agent-7"]);

        // Under the limit: 1 and 2 are present, 3's directory is taken, 4 was a pruned slot of
        // another path, so 5.
        let used = [(
            4,
            WorktreeKey::from_canonical(Path::new("/elsewhere/4/app")),
        )];
        let pool = Pool {
            numbers_used: &used,
            ..pool(&infos, 9)
        };
        let created = plan(&pool, &disk);
        assert_eq!(
            created,
            Plan::Create {
                n: 5,
                path: path(5)
            }
        );
    }
}
