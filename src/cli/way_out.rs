//! The way out of each typed error an operation returns: the operation says what happened (the
//! error's facts, its message and its kind, which picks the exit code), this says which
//! commands get the user out of it.

use std::path::Path;

use super::error::Failure;
use crate::hint::{Hint, cd_to_slot, say};
use crate::hooks::shim::sh_quote;
use crate::ledger::{Conflict, Fate};
use crate::ops::claude::ClaudeError;
use crate::ops::context::ContextError;
use crate::ops::doctor::DoctorError;
use crate::ops::ledger_place::{PlaceError, worktree_of};
use crate::ops::on_hook::OnHookError;
use crate::ops::pool::{DEFAULT_ROOT, PoolError};
use crate::ops::repo::names::NameError;
use crate::ops::repo::{RepoError, Skip};
use crate::ops::task::spawn::{OtherTask, SpawnError};
use crate::ops::task::{TaskError, TeardownError};

/// `From` each typed error for the failure the command line prints: the error's kind and
/// message, and its way out (the function named beside it).
macro_rules! way_out {
    ($($ty:ty => $hints:ident),+ $(,)?) => {$(
        impl From<$ty> for Failure {
            fn from(e: $ty) -> Self {
                Failure {
                    kind: e.kind(),
                    hints: $hints(&e),
                    message: e.to_string(),
                }
            }
        }
    )+};
}

way_out! {
    TaskError => task,
    TeardownError => teardown,
    NameError => name,
    PoolError => pool,
    SpawnError => spawn,
    ClaudeError => claude,
    DoctorError => doctor,
    OnHookError => on_hook,
    ContextError => context,
    PlaceError => place,
    RepoError => repo,
}

/// The way out of a [`TaskError`].
fn task(e: &TaskError) -> Vec<Hint> {
    match e {
        TaskError::SlotNotOnDisk { .. } => {
            vec![Hint::hand("doctor --repair").why("settles a task whose slot is gone")]
        }
        TaskError::NoSuchTask { .. } | TaskError::NoOpenTask { .. } => {
            vec![Hint::hand("list")]
        }
        TaskError::Done { name, .. } => {
            vec![Hint::hand(format!("spawn {name}")).why("to work on it again")]
        }
        TaskError::NoTasksHere => vec![Hint::hand("spawn <task>")],
        TaskError::NotASlot
        | TaskError::CredentialUnreadable { .. }
        | TaskError::NoTaskHolds { .. } => vec![Hint::hand("list")],
        TaskError::CredentialOfAnotherSlot { task, ending: true } => {
            vec![Hint::hand(format!("done {task}"))]
        }
        TaskError::CredentialOfAnotherSlot {
            task,
            ending: false,
        } => vec![Hint::run(cd_to_slot(task)).why("its slot")],
        TaskError::NoLeaseId { task } => vec![Hint::hand(format!("teardown {task}"))],
        TaskError::IssueLeaseLost { task, .. } => {
            vec![Hint::hand(format!("teardown {task}"))]
        }
        TaskError::LeaseLost { task, branch, .. } => {
            vec![Hint::hand(format!("teardown {task}")).why(format!("commits stay on {branch}"))]
        }
        TaskError::LeaseUnknown { task } => {
            vec![Hint::hand(format!("teardown {task}")).why("then spawn it again")]
        }
        TaskError::NotInLog { name, this_repo } => {
            let mut hints = vec![Hint::hand("list --all").why("the tasks it has had")];
            if *this_repo {
                hints.push(Hint::hand(format!("log --all-repos --task {name}")));
            }
            hints
        }
        TaskError::ExecNeedsCommand { task } => {
            vec![Hint::hand(format!("spawn {task} --exec -- $SHELL"))]
        }
        TaskError::CannotExec { task, .. } | TaskError::ExecWaitFailed { task, .. } => {
            vec![Hint::hand(format!("teardown {task}")).why("the task stays active until then")]
        }
        TaskError::NotASessionId { .. } => {
            vec![Hint::hand("list").why("the SESSION of each Claude Code session's task (--long)")]
        }
        TaskError::SessionHasNoTask { .. } => {
            vec![Hint::hand("list").why("the tasks of Claude Code sessions name their session")]
        }
        TaskError::SessionHasTasks { tasks, .. } => tasks
            .iter()
            .map(|(task, asked)| {
                Hint::hand(format!("path {task}"))
                    .why(format!("worktree {}", crate::shown::shown(asked)))
            })
            .collect(),
    }
}

/// The way out of a [`TeardownError`].
fn teardown(e: &TeardownError) -> Vec<Hint> {
    match e {
        TeardownError::NoSuchTask { .. } => vec![Hint::hand("list --all")],
        TeardownError::StillSpawning { .. } => {
            vec![Hint::hand("doctor --repair").why("settles a crashed spawn")]
        }
        TeardownError::InProgress { task, .. } => vec![
            Hint::run(say("wait for it to finish, then: ").hand("list --all")),
            Hint::hand(format!("teardown {task}"))
                .why("again, if that process dies before it is done"),
        ],
        TeardownError::OnTeardownFailed { task, .. } => vec![
            Hint::hand(format!("teardown {task}")).why("again, once it is fixed"),
            Hint::hand(format!("teardown {task} --no-setup")).why("or without hand.onTeardown"),
        ],
        TeardownError::CutOff { task, .. } => {
            vec![
                Hint::hand(format!("teardown {task}"))
                    .why("again once the server answers: it resumes where this one stopped"),
            ]
        }
        TeardownError::Branchless { task, slot, .. } => vec![
            Hint::run(format!(
                "git -C {} branch rescue/{task} HEAD",
                slot.display()
            ))
            .why("keep them, then teardown again"),
        ],
        TeardownError::CannotProve { slot, .. } => {
            vec![Hint::run(format!("git -C {} status", slot.display()))]
        }
        TeardownError::NotLanded {
            task,
            branch,
            slot,
            dirty,
            unlanded,
        } => not_landed_hints(task, branch, slot, dirty, unlanded),
    }
}

/// The way out of a [`NameError`].
fn name(e: &NameError) -> Vec<Hint> {
    let mut hints = vec![match e {
        NameError::Task { .. } => Hint::hand("spawn fix-login"),
        NameError::Issue { .. } => Hint::hand("lease acquire 42"),
        NameError::Branch { .. } | NameError::DefaultBranch { .. } => {
            Hint::run("--branch feature/login").why("see git help check-ref-format")
        }
        NameError::Holder { .. } => {
            Hint::run("--holder alice@laptop").why("or set GIT_HAND_HOLDER")
        }
        NameError::LeaseId { .. } => {
            Hint::hand("lease current <issue>").why("shows the live lease id")
        }
        NameError::Path { fix, .. } => Hint::run(fix.clone()),
    }];
    // The branch spawn named by default: a name of the user's own gets past it.
    if let NameError::DefaultBranch { task, .. } = e {
        let dashed = task.replace('.', "-");
        hints.push(Hint::hand(format!("spawn {task} --branch hand/{dashed}")));
    }
    hints
}

/// The way out of a [`PoolError`].
fn pool(e: &PoolError) -> Vec<Hint> {
    let writable = |dir: &Path| {
        Hint::run(format!(
            "check that {} is writable, then run the same command again",
            dir.display()
        ))
    };
    match e {
        PoolError::NoRoot => vec![Hint::run(format!("git config hand.root {DEFAULT_ROOT}"))],
        PoolError::CannotCreateDir { .. } => {
            vec![Hint::run("git config hand.root /a/writable/dir")]
        }
        PoolError::CannotRemove { path, .. } => {
            vec![Hint::run(format!("ls -la {}", path.display()))]
        }
        PoolError::WorktreeListUnlockable { dir, .. } | PoolError::SlotUnlockable { dir, .. } => {
            vec![writable(dir)]
        }
        PoolError::NoLongerHeld { .. } => vec![Hint::hand("list").why("who has which slot")],
        PoolError::NotCleanAfterReset { slot, .. } => {
            vec![Hint::run(format!("git -C {} status", slot.display()))]
        }
        PoolError::NotTheSlot(_) => vec![
            Hint::hand("doctor").why(
                say("reports it; ")
                    .hand("doctor --repair")
                    .text(" sets it aside"),
            ),
        ],
        PoolError::StampUnreadable { stamp, .. } => vec![
            Hint::run(format!("rm {}", stamp.display())).why(
                say("then present the credential: eval \"$(")
                    .hand("env <task>")
                    .text(")\""),
            ),
        ],
        PoolError::LedgerGone { ledger, stamp } => vec![
            Hint::run(format!(
                "put {ledger} back (the stamp {} names it)",
                stamp.display()
            )),
            Hint::hand("spawn <task>-rescue --base HEAD").why("or continue under a new lease"),
        ],
        PoolError::HooksNotCopied { slot, .. } => {
            vec![Hint::run(format!("ls -ld {}", slot.display())).why("who may write there?")]
        }
        PoolError::RelativeHooksPathUntracked { rel, hooks_dir } => vec![
            Hint::run(format!("echo '/{rel}/' >> .gitignore"))
                .why("and commit it: the copy is then ignored"),
            Hint::run(format!("git config core.hooksPath {}", hooks_dir.display()))
                .why("or one directory for every worktree"),
        ],
    }
}

/// The way out of a [`SpawnError`].
fn spawn(e: &SpawnError) -> Vec<Hint> {
    match e {
        SpawnError::BranchCaseTwin {
            task,
            branch,
            twin,
            owner,
            named,
        } => vec![
            if *named {
                Hint::hand(format!("spawn {task} --branch {branch}-2"))
                    .why("work on another branch")
            } else {
                Hint::hand(format!("spawn {task}-2")).why("work under another name")
            },
            match owner {
                Some(owner) => {
                    Hint::hand(format!("teardown {owner}")).why("or end that task first")
                }
                None => Hint::hand(format!("spawn {task} --branch {twin}"))
                    .why("or continue that branch"),
            },
        ],
        SpawnError::TaskCaseTwin { task, other } => vec![
            Hint::hand(format!("spawn {task}-2")).why("work under another name"),
            end_it(other, "or end that task first"),
        ],
        SpawnError::LiveElsewhere {
            task,
            machine,
            holder,
            ..
        } => vec![
            ask_to_end(task, machine, holder),
            Hint::hand(format!("spawn {task}-2")).why("or work under another name"),
        ],
        SpawnError::BranchTaken { other, .. } => vec![end_it(other, "end that task first")],
        SpawnError::IssueHeld { issue, .. } => {
            vec![Hint::hand(format!("lease current {issue}"))]
        }
        SpawnError::SlotsRaced => {
            vec![Hint::run(say("run the same ").hand("spawn").text(" again"))]
        }
        SpawnError::PoolFull { .. } => vec![
            Hint::hand("list").why("which tasks hold slots"),
            Hint::hand("teardown <task>").why("free one"),
            Hint::run("git config hand.maxSlots 32"),
        ],
        SpawnError::BranchExists { task, branch } => vec![
            Hint::hand(format!("spawn {task} --branch {branch}")).why("continue that branch"),
            Hint::hand(format!("spawn {task} --branch hand/{task}-2")).why("or start a new one"),
        ],
        SpawnError::BranchCheckedOut { dir, .. } => vec![
            Hint::hand("list").why("which task has it"),
            Hint::run(format!("git -C {} switch --detach", dir.display()))
                .why("free the branch there"),
        ],
        SpawnError::CannotCreateDir { .. } => vec![],
        SpawnError::NotActive { .. } => {
            vec![Hint::hand("doctor --repair").why("settles a crashed spawn or teardown")]
        }
        SpawnError::HeldByAnother { task, holder, .. } => vec![
            Hint::run(say(format!("ask {holder} to run: ")).hand(format!("teardown {task}"))),
            Hint::hand(format!("spawn {task}-2")).why("or work under another name"),
        ],
        SpawnError::LeaseLost { task, branch } => {
            vec![Hint::hand(format!("teardown {task}")).why(format!("commits stay on {branch}"))]
        }
        SpawnError::SettledMeanwhile { task } => {
            vec![Hint::hand(format!("spawn {task}")).why("start it again")]
        }
        SpawnError::CutAfterIntent { task, .. } => vec![
            Hint::hand("doctor --repair")
                .why("once the server answers: releases the task's leases and ends it"),
            Hint::hand(format!("spawn {task}")).why("then again"),
        ],
        SpawnError::CutAfterReady {
            task,
            fate: Fate::NothingWritten,
            ..
        } => vec![
            Hint::hand("doctor --repair")
                .why("once the server answers: puts the slot back and ends the task"),
            Hint::hand(format!("spawn {task}")).why("then again"),
        ],
        SpawnError::CutAfterReady {
            task,
            fate: Fate::Unknown,
            ..
        } => vec![
            Hint::hand("list").why("once the server answers: whether the task is active"),
            Hint::hand(format!("spawn {task}")).why("if it is active: hands it back"),
            Hint::hand("doctor --repair").why(
                "if it is still spawning: puts the slot back and ends the task, then spawn \
                 again",
            ),
        ],
        SpawnError::NotPutBack { .. } => {
            vec![Hint::hand("doctor --repair").why("puts the slot back and ends the task")]
        }
        SpawnError::Undone { task, setup, .. } => {
            let mut hints = vec![
                Hint::hand(format!("spawn {task}")).why(
                    say("try again; ")
                        .hand("doctor")
                        .text(" if it keeps failing"),
                ),
            ];
            if *setup {
                hints.push(
                    Hint::hand(format!("spawn {task} --no-setup")).why("without the setup command"),
                );
            }
            hints
        }
    }
}

/// The way to end `other`: here, by name; on another machine, by asking its holder there.
fn end_it(other: &OtherTask, why: &str) -> Hint {
    match &other.elsewhere {
        None => Hint::hand(format!("teardown {}", other.name)).why(why.to_string()),
        Some((machine, holder)) => ask_to_end(&other.name, machine, holder),
    }
}

/// Ask the holder of `task`, a task of another machine, to end it there.
fn ask_to_end(task: &str, machine: &str, holder: &str) -> Hint {
    Hint::run(say(format!("ask {holder} to run on {machine}: ")).hand(format!("teardown {task}")))
}

/// The way out of a [`ClaudeError`].
fn claude(e: &ClaudeError) -> Vec<Hint> {
    match e {
        ClaudeError::BadInput { .. } => vec![
            Hint::hand("install --claude").why("the hook entries git-hand expects to be run by"),
        ],
        ClaudeError::NoName => {
            vec![Hint::run("claude -w <name>").why("Claude Code sends the name it was given")]
        }
        ClaudeError::DeceptiveName { .. } => vec![
            Hint::run("claude -w <name>")
                .why("letters, digits, - and _ make a name that reads well"),
        ],
        ClaudeError::EveryNameTaken { .. } => {
            vec![Hint::hand("list").why("the tasks that hold them")]
        }
        ClaudeError::StillAtWork { .. } => vec![
            Hint::run("let it finish, then ask again"),
            Hint::hand("doctor --repair").why("if its process is gone"),
        ],
        ClaudeError::EverySlotInSession { .. } => {
            vec![Hint::run("claude -w <another-name>")]
        }
        ClaudeError::NoWorktreePath
        | ClaudeError::EnvFileUnwritable { .. }
        | ClaudeError::ExcludeUnwritable { .. } => vec![],
    }
}

/// The way out of a [`DoctorError`].
fn doctor(e: &DoctorError) -> Vec<Hint> {
    match e {
        DoctorError::LedgerAppeared { .. } => {
            vec![Hint::hand("doctor").why("look at the ledger that is there now")]
        }
        DoctorError::BackupOfServer { url } => vec![
            Hint::run(format!("pg_dump --dbname='{url}' > ledger.sql"))
                .why("the server's own backup"),
        ],
        DoctorError::BackupTargetExists { .. } => {
            vec![Hint::hand("doctor --backup <a new path>")]
        }
        DoctorError::CannotSetAside { path, .. } => {
            vec![Hint::run(format!("ls -la {path}")).why("then move it out of the pool by hand")]
        }
        DoctorError::NoLedgerToBackUp { .. } | DoctorError::CannotMarkSlots { .. } => vec![],
    }
}

/// The commands that get a teardown refused for unlanded work going, one per cause: changes
/// are committed or discarded, commits are pushed. Untracked files alone are usually scratch:
/// their hints look at them, commit them, set them aside or discard them, and never say push
/// (issues 11 and 13).
fn not_landed_hints(
    task: &str,
    branch: &str,
    slot: &Path,
    dirty: &[String],
    unlanded: &[String],
) -> Vec<Hint> {
    let p = slot.display();
    let untracked_only = !dirty.is_empty() && dirty.iter().all(|f| f.starts_with("??"));
    let mut hints = vec![];
    if untracked_only {
        hints.push(
            Hint::run(format!("git -C {p} status"))
                .why("see the untracked files; delete the ones you do not need"),
        );
        hints.push(
            Hint::run(format!(
                "git -C {p} add -A && git -C {p} commit -m <message>"
            ))
            .why(format!("or keep them as a commit on {branch}")),
        );
        hints.push(
            Hint::run(format!("git -C {p} stash --include-untracked"))
                .why("or set them aside (git stash pop brings them back)"),
        );
    } else if !dirty.is_empty() {
        hints.push(
            Hint::run(format!(
                "git -C {p} add -A && git -C {p} commit -m <message>"
            ))
            .why("keep the changes as a commit, then push it"),
        );
    }
    if !unlanded.is_empty() {
        hints
            .push(Hint::run(format!("git -C {p} push -u origin {branch}")).why("land the commits"));
    }
    if untracked_only {
        hints.push(Hint::hand(format!("teardown {task} --force")).why(format!(
            "discard the untracked files (ignored ones stay); commits stay on {branch}"
        )));
    } else if !dirty.is_empty() {
        hints.push(Hint::hand(format!("teardown {task} --force")).why(format!(
            "discard uncommitted and untracked files (ignored ones stay); commits stay on {branch}"
        )));
    } else {
        hints.push(Hint::hand(format!("teardown {task} --force")).why(format!(
            "end the task anyway; the commits stay on local branch {branch}"
        )));
    }
    hints
}

/// The way out of an [`OnHookError`].
fn on_hook(e: &OnHookError) -> Vec<Hint> {
    match e {
        OnHookError::BadRequireLease { bad, common } => vec![bad.hint(common)],
        OnHookError::NoServerLedger { common, .. } => vec![Hint::run(format!(
            "git -C {} config hand.ledger <the clients' ledger>",
            common.display()
        ))],
        OnHookError::UnresolvedRef { .. } | OnHookError::Unread { .. } => vec![],
        OnHookError::BranchOfLiveTask { owner, .. } => vec![
            Hint::run("git switch -c <new-branch>").why("work here on a branch of its own"),
            Hint::run(cd_to_slot(owner)).why("or work in the task's own slot"),
        ],
        OnHookError::AdoptedUnstamped { name, .. } => vec![
            Hint::run(crate::hint::present_credential(name)).why("its pushes need the credential"),
            Hint::hand(format!("teardown {name}")).why("or end the lease"),
        ],
    }
}

/// The way out of a [`ContextError`].
fn context(e: &ContextError) -> Vec<Hint> {
    match e {
        ContextError::NoRepo(e) => vec![e.hint()],
        ContextError::NoStateDir => {
            vec![Hint::run("export GIT_HAND_LEDGER=/path/to/ledger.sqlite")]
        }
        ContextError::BadUrl(e) => e.hint().into_iter().collect(),
        ContextError::NoMachineId { hostname } => vec![Hint::run(format!(
            "git config --global hand.machine {hostname}"
        ))],
        ContextError::ServerNamesNoLedger { common } => vec![Hint::run(format!(
            "git -C {} config hand.ledger <the clients' ledger: a path or a postgres:// URL>",
            common.display()
        ))],
        ContextError::PusherNamesAnother { .. } => vec![],
    }
}

/// The way out of a [`PlaceError`].
fn place(e: &PlaceError) -> Vec<Hint> {
    match e {
        PlaceError::CopyFromServer { .. } => vec![Hint::run(
            say("GIT_HAND_LEDGER=/path/to/ledger.sqlite ").hand("ledger copy --to <url>"),
        )],
        PlaceError::NothingToCopy { to, .. } => vec![
            Hint::run(format!("git config --global hand.ledger {}", sh_quote(to)))
                .why("start on the team ledger"),
        ],
        PlaceError::CopyRefused { conflicts, to, .. } => {
            let mut hints = vec![];
            for conflict in conflicts {
                let hint = copy_conflict(conflict, to);
                if !hints.contains(&hint) {
                    hints.push(hint);
                }
            }
            hints
        }
        PlaceError::LedgerMissing { ledger, .. } => vec![
            Hint::run(format!(
                "put {} back from a backup (with its -wal file, if it had one)",
                ledger.display()
            )),
            Hint::hand("doctor --repair")
                .why("builds a new ledger that knows these slots and continues their tokens"),
        ],
    }
}

/// The way past one thing in a ledger copy's way (`to`: the team ledger).
fn copy_conflict(conflict: &Conflict, to: &str) -> Hint {
    match conflict {
        Conflict::Held { holder, .. } | Conflict::TaskOpen { holder, .. } => Hint::run(
            say(format!("ask {holder} to end it on the team ledger, or "))
                .hand("teardown <task>")
                .text(" here first; then run ")
                .hand("ledger copy")
                .text(" again"),
        ),
        Conflict::TokensAhead { .. } => {
            Hint::hand("teardown <task>").why("here, then spawn it again on the team ledger")
        }
        Conflict::Unsettled { .. } => Hint::hand("doctor --repair").why("settle it first"),
        Conflict::SlotNumber { repo, .. } => Hint::run(
            say(format!(
                "cd {} && GIT_HAND_LEDGER={} ",
                worktree_of(repo),
                sh_quote(to)
            ))
            .hand("list --json"),
        )
        .why("this machine's tasks and free slots there, with their paths"),
    }
}

/// The way out of a [`RepoError`].
fn repo(e: &RepoError) -> Vec<Hint> {
    match e {
        RepoError::BaseNotACommit { .. } => {
            vec![Hint::run("git log --oneline -5").why("pick a commit, or pass a branch name")]
        }
        RepoError::NoDefaultBranch => vec![Hint::hand("spawn <task> --base <branch>")],
        RepoError::DefaultBranchUnborn { .. } => {
            vec![Hint::run("commit something first, or pass --base <rev>")]
        }
        RepoError::NoCommits => vec![
            Hint::run("git commit --allow-empty -m \"first commit\"")
                .why(say("or add your files and commit them; then: ").hand("spawn <task>")),
        ],
        RepoError::Untrusted { file, skip, .. } => {
            let mut hints = vec![
                Hint::run(format!("cat -v {file}")).why("read what it runs"),
                Hint::hand("trust").why("then approve this exact content"),
            ];
            hints.extend(skip.as_ref().map(|skip| {
                let verb = match skip {
                    Skip::Spawn { task } => format!("spawn {task} --no-setup"),
                    Skip::Teardown { task } => format!("teardown {task} --no-setup"),
                };
                Hint::hand(verb).why("or go on without setup commands")
            }));
            hints
        }
        RepoError::NoApprovalsDir
        | RepoError::ApprovalUnreadable { .. }
        | RepoError::ApprovalUnwritten { .. }
        | RepoError::RequireCredentialUnread(_)
        | RepoError::CannotMarkSlots { .. } => vec![],
    }
}
