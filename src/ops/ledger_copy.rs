//! `git hand ledger copy --to <url>`: moving this machine's file ledger into a team ledger
//! without losing what makes it safe (docs/team.md, "Moving a laptop's ledger in").
//!
//! One read of the file ledger (`View::export`), one transaction on the team ledger
//! (`Tx::import`: everything or nothing; refused whole when something is in the way), then the
//! stamps of the copied tasks' slots are pointed at the team ledger, so the pre-push hook,
//! which checks the ledger a stamp names, checks the team ledger. The file ledger is only read:
//! it stays as it was, for the user to keep or delete.

use std::path::{Path, PathBuf};

use super::stamp::{self, Stamp};
use super::{Context, Error, Result};
use crate::ledger::server::ServerUrl;
use crate::ledger::{Conflict, Imported, Ledger, Place, Task};

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
}

/// Copies the configured file ledger into the team ledger at `to`, as this machine.
pub fn copy(ctx: &Context, to: &ServerUrl) -> Result<Copied> {
    let from = match ctx.ledger_location()?.place {
        Place::File(path) => path,
        Place::Server(url) => {
            return Err(Error::usage(format!(
                "the configured ledger is already the team ledger {url}: there is no file \
                 ledger to copy"
            ))
            .with_hint("GIT_HAND_LEDGER=/path/to/ledger.sqlite git hand ledger copy --to <url>"));
        }
    };
    let Some(mut file) = Ledger::open_existing(&from)? else {
        return Err(Error::precondition(
            format!(
                "there is no ledger at {}: nothing to copy; nothing was changed",
                from.display()
            ),
            vec![format!(
                "git config --global hand.ledger '{to}'   # start on the team ledger"
            )],
        ));
    };
    let export = file.read(|view| view.export())?;
    let machine = ctx.machine()?;
    let mut team = Ledger::open_team(to, None)?.on_machine(&machine);
    ctx.note(team.take_notices());
    let label = from.display().to_string();
    let imported = team
        .write(|tx| tx.import(&export, &label))?
        .map_err(|found| refused(&found, &from))?;
    let mut copied = Copied {
        from,
        to: to.clone(),
        machine,
        imported,
        restamped: vec![],
        unstamped: vec![],
    };
    let tasks: Vec<Task> = copied
        .imported
        .copied
        .iter()
        .chain(&copied.imported.already)
        .cloned()
        .collect();
    for task in &tasks {
        restamp(&mut copied, task);
    }
    Ok(copied)
}

/// Points the stamp in `task`'s slot at the team ledger, when it names the task's slot lease
/// and the copied file ledger (a stamp of another tenure is left alone: it is judged as before).
fn restamp(copied: &mut Copied, task: &Task) {
    let Some(slot) = &task.slot_path else { return };
    let slot = Path::new(slot.as_str());
    let admin = match crate::git::link::admin_dir_of(slot) {
        Ok(admin) => admin,
        Err(e) => return copied.unstamped.push((slot.to_path_buf(), e.to_string())),
    };
    let found = match stamp::read(&admin) {
        Ok(Some(found)) => found,
        Ok(None) => return,
        Err(e) => return copied.unstamped.push((slot.to_path_buf(), e.to_string())),
    };
    let ours = Some(&found.lease_id) == task.lease_id.as_ref()
        && found.ledger == Place::File(copied.from.clone());
    if !ours {
        return;
    }
    let moved = Stamp {
        ledger: Place::Server(copied.to.clone()),
        ..found
    };
    match stamp::write(&admin, &moved) {
        Ok(()) => copied.restamped.push(slot.to_path_buf()),
        Err(e) => copied.unstamped.push((slot.to_path_buf(), e.to_string())),
    }
}

/// The refusal of a copy: each conflict, and that nothing was changed on either side.
fn refused(found: &[Conflict], from: &Path) -> Error {
    let mut message = String::from("cannot copy the ledger into the team ledger: ");
    let reasons: Vec<String> = found.iter().map(conflict_text).collect();
    message.push_str(&reasons.join("; "));
    message.push_str(&format!(
        "; nothing was changed (the ledger {} is as it was)",
        from.display()
    ));
    let mut hints = vec![];
    for conflict in found {
        let hint = match conflict {
            Conflict::Held { holder, .. } | Conflict::TaskOpen { holder, .. } => format!(
                "ask {holder} to end it on the team ledger, or git hand teardown <task> here \
                 first; then run git hand ledger copy again"
            ),
            Conflict::TokensAhead { .. } => {
                "git hand teardown <task>   # here, then spawn it again on the team ledger".into()
            }
            Conflict::Unsettled { .. } => "git hand doctor --repair   # settle it first".into(),
        };
        if !hints.contains(&hint) {
            hints.push(hint);
        }
    }
    Error::precondition(message, hints)
}

fn conflict_text(c: &Conflict) -> String {
    match c {
        Conflict::Held {
            key,
            holder,
            machine,
        } => match machine {
            Some(m) => format!("{key} is held on the team ledger by {holder} on machine {m}"),
            None => format!("{key} is held on the team ledger by {holder}"),
        },
        Conflict::TokensAhead { key, team, ours } => format!(
            "the team ledger has handed out token {team} of {key}, past this ledger's live \
             lease (token {ours}), which therefore cannot keep its token there"
        ),
        Conflict::TaskOpen {
            task,
            what,
            holder,
            machine,
        } => format!(
            "{what} (of task {task}) is open on the team ledger on machine {machine}, held by \
             {holder}"
        ),
        Conflict::Unsettled { task, state } => {
            format!("task {task} is {state}, neither active nor done")
        }
    }
}
