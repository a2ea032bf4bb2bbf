//! `git hand ledger copy --to <url>`: moving this machine's file ledger into a team ledger
//! without losing what makes it safe (docs/team.md, "Moving a laptop's ledger in").
//!
//! One read of the file ledger (`View::export`), one transaction on the team ledger
//! (`Tx::import`: everything or nothing; refused whole when something is in the way), then the
//! stamps of the copied slots that name the file ledger and a lease the team ledger now has
//! (a copied task's, or the ended one of a free slot) are pointed at the team ledger, so the
//! pre-push hook, which checks the ledger a stamp names, checks the team ledger. The file
//! ledger is only read: it stays as it was, for the user to keep or delete.
//!
//! A stamp is rewritten only if it is still the one read before the copy: the user may keep
//! working while the copy runs, and a slot torn down and spawned again on the file ledger
//! meanwhile carries a new lease's stamp, which must keep naming the file ledger.

use std::path::{Path, PathBuf};

use super::PlaceError;
use crate::ledger::server::ServerUrl;
use crate::ledger::{Conflict, Export, Imported, LeaseId, Ledger, Mode, Place, WorktreeKey};
use crate::ops::pool::slot::SlotLock;
use crate::ops::pool::stamp::{self, Stamp};
use crate::ops::{Context, Error, Result};

/// What a copy did.
#[derive(Debug)]
pub struct Copied {
    /// The file ledger that was copied (left as it was).
    pub from: PathBuf,
    /// The team ledger, printed without its password.
    pub to: ServerUrl,
    /// The machine the copied slots and tasks are recorded under.
    pub machine: String,
    pub imported: Imported,
    /// Slots whose stamp now names the team ledger.
    pub restamped: Vec<PathBuf>,
    /// Stamps that could not be rewritten, and why (the push from that slot is still checked
    /// against the file ledger until `ledger copy` is run again).
    pub unstamped: Vec<(PathBuf, String)>,
    /// Slots leased again while the copy ran: their stamp was left as it is.
    pub changed: Vec<Changed>,
}

/// A slot whose stamp changed between the copy's read and its rewrite (torn down and spawned
/// again meanwhile): left as it is, so the task it names now stays on the ledger it names.
#[derive(Debug)]
pub struct Changed {
    pub slot: PathBuf,
    /// The task whose stamp the copy read (copied to the team ledger as it was then).
    pub read: String,
    /// The stamp there now; `None` when there is none.
    pub now: Option<Stamp>,
}

/// Copies the configured file ledger into the team ledger at `to`, as this machine.
pub fn copy(ctx: &Context, to: &ServerUrl) -> Result<Copied> {
    let from = match ctx.ledger_location()?.place {
        Place::File(path) => path,
        Place::Server(url) => {
            return Err(PlaceError::CopyFromServer {
                url: url.to_string(),
            }
            .into());
        }
    };
    let Some(mut file) = Ledger::open(&from, Mode::Read)? else {
        return Err(PlaceError::NothingToCopy {
            from,
            to: to.to_string(),
        }
        .into());
    };
    let export = file.read(|view| view.export())?;
    let mut stamps = Stamps::default();
    for slot in slots_of(&export) {
        stamps.read(slot, &export, &from);
    }
    let machine = ctx.machine()?;
    let mut team = Ledger::open_creating(to)?.on_machine(&machine);
    ctx.note(team.take_notices());
    let label = from.display().to_string();
    let asked: Vec<LeaseId> = stamps
        .found
        .iter()
        .map(|f| f.stamp.lease_id.clone())
        .collect();
    let imported = team
        .write(|tx| tx.import(&export, &label, &asked))?
        .map_err(|found| refused(&found, &from, to))?;
    let mut copied = Copied {
        from,
        to: to.clone(),
        machine,
        imported,
        restamped: vec![],
        unstamped: stamps.unreadable,
        changed: vec![],
    };
    for found in stamps.found {
        if copied.imported.present.contains(&found.stamp.lease_id) {
            restamp(&mut copied, found);
        }
    }
    Ok(copied)
}

/// Every slot of the file ledger, and any open task's slot it no longer lists.
fn slots_of(export: &Export) -> Vec<&WorktreeKey> {
    let mut slots: Vec<&WorktreeKey> = export.slots.iter().map(|s| &s.path).collect();
    for path in export.tasks.iter().filter_map(|t| t.slot_path.as_ref()) {
        if !slots.contains(&path) {
            slots.push(path);
        }
    }
    slots
}

/// The stamps of the file ledger's slots that name it, read before the copy: the team ledger
/// is asked which of their leases it has once the copy is written.
#[derive(Default)]
struct Stamps {
    /// Each stamp that names the copied file ledger.
    found: Vec<Found>,
    /// Open tasks' slots whose stamp cannot be read, and why (a free slot's is skipped: its
    /// directory may be gone, and nothing pushes from it then).
    unreadable: Vec<(PathBuf, String)>,
}

/// A slot's stamp that names the copied file ledger.
struct Found {
    slot: PathBuf,
    admin: PathBuf,
    stamp: Stamp,
}

impl Stamps {
    fn read(&mut self, slot: &WorktreeKey, export: &Export, from: &Path) {
        let path = Path::new(slot.as_str()).to_path_buf();
        let found = crate::git::link::admin_dir_of(&path)
            .map_err(|e| e.to_string())
            .and_then(|admin| match stamp::read(&admin) {
                Ok(stamp) => Ok(stamp.map(|s| (admin, s))),
                Err(e) => Err(e.to_string()),
            });
        match found {
            // The stamp spells the file as the spawn's environment did: compared as one file.
            Ok(Some((admin, stamp))) if stamp.ledger.is_file(from) => {
                self.found.push(Found {
                    slot: path,
                    admin,
                    stamp,
                });
            }
            Ok(_) => {}
            Err(why) => {
                if export
                    .tasks
                    .iter()
                    .any(|t| t.slot_path.as_ref() == Some(slot))
                {
                    self.unreadable.push((path, why));
                }
            }
        }
    }
}

/// Points `found` (a stamp that names the file ledger and a lease the team ledger now has) at
/// the team ledger, if it is still the stamp read before the copy. The slot may have been torn
/// down and spawned again on the file ledger since (the user kept working): its stamp then
/// names the new lease, and replacing it would make the new holder's pushes present the old
/// lease, which is live on the team ledger. Spawn writes a stamp under the slot's lock, so the
/// stamp is read again and rewritten under that lock, and nothing changes it in between.
fn restamp(copied: &mut Copied, found: Found) {
    let locked = crate::git::link::common_dir_of(&found.admin)
        .ok_or_else(|| format!("{} is not a linked worktree's", found.admin.display()))
        .and_then(|common| SlotLock::acquire(&common, &found.slot).map_err(|e| e.to_string()));
    let _lock = match locked {
        Ok(lock) => lock,
        Err(why) => return copied.unstamped.push((found.slot, why)),
    };
    // Read where the slot's `.git` leads now: a slot made again has a new admin dir.
    let now = crate::git::link::admin_dir_of(&found.slot)
        .map_err(|e| e.to_string())
        .and_then(|admin| match stamp::read(&admin) {
            Ok(stamp) => Ok((admin, stamp)),
            Err(e) => Err(e.to_string()),
        });
    // The stamp as written holds the URL without its password: compared as it is printed.
    let moved_by_another = |now: &Stamp| {
        now.lease_id == found.stamp.lease_id
            && now.token == found.stamp.token
            && now.task == found.stamp.task
            && matches!(&now.ledger, Place::Server(_))
            && now.ledger.to_string() == Place::Server(copied.to.clone()).to_string()
    };
    let admin = match now {
        Ok((admin, Some(now))) if now == found.stamp => admin,
        // A copy run at the same time got here first and moved this very stamp: nothing was
        // leased again, so no warning (issue 22 item 10: the loser warned for every slot).
        Ok((_, Some(now))) if moved_by_another(&now) => return copied.restamped.push(found.slot),
        Ok((_, now)) => {
            return copied.changed.push(Changed {
                slot: found.slot,
                read: found.stamp.task,
                now,
            });
        }
        Err(why) => return copied.unstamped.push((found.slot, why)),
    };
    let moved = Stamp {
        ledger: Place::Server(copied.to.clone()),
        ..found.stamp
    };
    match stamp::write(&admin, &moved) {
        Ok(()) => copied.restamped.push(found.slot),
        Err(e) => copied.unstamped.push((found.slot, e.to_string())),
    }
}

/// The refusal of a copy: each conflict, and that nothing was changed on either side.
fn refused(found: &[Conflict], from: &Path, to: &ServerUrl) -> Error {
    PlaceError::CopyRefused {
        conflicts: found.to_vec(),
        from: from.to_path_buf(),
        to: to.to_string(),
    }
    .into()
}
