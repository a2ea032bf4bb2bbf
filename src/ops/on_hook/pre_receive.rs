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
//!
//! A received ref that is a symbolic ref here is judged as itself and as the ref it writes
//! (receive-pack updates the target: `master -> main` moves `main`), read from one loose file
//! per ref ([`crate::git::symref`]). A refusal is appended to the event log, naming the pusher
//! where the host says who pushed ([`Pusher`]). Anything that keeps the hook from judging
//! refuses (a server fails closed): no `hand.ledger` in the repository's own configuration file
//! (the only place the server's ledger comes from: over a local remote the hook inherits the
//! pusher's environment, and a `GIT_HAND_LEDGER` there naming another ledger is refused), none
//! where it names, one it cannot read, a
//! `hand.requireLease` value that can match no branch, a symbolic ref it cannot resolve.

use std::ffi::OsString;
use std::path::Path;

use super::OnHookError;
use crate::git::refname;
use crate::git::symref::{SymrefError, Symrefs};
use crate::ledger::{
    LeaseId, LedgerLocation, Machine, ResourceKind, Task, Tasks, Tenure, View, WorktreeKey,
};
use crate::ops::fence::credential_push::{LEASE_OPTION, TASK_OPTION, TOKEN_OPTION};
use crate::ops::fence::verdict::{self, Credential, CredentialRule, Finding, Unparsed, Verdict};
use crate::ops::on_hook::{PrePush, Refusal, Said, is_null_oid, is_object_name, record_refusal};
use crate::ops::repo::settings::RequireLease;
use crate::ops::{Context, Error, Result, fence};

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
    pub(crate) fn from_options<'a>(options: impl IntoIterator<Item = &'a str>) -> Self {
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
    pub(crate) fn from_env() -> Self {
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
            .map(|parsed| parsed.map_err(|e| in_push_options(&e)))
    }
}

/// Why the presented lease does not parse, naming the push option.
fn in_push_options(e: &Unparsed) -> String {
    match e {
        Unparsed::TokenWithoutLease => {
            format!("push option {TOKEN_OPTION} is set but {LEASE_OPTION} is not")
        }
        Unparsed::Lease(value) => format!(
            "push option {LEASE_OPTION}={value:?} is not a lease id (32 lower-case hex characters)"
        ),
        Unparsed::Token(value) => {
            format!("push option {TOKEN_OPTION}={value:?} is not a positive integer")
        }
    }
}

/// Who pushed, as the server that runs the hook names them: the first of the hosts' own
/// variables that is set (each host's documentation names it; docs/team.md says which were
/// checked), else, over plain ssh, the server account sshd runs the push as. `None` on a
/// local push, where the pusher is the OS user the hook runs as and the environment proves
/// nothing more. For display only (escaped): nothing the server judges depends on it.
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
    /// From the hook's environment.
    pub(crate) fn from_env() -> Option<Self> {
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
        // A name comes from the pusher's side: shown escaped, so a control character can
        // neither hide nor forge a line of the refusal or the log (issue 22).
        write!(f, "{} ({})", self.name.escape_debug(), self.source)
    }
}

/// One line of pre-receive stdin: `<old oid> <new oid> <ref name>`; or the ref such an update
/// really writes, when the name is a symbolic ref on the server ([`written_refs`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceivedRef {
    pub old_oid: String,
    pub new_oid: String,
    pub name: String,
    /// The name the push gave, when `name` is the ref a symbolic ref of that name writes.
    pub pushed_as: Option<String>,
}

/// Parses pre-receive stdin; a malformed line is an error (the hook then refuses: it cannot tell
/// what is being pushed).
pub(crate) fn parse_receive_lines(stdin: &str) -> std::result::Result<Vec<ReceivedRef>, String> {
    stdin
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(
            |line| match line.split_whitespace().collect::<Vec<_>>()[..] {
                [old, new, name] if is_object_name(old) && is_object_name(new) => Ok(ReceivedRef {
                    old_oid: old.into(),
                    new_oid: new.into(),
                    name: name.into(),
                    pushed_as: None,
                }),
                _ => Err(format!("unexpected pre-receive input line {line:?}")),
            },
        )
        .collect()
}

/// Judges a push received by the repository of `ctx` and records a refusal, naming `pusher`
/// (who the server says pushed, [`Pusher::from_env`]) in its event. The outcome is pre-push's,
/// so its words are [`crate::cli`]'s refusal lines; `head_oid` is the pushed commit of the
/// refused ref (the pusher has it), for the advice on keeping the work. An error is a push the
/// hook cannot judge (it refuses it): an invalid `hand.requireLease`, a symbolic ref it cannot
/// resolve, no ledger or one it cannot read.
pub fn pre_receive(
    ctx: &Context,
    presented: &Presented,
    refs: &[ReceivedRef],
    pusher: Option<&Pusher>,
) -> Result<PrePush> {
    let repo = ctx.repo()?;
    let common = &repo.loc.common_dir;
    let required = crate::ops::repo::settings::require_lease(repo);
    if let Some(bad) = required.invalid.first() {
        return Err(OnHookError::BadRequireLease {
            bad: bad.clone(),
            common: common.clone(),
        }
        .into());
    }
    let refs = written_refs(repo, refs)?;
    let remotes = served_remotes(common, &crate::ops::repo::settings::remote_urls(repo).urls);
    let location = ctx.ledger_location()?;
    let Some(mut ledger) = ctx.open_existing(&location.place)? else {
        return Err(no_ledger(&location, common));
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
        let fenced = fenced_ref(v, &remotes, &refs, current.as_ref())?;
        Ok((finding, fenced, v.now()))
    })?;
    let mut out = PrePush {
        now,
        finding,
        ..PrePush::default()
    };
    let lease = PresentedLease::of(out.finding.as_ref(), &remotes);
    let Some((refusal, refused)) = decide(out.finding.as_ref(), fenced, &required, lease, &refs)
    else {
        return Ok(out);
    };
    out.head_oid = refused.and_then(pushed_oid);
    let finding = out
        .finding
        .clone()
        .unwrap_or_else(|| Finding::unmanaged(now));
    let who = pusher.map(Pusher::to_string);
    let key = WorktreeKey::from_canonical(Path::new(&remotes[0]));
    record_refusal(
        &mut ledger,
        &finding,
        &refusal,
        &key,
        Said::Receive,
        who.as_deref(),
    )?;
    out.refusal = Some(refusal);
    Ok(out)
}

/// The refusal of a push, and the received ref it is about, in the order pre-push judges: a
/// presented lease that is not current, then a live task's branch updated from outside its
/// lease, then a `hand.requireLease` branch updated without a current lease of this
/// repository's. `None`: the push passes. The ref is the one whose pushed commit the advice
/// names (none when a refused push only deletes).
fn decide<'r>(
    finding: Option<&Finding>,
    fenced: Option<(usize, Task, Tenure)>,
    required: &RequireLease,
    lease: PresentedLease,
    refs: &'r [ReceivedRef],
) -> Option<(Refusal, Option<&'r ReceivedRef>)> {
    if let Some(f) = finding.filter(|f| !f.verdict.allows()) {
        let pushed = refs.iter().find(|r| !is_null_oid(&r.new_oid));
        return Some((Refusal::Verdict(Box::new(f.clone())), pushed));
    }
    if let Some((index, task, tenure)) = fenced {
        let r = &refs[index];
        let refusal = Refusal::Branch {
            branch: branch_label(r),
            task: Box::new(task),
            tenure: Box::new(tenure),
        };
        return Some((refusal, Some(r)));
    }
    let presented = match lease {
        PresentedLease::OfThisRepository => return None,
        PresentedLease::None => None,
        PresentedLease::OfAnother(task) => Some(task),
    };
    let (r, pattern) = required_ref(&required.patterns, refs)?;
    let refusal = Refusal::LeaseRequired {
        branch: branch_label(r),
        pattern: pattern.to_string(),
        presented,
    };
    Some((refusal, Some(r)))
}

/// No ledger where the server's own `hand.ledger` says: it cannot tell a live task's branch or a
/// current lease, so it refuses (a server fails closed). The place is the server's alone
/// ([`Context::for_server`]): nothing in the pusher's environment moves it.
fn no_ledger(location: &LedgerLocation, common: &Path) -> Error {
    OnHookError::NoServerLedger {
        place: location.place.to_string(),
        source_of: location.source,
        common: common.to_path_buf(),
    }
    .into()
}

/// The refs a push writes: each received ref, and after it, when its name is a symbolic ref
/// here, the ref the update really moves (receive-pack writes through it), so both are judged.
/// On the files backend this reads one small loose file per ref and runs no git; a reftable
/// repository is asked once. A chain that cannot be resolved refuses the push.
fn written_refs(repo: &crate::git::Repo, refs: &[ReceivedRef]) -> Result<Vec<ReceivedRef>> {
    let storage = repo.config_string("extensions.refStorage");
    let symrefs = Symrefs::of(&repo.loc.common_dir, storage.as_deref()).map_err(unresolved)?;
    let mut written = Vec::with_capacity(refs.len());
    for r in refs {
        written.push(r.clone());
        let target = symrefs.written(&r.name).map_err(unresolved)?;
        if target != r.name {
            written.push(ReceivedRef {
                name: target,
                pushed_as: Some(r.name.clone()),
                ..r.clone()
            });
        }
    }
    Ok(written)
}

fn unresolved(e: SymrefError) -> Error {
    OnHookError::UnresolvedRef {
        reason: e.to_string(),
    }
    .into()
}

/// The commit a received ref would point at (none for a deletion).
fn pushed_oid(r: &ReceivedRef) -> Option<String> {
    (!is_null_oid(&r.new_oid)).then(|| r.new_oid.clone())
}

/// The first received branch update (deletions included) that a `hand.requireLease` pattern
/// protects, and the first pattern that matches it. In memory, whatever the number of refs: the
/// patterns cost no ledger read.
fn required_ref<'r, 'p>(
    patterns: &'p [String],
    refs: &'r [ReceivedRef],
) -> Option<(&'r ReceivedRef, &'p str)> {
    refs.iter().find_map(|r| {
        let branch = branch_of(r)?;
        patterns
            .iter()
            .find(|p| refname::branch_matches(p, branch))
            .map(|p| (r, p.as_str()))
    })
}

/// What the push presented, as `hand.requireLease` asks.
enum PresentedLease {
    /// A current lease of a task recorded against this repository (one of its remotes).
    OfThisRepository,
    /// No current lease.
    None,
    /// A current lease of a task of another repository.
    OfAnother(Box<Task>),
}

impl PresentedLease {
    fn of(finding: Option<&Finding>, remotes: &[String]) -> Self {
        let Some(task) = finding
            .filter(|f| f.verdict == Verdict::Current)
            .and_then(|f| f.task.as_ref())
        else {
            return Self::None;
        };
        match &task.remote {
            Some(remote) if remotes.contains(remote) => Self::OfThisRepository,
            _ => Self::OfAnother(Box::new(task.clone())),
        }
    }
}

/// Which pushes the branch fence covers (issue 22: it is never silently off): the repository's
/// own path (clients on this machine) and each `hand.remoteUrl` (clients over ssh or https,
/// whose URL the server cannot see). With no `hand.remoteUrl`, a client over the network gets
/// no branch fence, and `install --server`, `config` and `doctor` say so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Coverage {
    pub repository: std::path::PathBuf,
    /// Each `hand.remoteUrl`, as written.
    pub remote_urls: Vec<String>,
}

impl Coverage {
    pub fn of(repo: &crate::git::Repo) -> Self {
        Self {
            repository: repo.loc.common_dir.clone(),
            remote_urls: crate::ops::repo::settings::remote_urls(repo).urls,
        }
    }

    /// What the fence covers, one line each.
    pub fn lines(&self) -> String {
        let mut text = format!(
            "branch fence: covers pushes to {} (local paths and file://)\n",
            self.repository.display()
        );
        for url in &self.remote_urls {
            text.push_str(&format!(
                "branch fence: covers pushes to {url} (hand.remoteUrl)\n"
            ));
        }
        text
    }

    /// The warning when no `hand.remoteUrl` is set.
    pub fn warning(&self) -> String {
        format!(
            "warning: no hand.remoteUrl is set, so the branch fence covers no push over ssh or \
             https: clients record the URL they push to, and the server matches only the URLs \
             it is told; name each one: git -C {} config --add hand.remoteUrl <url>",
            self.repository.display()
        )
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

/// The branch as a refusal names it: `main`, or `main (pushed as master)` when the push named a
/// symbolic ref that writes it.
fn branch_label(r: &ReceivedRef) -> String {
    let branch = branch_of(r).unwrap_or(&r.name);
    match &r.pushed_as {
        Some(name) => format!(
            "{branch} (pushed as {})",
            name.strip_prefix("refs/heads/").unwrap_or(name)
        ),
        None => branch.to_string(),
    }
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
    current: Option<&LeaseId>,
) -> crate::ledger::Result<Option<(usize, Task, Tenure)>> {
    let mut tasks = Vec::new();
    for remote in remotes {
        tasks.extend(v.tasks_on_remote(remote, Tasks::Open)?);
    }
    for task in tasks {
        let Some(index) = refs.iter().position(|r| branch_of(r) == Some(&task.branch)) else {
            continue;
        };
        let Some(lease_id) = &task.lease_id else {
            continue;
        };
        if let Some(tenure) = fence::live_tenure(v, lease_id, current)? {
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
        // A name is the pusher's: shown escaped, it can neither forge nor hide a line.
        assert_eq!(
            from(&[("REMOTE_USER", "eve\ngit-hand: ok\u{1b}[8m")]).as_deref(),
            Some("eve\\ngit-hand: ok\\u{1b}[8m (REMOTE_USER)")
        );
    }
}
