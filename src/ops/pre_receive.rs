//! What the server's `pre-receive` hook decides (issue 15): a push to a repository that runs
//! `git hand install --server` is judged by the lease it presents in its push options
//! (`hand.lease`, `hand.token`, `hand.task`), so a `git push --no-verify`, a tool that runs no
//! hooks, or a clone without git-hand cannot get past the fence the client hooks only advise.
//!
//! Two checks, the same two as pre-push: a presented lease must be current (the verdict of
//! [`verdict::judge`], for the slot it was granted for), and each updated branch that is an
//! open task's branch on this remote, with the task's slot lease live, may be updated only under
//! that lease. The remote is this repository's own path, as a task records a local remote
//! ([`fence::pushed_remote`]), and each URL `hand.remoteUrl` names (clients over ssh or https
//! record the URL they push to, which the server cannot see). Everything is read in one
//! snapshot, whatever the number of refs: the open tasks of each spelling of this remote (one
//! query each), then the tenures of those whose branch is pushed.
//!
//! A third, the server's own: a branch matching a `hand.requireLease` pattern may be updated
//! only under a current lease of a task recorded against this remote (matched in memory, no
//! further read).
//! A refusal is appended to the event log, naming the pusher where the host says who pushed
//! ([`Pusher`]). A ledger that does not exist fences nothing but the `hand.requireLease`
//! branches (no lease can be current); one that cannot be read refuses (fails closed).

use std::ffi::OsString;
use std::path::Path;

use super::on_hook::{PrePush, Refusal, Said, is_null_oid, is_object_name, record_refusal};
use super::verdict::{self, Credential, CredentialRule, Finding, Verdict};
use super::{Context, Result, fence};
use crate::git::refname;
use crate::ledger::{LeaseId, Machine, ResourceKind, Task, Tasks, View, WorktreeKey};

/// The push options a push presents its lease with.
pub const LEASE_OPTION: &str = "hand.lease";
pub const TOKEN_OPTION: &str = "hand.token";
pub const TASK_OPTION: &str = "hand.task";

/// What a push presented in its push options (the last value of each wins, as git's own
/// multi-valued settings are read).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Presented {
    pub lease: Option<String>,
    pub token: Option<String>,
    pub task: Option<String>,
}

impl Presented {
    /// From the `<key>=<value>` push options, in order; options that are not git-hand's are
    /// left to whoever else reads them.
    pub fn from_options<'a>(options: impl IntoIterator<Item = &'a str>) -> Self {
        let mut p = Self::default();
        for option in options {
            let Some((key, value)) = option.split_once('=') else {
                continue;
            };
            let slot = match key {
                LEASE_OPTION => &mut p.lease,
                TOKEN_OPTION => &mut p.token,
                TASK_OPTION => &mut p.task,
                _ => continue,
            };
            *slot = Some(value.to_string());
        }
        p
    }

    /// The push options git hands the hook: `GIT_PUSH_OPTION_COUNT` and `GIT_PUSH_OPTION_<i>`
    /// (set only when the server advertises push options and the client sent some). Never
    /// `GIT_HAND_LEASE`: on a local remote the hook inherits the pusher's environment, and only
    /// what the push itself carries is presented.
    pub fn from_env() -> Self {
        let count = std::env::var("GIT_PUSH_OPTION_COUNT")
            .ok()
            .and_then(|c| c.parse::<usize>().ok())
            .unwrap_or(0);
        let options: Vec<String> = (0..count)
            .filter_map(|i| std::env::var(format!("GIT_PUSH_OPTION_{i}")).ok())
            .collect();
        Self::from_options(options.iter().map(String::as_str))
    }

    /// The credential presented, parsed as the environment's is (a value that does not parse is
    /// `unknown-lease`, never "no credential"), with why it does not parse in the push options'
    /// names: the pusher set options, not variables of the server's environment.
    fn credential(&self) -> Option<std::result::Result<Credential, String>> {
        let os = |v: &Option<String>| v.as_ref().map(OsString::from);
        verdict::parse_env_credential(os(&self.lease).as_deref(), os(&self.token).as_deref())
            .map(|parsed| parsed.map_err(|_| self.why_unparsed()))
    }

    /// Which option does not parse, and why (the rules of `parse_env_credential`).
    fn why_unparsed(&self) -> String {
        match (self.lease.as_deref(), self.token.as_deref()) {
            (None | Some(""), _) => {
                format!("push option {TOKEN_OPTION} is set but {LEASE_OPTION} is not")
            }
            (Some(lease), _) if LeaseId::parse(lease).is_none() => format!(
                "push option {LEASE_OPTION}={lease:?} is not a lease id (32 lower-case hex characters)"
            ),
            (_, token) => format!(
                "push option {TOKEN_OPTION}={:?} is not a positive integer",
                token.unwrap_or_default()
            ),
        }
    }
}

/// Who pushed, as the server that runs the hook names them: the first of the hosts' own
/// variables that is set (each host's documentation names it; docs/team.md says which were
/// checked), else, over plain ssh, the server account sshd runs the push as. `None` on a
/// local push, where the hook's environment is the pusher's own and proves nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pusher {
    pub name: String,
    /// Where the name comes from: the variable, or `ssh account` for `USER` over ssh.
    pub source: &'static str,
}

/// The variables hosts set for their hooks with the pushing user's name, in the order asked:
/// GitLab, Gitea/Forgejo, GitHub Enterprise Server, and git-http-backend behind a web server's
/// authentication.
const PUSHER_VARIABLES: [&str; 4] = [
    "GL_USERNAME",
    "GITEA_PUSHER_NAME",
    "GITHUB_USER_LOGIN",
    "REMOTE_USER",
];

impl Pusher {
    /// From the hook's environment.
    pub fn from_env() -> Option<Self> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    fn from_vars(var: impl Fn(&str) -> Option<String>) -> Option<Self> {
        let set = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        if let Some((source, name)) = PUSHER_VARIABLES
            .iter()
            .find_map(|source| set(source).map(|name| (*source, name)))
        {
            return Some(Self { name, source });
        }
        // sshd sets SSH_CONNECTION and runs git-receive-pack as the account logged in to: on a
        // shared `git` account that names the account, not the person.
        set("SSH_CONNECTION")?;
        set("USER").map(|name| Self {
            name,
            source: "ssh account",
        })
    }
}

impl std::fmt::Display for Pusher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.name, self.source)
    }
}

/// One line of pre-receive stdin: `<old oid> <new oid> <ref name>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceivedRef {
    pub old_oid: String,
    pub new_oid: String,
    pub name: String,
}

/// Parses pre-receive stdin; a malformed line is an error (the hook then refuses: it cannot tell
/// what is being pushed).
pub fn parse_receive_lines(stdin: &str) -> std::result::Result<Vec<ReceivedRef>, String> {
    stdin
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(
            |line| match line.split_whitespace().collect::<Vec<_>>()[..] {
                [old, new, name] if is_object_name(old) && is_object_name(new) => Ok(ReceivedRef {
                    old_oid: old.into(),
                    new_oid: new.into(),
                    name: name.into(),
                }),
                _ => Err(format!("unexpected pre-receive input line {line:?}")),
            },
        )
        .collect()
}

/// Judges a push received by the repository of `ctx` and records a refusal, naming `pusher`
/// (who the server says pushed, [`Pusher::from_env`]) in its event. The outcome is pre-push's,
/// so its words are [`crate::cli`]'s refusal lines; `head_oid` is the pushed commit of the
/// refused ref (the pusher has it), for the advice on keeping the work.
pub fn pre_receive(
    ctx: &Context,
    presented: &Presented,
    refs: &[ReceivedRef],
    pusher: Option<&Pusher>,
) -> Result<PrePush> {
    let repo = ctx.repo()?;
    let common = &repo.loc.common_dir;
    let remotes = served_remotes(common, &super::settings::remote_urls(repo));
    let patterns = super::settings::required_lease_patterns(repo);
    let required = required_refs(&patterns, refs);
    let key = WorktreeKey::from_canonical(Path::new(&remotes[0]));
    let mut out = PrePush::default();
    let place = ctx.ledger_location()?.place;
    let Some(mut ledger) = ctx.open_existing(&place)? else {
        // No ledger: no task to fence, and no lease can be current (nothing to record it in).
        if let Some(&(index, pattern)) = required.first() {
            out.refusal = Some(lease_required(&refs[index], pattern, None));
            out.head_oid = pushed_oid(&refs[index]);
        }
        return Ok(out);
    };
    let credential = presented.credential();
    let (finding, fenced, now) = ledger.read(|v| {
        let finding = match credential.clone() {
            None => None,
            Some(Err(why)) => Some(Finding {
                verdict: Verdict::UnknownLease,
                credential_error: Some(why),
                ..Finding::unmanaged(v.now())
            }),
            Some(Ok(cred)) => Some(judge_presented(v, cred)?),
        };
        let current = finding
            .as_ref()
            .filter(|f| f.verdict == Verdict::Current)
            .and_then(|f| f.tenure.as_ref())
            .map(|t| t.lease_id.clone());
        let fenced = fenced_ref(v, &remotes, refs, current.as_ref())?;
        Ok((finding, fenced, v.now()))
    })?;
    out.now = now;
    let refused_ref = match (&finding, fenced) {
        (Some(f), _) if !f.verdict.allows() => {
            out.refusal = Some(Refusal::Verdict(Box::new(f.clone())));
            refs.iter().find(|r| !is_null_oid(&r.new_oid))
        }
        (_, Some((index, task, tenure))) => {
            let r = &refs[index];
            out.refusal = Some(Refusal::Branch {
                branch: branch_of(r).unwrap_or_default().to_string(),
                task: Box::new(task),
                tenure: Box::new(tenure),
            });
            Some(r)
        }
        _ => match (
            required.first(),
            lease_of_this_repository(&finding, &remotes),
        ) {
            (Some(&(index, pattern)), Err(others)) => {
                out.refusal = Some(lease_required(&refs[index], pattern, others));
                Some(&refs[index])
            }
            _ => None,
        },
    };
    out.head_oid = refused_ref.and_then(pushed_oid);
    out.finding = finding;
    if let Some(refusal) = &out.refusal {
        let finding = out
            .finding
            .clone()
            .unwrap_or_else(|| Finding::unmanaged(out.now));
        let who = pusher.map(Pusher::to_string);
        record_refusal(
            &mut ledger,
            &finding,
            refusal,
            &key,
            Said::Receive,
            who.as_deref(),
        )?;
    }
    Ok(out)
}

/// The commit a received ref would point at (none for a deletion).
fn pushed_oid(r: &ReceivedRef) -> Option<String> {
    (!is_null_oid(&r.new_oid)).then(|| r.new_oid.clone())
}

/// Each received branch update (deletions included) that a `hand.requireLease` pattern
/// protects: its index and the first pattern that matches it. In memory, whatever the number
/// of refs: the patterns cost no ledger read.
fn required_refs<'p>(patterns: &'p [String], refs: &[ReceivedRef]) -> Vec<(usize, &'p str)> {
    refs.iter()
        .enumerate()
        .filter_map(|(index, r)| {
            let branch = branch_of(r)?;
            patterns
                .iter()
                .find(|p| refname::branch_matches(p, branch))
                .map(|p| (index, p.as_str()))
        })
        .collect()
}

/// Whether the push presented a current lease whose task is recorded against one of
/// `remotes` (this repository's). `Err`: it did not; with the task of the current lease it
/// presented, when that is another repository's.
fn lease_of_this_repository(
    finding: &Option<Finding>,
    remotes: &[String],
) -> std::result::Result<(), Option<Box<Task>>> {
    let Some(task) = finding
        .as_ref()
        .filter(|f| f.verdict == Verdict::Current)
        .and_then(|f| f.task.as_ref())
    else {
        return Err(None);
    };
    match &task.remote {
        Some(remote) if remotes.contains(remote) => Ok(()),
        _ => Err(Some(Box::new(task.clone()))),
    }
}

fn lease_required(r: &ReceivedRef, pattern: &str, presented: Option<Box<Task>>) -> Refusal {
    Refusal::LeaseRequired {
        branch: branch_of(r).unwrap_or_default().to_string(),
        pattern: pattern.to_string(),
        presented,
    }
}

/// Every spelling of this remote that tasks may have recorded, normalized as a task records its
/// remote: the repository's own path first (clients on this machine), then each `hand.remoteUrl`
/// (the ssh or https URLs clients push to it by; the server cannot know them otherwise).
fn served_remotes(common: &Path, urls: &[String]) -> Vec<String> {
    let mut remotes = vec![fence::pushed_remote(&common.to_string_lossy(), common)];
    for url in urls.iter().filter(|u| !u.trim().is_empty()) {
        let remote = fence::pushed_remote(url, common);
        if !remotes.contains(&remote) {
            remotes.push(remote);
        }
    }
    remotes
}

/// The branch a received ref updates, if it is one.
fn branch_of(r: &ReceivedRef) -> Option<&str> {
    r.name.strip_prefix("refs/heads/")
}

/// The verdict on a presented lease, for the slot it was granted for. A lease this ledger never
/// granted, or granted for something that is no slot, is `unknown-lease`.
fn judge_presented(v: &View<'_>, cred: Credential) -> crate::ledger::Result<Finding> {
    let tenure = v.tenure(&cred.lease_id)?;
    let Some(tenure) = tenure.filter(|t| t.resource.kind == ResourceKind::Worktree) else {
        return Ok(Finding {
            verdict: Verdict::UnknownLease,
            credential: Some(cred),
            ..Finding::unmanaged(v.now())
        });
    };
    // Judged as the machine the slot is on, whichever machine the server is: its slot row and
    // its worktree resource are that machine's.
    let (machine, key) = tenure.resource.worktree_parts(!v.machine().is_empty());
    let v = &v.for_machine(&Machine::from(machine));
    let mut f = verdict::judge(v, &key, None, Some(Ok(cred)), CredentialRule::EnvRequired)?;
    if f.verdict == Verdict::Unmanaged {
        // The slot is gone from the ledger (pruned): its lease is nothing current.
        f.verdict = Verdict::UnknownLease;
    }
    Ok(f)
}

/// The first received ref that updates an open task's branch on one of `remotes` whose slot
/// lease is live and not `current` (the presented lease, when it is current): its index, the
/// task and its tenure. One query per spelling of the remote for its open tasks, then one tenure
/// per task whose branch is pushed, whatever the number of refs.
fn fenced_ref(
    v: &View<'_>,
    remotes: &[String],
    refs: &[ReceivedRef],
    current: Option<&crate::ledger::LeaseId>,
) -> crate::ledger::Result<Option<(usize, crate::ledger::Task, crate::ledger::Tenure)>> {
    let mut tasks = Vec::new();
    for remote in remotes {
        tasks.extend(v.tasks_on_remote(remote, Tasks::Open)?);
    }
    for task in tasks {
        let Some(index) = refs.iter().position(|r| branch_of(r) == Some(&task.branch)) else {
            continue;
        };
        let Some(lease_id) = task.lease_id.clone() else {
            continue;
        };
        let Some(tenure) = v.tenure(&lease_id)? else {
            continue;
        };
        if tenure.is_live(v.now()) && current != Some(&tenure.lease_id) {
            return Ok(Some((index, task, tenure)));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_git_hands_push_options_are_read_and_the_last_value_wins() {
        let p = Presented::from_options([
            "ci.skip",
            "hand.lease=aa",
            "hand.token=3",
            "other=x",
            "hand.lease=bb",
            "hand.task=fix-login",
        ]);
        assert_eq!(p.lease.as_deref(), Some("bb"));
        assert_eq!(p.token.as_deref(), Some("3"));
        assert_eq!(p.task.as_deref(), Some("fix-login"));
        assert_eq!(Presented::from_options([]), Presented::default());
        assert!(Presented::default().credential().is_none());
    }

    #[test]
    fn the_served_remotes_are_the_own_path_then_each_named_url_once_normalized() {
        let dir = std::env::temp_dir().canonicalize().unwrap();
        let urls = [
            "git@Git.Example:o/app.git".to_string(),
            "https://git.example/o/app".to_string(),
            "ssh://git@git-internal:2222/o/app".to_string(),
            " ".to_string(),
        ];
        let remotes = served_remotes(&dir, &urls);
        assert_eq!(
            remotes[0],
            fence::pushed_remote(&dir.to_string_lossy(), &dir)
        );
        assert_eq!(remotes[1..], ["git.example/o/app", "git-internal/o/app"]);
    }

    #[test]
    fn receive_lines_parse_and_malformed_input_is_an_error() {
        let (z, one) = ("0".repeat(40), "1".repeat(40));
        let refs = parse_receive_lines(&format!("{z} {one} refs/heads/a\n\n")).unwrap();
        assert_eq!(refs.len(), 1);
        assert_eq!(branch_of(&refs[0]), Some("a"));
        assert!(parse_receive_lines(&format!("{z} {one}")).is_err());
        assert!(parse_receive_lines(&format!("{z} HEAD refs/heads/a")).is_err());
    }

    #[test]
    fn the_pusher_is_the_first_hosts_variable_set_else_the_ssh_account() {
        let from = |vars: &[(&str, &str)]| {
            let vars: Vec<(String, String)> = vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            Pusher::from_vars(|name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
                .map(|p| p.to_string())
        };
        assert_eq!(
            from(&[
                ("REMOTE_USER", "web"),
                ("GL_USERNAME", "gl"),
                ("USER", "git")
            ])
            .as_deref(),
            Some("gl (GL_USERNAME)")
        );
        assert_eq!(
            from(&[("GITHUB_USER_LOGIN", "octo"), ("REMOTE_USER", "web")]).as_deref(),
            Some("octo (GITHUB_USER_LOGIN)")
        );
        assert_eq!(
            from(&[("GITEA_PUSHER_NAME", ""), ("REMOTE_USER", "web")]).as_deref(),
            Some("web (REMOTE_USER)")
        );
        assert_eq!(
            from(&[
                ("SSH_CONNECTION", "10.0.0.1 5 10.0.0.2 22"),
                ("USER", "git")
            ])
            .as_deref(),
            Some("git (ssh account)")
        );
        assert_eq!(from(&[("USER", "me")]), None, "a local push names no one");
    }
}
