//! The words of a refusal: what the pre-push hook, the reference-transaction hook, `check` and
//! `status` print when a push or a ref update is (or would be) refused. `ops::on_hook` decides and
//! returns the facts; the sentences are built here.

use super::{Failure, Kind};
use crate::clock::relative;
use crate::hint::Hint;
use crate::ids;
use crate::ledger::{Task, TaskState, Tenure};
use crate::ops::fence::verdict::{Finding, Verdict};
use crate::ops::on_hook::{PrePush, Refusal, Said};

/// The lines a refusal prints (without the `git-hand: ` prefix). They never suggest
/// `--no-verify`: coding agents retry with whatever a refusal suggests (issue 11).
pub fn lines(p: &PrePush, said: Said) -> Vec<String> {
    let Some(refusal) = &p.refusal else {
        return vec![];
    };
    let now = p.now;
    let mut lines = vec![];
    let task_of = |f: &Finding| f.task.as_ref().map(|t| t.name.clone());
    let voice = Voice::of(said);
    let refused = voice.refused;
    match refusal {
        Refusal::Verdict(f) => {
            lines.push(format!(
                "{refused} ({}): {}",
                f.verdict,
                verdict_reason(f, now, &voice)
            ));
            if f.credential_error.is_some() {
                lines.push(voice.reload.clone());
            }
            if f.verdict == Verdict::NoCredential {
                // Only the holder may take the credential: no command that prints it is handed
                // to whoever reads this, who may be a zombie that lost its own (issue 22).
                let name = task_of(f).unwrap_or_else(|| "<task>".into());
                lines.push(format!(
                    "if you hold task {name}: present the credential its spawn handed you (spawn --exec sets it) and {} again; a shell that held an older lease here holds none now",
                    if said == Said::RefUpdate {
                        "run the command"
                    } else {
                        "push"
                    }
                ));
            }
            lines.extend(keep_work_advice(p, task_of(f), said));
        }
        Refusal::Branch {
            branch,
            task,
            tenure,
        } if said == Said::RefUpdate => {
            lines.push(format!(
                "{refused}: branch {branch} belongs to live task {} (held by {}, token {}); only that task's lease may move it.",
                task.name, tenure.holder, tenure.token
            ));
            let own = p.finding.as_ref().and_then(task_of);
            lines.extend(keep_work_advice(p, own, said));
        }
        Refusal::Branch {
            branch,
            task,
            tenure,
        } => {
            lines.push(format!(
                "{refused}: branch {branch} belongs to live task {} (held by {}, token {}); only that task's lease may push it.",
                task.name, tenure.holder, tenure.token
            ));
            // Never the command that prints the live task's credential: whoever reads this
            // does not hold it, and agents follow hints (issue 22).
            lines.push(format!(
                "if you hold task {}: push it from the task's slot {}",
                task.name, voice.carried
            ));
            lines.push(ANOTHER_BRANCH.into());
        }
        Refusal::Worktree { name } => {
            lines.push(format!(
                "{refused}: {name} is another worktree's HEAD or ref; a slot's lease moves only its own worktree's HEAD and refs."
            ));
            lines.push(
                "run the command in that worktree instead, under the lease that holds it.".into(),
            );
            let own = p.finding.as_ref().and_then(task_of);
            lines.extend(keep_work_advice(p, own, said));
        }
        Refusal::LeaseRequired {
            branch,
            pattern,
            presented,
        } => lines.extend(lease_required(
            p,
            refused,
            branch,
            pattern,
            presented.as_deref(),
        )),
    }
    lines
}

/// The refusal of an unnamed `env`, `renew` or `path` (`verb`) whose caller presents a credential
/// that is not this worktree's current lease ([`crate::ops::task::tasks::this_task`]): the verdict in
/// the words a push from here would get. Nothing was changed, and nothing points at the
/// slot's holder now: a zombie follows a hint to whatever credential it names (issue 22).
pub(crate) fn not_current(f: &Finding, verb: &str) -> Failure {
    let voice = Voice::of(Said::Check);
    let by_session = f
        .credential
        .as_ref()
        .is_some_and(|c| c.source == crate::ops::fence::verdict::CredentialSource::Session);
    if by_session {
        let whose = f
            .task
            .as_ref()
            .map_or_else(String::new, |t| format!(" (task {})", t.name));
        return Failure::new(
            Kind::Precondition,
            format!(
                "git hand {verb} refused ({}): {} This Claude Code session held an earlier lease \
                 of this worktree{whose}, which belongs to another task now; nothing was changed.",
                f.verdict,
                verdict_reason(f, f.now, &voice)
            ),
        )
        .hint(Hint::run("claude -w <name>").why("a new session gets a worktree of its own"))
        .hint(Hint::hand("list").why("the task this worktree belongs to now"));
    }
    let whose = f
        .task
        .as_ref()
        .map_or_else(String::new, |t| format!(" is task {}'s", t.name));
    let mut failure = Failure::new(
        Kind::Precondition,
        format!(
            "git hand {verb} refused ({}): {} The credential in this environment{whose}; nothing was changed.",
            f.verdict,
            verdict_reason(f, f.now, &voice)
        ),
    );
    if let Some(task) = f.task.as_ref().filter(|t| t.state != TaskState::Done) {
        failure = failure.hint(
            Hint::hand(format!("teardown {}", task.name))
                .why(format!("commits stay on {}", task.branch)),
        );
    }
    failure.hint(
        Hint::run("unset GIT_HAND_LEASE GIT_HAND_TOKEN GIT_HAND_TASK")
            .why("this shell holds no lease here"),
    )
}

/// The server's `hand.requireLease` refusal: the branch, the pattern and where it is set, what
/// the push presented, and the ways out.
fn lease_required(
    p: &PrePush,
    refused: &str,
    branch: &str,
    pattern: &str,
    presented_task: Option<&Task>,
) -> Vec<String> {
    let what = match presented_task {
        None => "this push presents no lease (push options hand.lease, hand.token)".into(),
        Some(task) => format!(
            "the lease this push presents{} is task {}'s, recorded against {}, not against this repository",
            p.finding
                .as_ref()
                .and_then(presented)
                .map_or_else(String::new, |y| format!(", {y},")),
            task.name,
            task.remote.as_deref().unwrap_or("no remote")
        ),
    };
    let mut lines = vec![
        format!(
            "{refused}: branch {branch} takes only a current lease of one of this repository's tasks (hand.requireLease={pattern}, set in the repository on the server); {what}."
        ),
        format!(
            "push it from a task's slot under its credential, with hand.remoteFence on: {ENV_TASK}"
        ),
    ];
    // The server knows a repository by its own path and the URLs `hand.remoteUrl` lists: a task
    // recorded against a spelling it does not list (another host name, http for https) is this
    // repository's all the same, and the fix is one line on the server (issue 22 item 6).
    if let Some(remote) = presented_task.and_then(|t| t.remote.as_deref()) {
        lines.push(format!(
            "if {remote} is a URL of this repository: git config --add hand.remoteUrl {}   # in the repository on the server",
            crate::hooks::shim::sh_quote(remote)
        ));
    }
    lines.push(ANOTHER_BRANCH.into());
    lines
}

const ENV_TASK: &str = "eval \"$(git hand env <task>)\"";

/// The words that change with who speaks. The client's hooks and `check` speak of this worktree
/// and the environment it pushes from; the server (`Said::Receive`) of the lease a push presents
/// in its push options, which the credential carries only with `hand.remoteFence` on.
struct Voice {
    refused: &'static str,
    /// The slot a stale lease lost.
    slot: &'static str,
    /// The credential that does not parse.
    unparsed: &'static str,
    /// The way out when it does not parse.
    reload: String,
    /// The lease the ledger never granted.
    never_granted: &'static str,
    /// How a task's credential reaches its push.
    carried: &'static str,
}

impl Voice {
    fn of(said: Said) -> Self {
        let refused = match said {
            Said::Push => "push refused",
            Said::Check => "a push from here would be refused",
            Said::RefUpdate => "ref update refused",
            Said::Receive => "push refused by the remote",
        };
        if said == Said::Receive {
            return Self {
                refused,
                slot: "its slot",
                unparsed: "the lease this push presents",
                reload: format!(
                    "those options come from the credential your shell carries (with hand.remoteFence on); load it again in the task's slot: {ENV_TASK}, or push without -o hand.lease/-o hand.token"
                ),
                never_granted: "the server's ledger never granted the lease this push presents",
                carried: "under its credential, with hand.remoteFence on",
            };
        }
        Self {
            refused,
            slot: "this worktree",
            unparsed: "the credential in this environment",
            reload: format!("unset GIT_HAND_LEASE GIT_HAND_TOKEN, or set both again: {ENV_TASK}"),
            never_granted: "the ledger never granted the lease you present",
            carried: "with its credential",
        }
    }
}
const ANOTHER_BRANCH: &str =
    "or push under another name: git push origin HEAD:refs/heads/<new-branch>";

/// The credential as presented: `token 5 (lease 0123456789)`, from what the holder presented
/// (never the ledger's idea of it: a wrong token is the point of the message).
fn presented(f: &Finding) -> Option<String> {
    let c = f.credential.as_ref()?;
    let lease = ids::short(c.lease_id.as_str());
    Some(match (c.token, c.source) {
        // Found by the session id the process carries, whatever else it presented.
        (Some(t), crate::ops::fence::verdict::CredentialSource::Session) => format!(
            "this Claude Code session's own token {t} (lease {lease}, found by \
             CLAUDE_CODE_SESSION_ID)"
        ),
        (Some(t), _) => format!("token {t} (lease {lease})"),
        (None, _) => format!("lease {lease}"),
    })
}

/// Why a verdict refuses, in one sentence, in `voice`'s words.
fn verdict_reason(f: &Finding, now: i64, voice: &Voice) -> String {
    let task_of = |f: &Finding| f.task.as_ref().map(|t| t.name.clone());
    let yours = presented(f);
    let holder_now = |n: &Tenure| {
        format!(
            "{} with token {} since {}",
            n.holder,
            n.token,
            relative(n.acquired_at, now)
        )
    };
    match f.verdict {
        Verdict::Stale => {
            // The newest tenure may have ended too (a spawn that claimed the slot, found a
            // process inside and took another): then nothing holds it (issue 22).
            let now_held = match &f.newest {
                Some(n) if n.is_live(now) => format!("it is now held by {}", holder_now(n)),
                Some(n) => format!(
                    "it was since leased to {} with token {}, which no longer holds it: it is free now",
                    n.holder, n.token
                ),
                None => "it is now held by ?".into(),
            };
            format!(
                "{} was leased again. You present {}; {now_held}.",
                voice.slot,
                yours.unwrap_or_else(|| "an older lease".into())
            )
        }
        Verdict::Expired => format!(
            "your lease, {}, expired {}; an expired lease is never renewed.",
            yours.unwrap_or_else(|| "the stamped one".into()),
            f.tenure
                .as_ref()
                .and_then(|t| t.expires_at)
                .map_or_else(String::new, |e| relative(e, now))
        ),
        Verdict::Released => match yours {
            Some(yours) => format!("your lease, {yours}, was released (its task was torn down)."),
            None => "this worktree's last lease was released (its task was torn down), and this push presents no credential.".into(),
        },
        Verdict::UnknownLease => unknown_lease_reason(f, yours, holder_now, voice),
        Verdict::IssueLost => format!(
            "task {}'s issue lease is no longer its own{}.",
            task_of(f).unwrap_or_default(),
            f.issue_now.as_ref().map_or_else(String::new, |t| format!(
                " ({} holds it now, token {})",
                t.holder, t.token
            ))
        ),
        Verdict::NoCredential => format!(
            "hand.requireCredential is set and this shell carries no GIT_HAND_LEASE; the worktree is leased to task {}{}.",
            task_of(f).unwrap_or_else(|| "?".into()),
            yours.map_or_else(String::new, |y| format!(" ({y}, from its stamp)"))
        ),
        Verdict::Unmanaged | Verdict::Current => String::new(),
    }
}

/// Why `unknown-lease`: the credential does not parse, there is none, the ledger never granted
/// it, it is another worktree's, or its token is not the one granted. Says what was presented.
fn unknown_lease_reason(
    f: &Finding,
    yours: Option<String>,
    holder_now: impl Fn(&Tenure) -> String,
    voice: &Voice,
) -> String {
    let yours = yours.unwrap_or_default();
    match (&f.credential_error, &f.credential, &f.tenure) {
        (Some(why), _, _) => format!("{} does not parse: {why}.", voice.unparsed),
        (None, None, _) => format!(
            "this worktree is leased{}, but this push presents no credential (no GIT_HAND_LEASE in the environment and no stamp in the worktree).",
            f.newest
                .as_ref()
                .map_or_else(String::new, |n| format!(" to {}", holder_now(n)))
        ),
        (None, Some(_), None) => format!("{}, {yours}.", voice.never_granted),
        (None, Some(_), Some(t)) if f.granted_elsewhere => {
            format!(
                "the lease you present, {yours}, was granted for {}, not for this worktree.",
                t.resource.key
            )
        }
        (None, Some(c), Some(t)) => format!(
            "you present {yours}, but lease {} was granted with token {}.",
            ids::short(c.lease_id.as_str()),
            t.token
        ),
    }
}

fn keep_work_advice(p: &PrePush, task: Option<String>, said: Said) -> Vec<String> {
    // The name no open task and no branch has yet, where the refusal could look (issue 22).
    let new_task = p.own.rescue.clone().unwrap_or_else(|| {
        task.map_or_else(|| "<new-task>".to_string(), |t| format!("{t}-rescue"))
    });
    if said == Said::RefUpdate {
        // The whole oid: the refused commit is on no ref, so nothing else names it.
        let oid = p.head_oid.as_deref().unwrap_or("HEAD");
        return vec![
            format!("no ref moved; the objects are kept (commit {oid} stays in the object store)."),
            format!(
                "to keep the work under a lease of your own: git hand spawn {new_task} --base {oid}"
            ),
        ];
    }
    let own = &p.own;
    // HEAD is named as the presenter's only when no other open task has its branch: once the
    // slot was leased again, it is the new holder's work.
    let head_is_yours = own.head_theirs.is_none();
    let mut parts = vec![];
    match own.refused.as_slice() {
        [] => {}
        [one] => parts.push(format!(
            "commit {one} (refused, on no branch: this id names it)"
        )),
        many => parts.push(format!(
            "commits {} (refused, on no branch: these ids name them)",
            many.join(", ")
        )),
    }
    if let Some((b, o)) = &own.branch {
        parts.push(format!("local branch {b} ({})", ids::short(o)));
    } else if head_is_yours {
        parts.push(match (&p.head_branch, &p.head_oid) {
            (Some(b), Some(o)) => format!("local branch {b} ({})", ids::short(o)),
            (None, Some(o)) => format!("commit {}", ids::short(o)),
            _ => "this worktree".into(),
        });
    }
    let at = match parts.as_slice() {
        [] => None,
        _ => Some(parts.join(" and ")),
    };
    let base = own
        .refused
        .last()
        .cloned()
        .or_else(|| own.branch.as_ref().map(|(_, o)| ids::short(o).to_string()))
        .or_else(|| {
            p.head_oid
                .as_deref()
                .filter(|_| head_is_yours)
                .map(|o| ids::short(o).to_string())
        })
        .unwrap_or_else(|| if head_is_yours { "HEAD" } else { "<commit>" }.to_string());
    let mut lines = vec![match (said, at) {
        (Said::Push | Said::Receive, Some(at)) => {
            format!("your commits are safe in {at}; nothing was pushed.")
        }
        (Said::Push | Said::Receive, None) => {
            "nothing was pushed, and no commit of yours is known here.".into()
        }
        (Said::Check | Said::RefUpdate, Some(at)) => format!("your commits are in {at}."),
        (Said::Check | Said::RefUpdate, None) => "no commit of yours is known here.".into(),
    }];
    if let Some((b, t)) = &own.head_theirs {
        lines.push(match own.rescue {
            Some(_) => format!(
                "HEAD here is on {b}, the branch of task {t}: its commits are that task's work, not yours."
            ),
            // Who presents a credential no task holds is not known: they may hold task t.
            None => format!(
                "HEAD here is on {b}, the branch of task {t}: unless you hold task {t}, its commits are not yours."
            ),
        });
    }
    lines.push(format!(
        "to keep working on them under a lease of your own: git hand spawn {new_task} --base {base}"
    ));
    lines
}
