//! `git hand ledger copy --to <url>`: this machine's file ledger copied into a team ledger.

use std::path::PathBuf;

use clap::Subcommand;
use serde::Serialize;

use super::output::say;
use super::{Done, Failure, Kind};
use crate::hint::Hint;
use crate::ledger::Task;
use crate::ledger::server::{ServerError, ServerUrl, is_server_url};
use crate::ops::Context;
use crate::ops::ledger_place::ledger_copy::{self, Changed, Copied};

#[derive(Debug, Subcommand)]
pub enum LedgerCommand {
    /// Copy this machine's ledger (live tasks, their leases and slots, ended leases, every last
    /// token) into a team ledger; the file is left as it was.
    Copy {
        /// The team ledger: a postgres:// (or postgresql://) URL.
        #[arg(long, value_name = "url")]
        to: String,
    },
}

pub fn run(ctx: &Context, cmd: LedgerCommand, json: bool) -> Result<Done, Failure> {
    let LedgerCommand::Copy { to } = cmd;
    let url = team_url(&to)?;
    let copied = ledger_copy::copy(ctx, &url)?;
    if !copied.unstamped.is_empty() {
        say(copied.unstamped.iter().map(|(slot, why)| {
            format!(
                "warning: the stamp in {} still names {} ({why}); run git hand ledger copy \
                 again",
                slot.display(),
                copied.from.display()
            )
        }));
    }
    say(copied.changed.iter().map(|c| changed_text(c, &copied)));
    if json {
        return Done::json(&CopyJson::of(&copied), None);
    }
    Ok(Done::ok(text(&copied)))
}

/// The warning for a slot leased again while the copy ran: its stamp was left as it is.
fn changed_text(c: &Changed, copied: &Copied) -> String {
    let left = match &c.now {
        Some(now) if now.ledger.is_file(&copied.from) => format!(
            "its stamp was left as it is: task {} stays on the file ledger {}",
            now.task, now.ledger
        ),
        Some(now) => format!(
            "its stamp was left as it is: task {} stays on the ledger {}",
            now.task, now.ledger
        ),
        None => "it has no stamp now".to_string(),
    };
    format!(
        "warning: slot {} was leased again while the copy ran ({left}); the team ledger has \
         task {} there, as this ledger had it when the copy read it",
        c.slot.display(),
        c.read
    )
}

/// `--to`: a team ledger URL, parsed before anything is opened (a usage error otherwise, which
/// names the part that does not parse and never the password).
fn team_url(to: &str) -> Result<ServerUrl, Failure> {
    if !is_server_url(to) {
        return Err(Failure::new(
            Kind::Usage,
            "--to takes a team ledger's postgres:// (or postgresql://) URL; nothing was changed",
        )
        .hint(Hint::hand(
            "ledger copy --to 'postgres://hand@db.example:5432/hand'",
        )));
    }
    ServerUrl::parse(to).map_err(|e| {
        let e = ServerError::Url(e);
        let failure = Failure::new(Kind::Usage, e.to_string());
        match e.hint() {
            Some(hint) => failure.hint(hint),
            None => failure,
        }
    })
}

/// The command that points git-hand at the team ledger (its URL without the password).
fn next_command(c: &Copied) -> String {
    let url = crate::hooks::shim::sh_quote(&c.to.to_string());
    format!("git config --global hand.ledger {url}")
}

fn text(c: &Copied) -> String {
    let i = &c.imported;
    let names = |tasks: &[Task]| {
        tasks
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = format!(
        "copied the ledger {} into the team ledger {} as machine {}\n",
        c.from.display(),
        c.to,
        c.machine
    );
    out += &format!(
        "  tasks:  {} copied{}\n",
        i.copied.len(),
        match i.copied.is_empty() {
            true => String::new(),
            false => format!(" ({})", names(&i.copied)),
        }
    );
    if !i.already.is_empty() {
        out += &format!(
            "          {} there already ({})\n",
            i.already.len(),
            names(&i.already)
        );
    }
    out += &format!(
        "  leases: {} copied with their lease ids and tokens; {} recorded; {} raised\n",
        i.tenures,
        count(i.slots, "slot", "slots"),
        count(i.tokens_raised, "last token", "last tokens"),
    );
    if i.ended > 0 {
        out += &format!(
            "  ended:  {} and {} copied: a process still presenting one is refused there as \
             it is here\n",
            count(i.ended, "ended lease", "ended leases"),
            count(i.done_tasks, "done task", "done tasks"),
        );
    }
    out += &format!("  stamps: {} now name the team ledger\n", c.restamped.len());
    out += &format!(
        "The ledger file {} is unchanged (its event log stays there). Point git-hand at the \
         team ledger:\n  {}\n",
        c.from.display(),
        next_command(c)
    );
    if c.to.password.is_some() {
        out += "  (the password is not shown: put it in ~/.pgpass, docs/team.md)\n";
    }
    out
}

/// The JSON of `ledger copy` (docs/cli.md).
#[derive(Serialize)]
struct CopyJson<'a> {
    from: &'a PathBuf,
    to: String,
    machine: &'a str,
    copied: Vec<TaskJson<'a>>,
    already: Vec<TaskJson<'a>>,
    leases: usize,
    ended_leases: usize,
    done_tasks: usize,
    slots: usize,
    tokens_raised: usize,
    restamped: &'a [PathBuf],
    next: String,
}

#[derive(Serialize)]
struct TaskJson<'a> {
    task: &'a str,
    branch: &'a str,
    slot_path: Option<&'a str>,
    lease_id: Option<String>,
    issue: Option<&'a str>,
    issue_lease_id: Option<String>,
    holder: &'a str,
}

impl<'a> TaskJson<'a> {
    fn of(t: &'a Task) -> Self {
        Self {
            task: &t.name,
            branch: &t.branch,
            slot_path: t.slot_path.as_ref().map(|p| p.as_str()),
            lease_id: t.lease_id.as_ref().map(ToString::to_string),
            issue: t.issue.as_deref(),
            issue_lease_id: t.issue_lease_id.as_ref().map(ToString::to_string),
            holder: &t.holder,
        }
    }
}

impl<'a> CopyJson<'a> {
    fn of(c: &'a Copied) -> Self {
        let i = &c.imported;
        Self {
            from: &c.from,
            to: c.to.to_string(),
            machine: &c.machine,
            copied: i.copied.iter().map(TaskJson::of).collect(),
            already: i.already.iter().map(TaskJson::of).collect(),
            leases: i.tenures,
            ended_leases: i.ended,
            done_tasks: i.done_tasks,
            slots: i.slots,
            tokens_raised: i.tokens_raised,
            restamped: &c.restamped,
            next: next_command(c),
        }
    }
}

/// `1 slot`, `2 slots`.
fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
