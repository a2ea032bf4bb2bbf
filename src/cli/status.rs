//! `git hand status`: the task and lease of the current worktree, the decision the pre-push hook
//! would give a push of its branch (branch fencing included), and whether the hooks are in force
//! here at all. Its JSON is also `check`'s (`super::check`).

use std::path::Path;

use serde::Serialize;

use super::output::{Paint, TenureJson, expiry_text, paint};
use super::shape::{
    ClaudeInForceJson, CredentialJson, EnforcerJson, LapseJson, PushTargetJson, each,
};
use super::{Done, Failure, Kind};
use crate::clock::relative;
use crate::hooks::Lapse;
use crate::ledger::{Place, WorktreeKey};
use crate::ops::Context;
use crate::ops::fence::verdict::{Finding, Verdict};
use crate::ops::on_hook::{self, Here, PushTarget, Refusal};

pub fn status(ctx: &Context, json: bool) -> Result<Done, Failure> {
    let here = on_hook::here(ctx)?;
    if let Some(warning) = ctx
        .repo_opt()
        .and_then(crate::ops::repo::relative_remotes::unpinned_here)
    {
        ctx.note(vec![warning]);
    }
    if json {
        return here_json(&here, None);
    }
    Ok(Done::ok(render_here(&here, paint(ctx))))
}

/// The JSON of `status` and `check` (docs/cli.md): the verdict's facts, then `refusal` (what
/// refuses, `null` when allowed), `push` (the branch judged) and `hooks` (whether they are in
/// force for this worktree). `allowed` is pre-push's answer, fencing included; `checked` says
/// whether a push from here would be put to pre-push at all.
#[derive(Serialize)]
struct HereJson<'a> {
    verdict: Verdict,
    allowed: bool,
    worktree: Option<&'a Path>,
    slot: Option<&'a WorktreeKey>,
    task: Option<&'a str>,
    credential: Option<CredentialJson<'a>>,
    credential_error: Option<&'a str>,
    lease: Option<TenureJson<'a>>,
    newest: Option<TenureJson<'a>>,
    issue_lease: Option<TenureJson<'a>>,
    ledger: &'a Place,
    refusal: Option<RefusalJson<'a>>,
    push: Option<PushTargetJson<'a>>,
    checked: bool,
    hooks: HooksJson<'a>,
    remote_fence: Option<bool>,
    remote_fence_error: Option<&'a str>,
    /// Whether git-hand's Claude Code hooks are in force (`null`: `install --claude` never ran).
    claude_hooks: Option<ClaudeInForceJson<'a>>,
}

/// What refuses the push: `{"kind": "verdict", "verdict"}` or `{"kind": "branch", "branch",
/// "task", "lease"}`.
#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum RefusalJson<'a> {
    Verdict {
        verdict: Verdict,
    },
    Branch {
        branch: &'a str,
        task: &'a str,
        lease: TenureJson<'a>,
    },
    /// Only the server's pre-receive refuses so (`hand.requireLease`).
    #[serde(rename = "lease-required")]
    LeaseRequired {
        branch: &'a str,
        pattern: &'a str,
    },
    /// Only the reference-transaction hook refuses so (another worktree's HEAD or ref).
    Worktree {
        name: &'a str,
    },
}

/// Whether the hooks are in force here; when that could not be told, `error` says why and
/// `lapses` holds the lapse that follows.
#[derive(Serialize)]
#[serde(untagged)]
enum HooksJson<'a> {
    Known {
        in_force: bool,
        dir: &'a Path,
        hooks_path: Option<&'a str>,
        /// In a slot: the hooks directory of linked worktrees it runs hooks from (issue 25).
        #[serde(skip_serializing_if = "Option::is_none")]
        linked: Option<&'a Path>,
        pre_push: EnforcerJson<'a>,
        lapses: Vec<LapseJson<'a>>,
    },
    Unknown {
        in_force: bool,
        error: &'a str,
        lapses: [Option<LapseJson<'a>>; 1],
    },
}

/// `status --json` and `check --json`, exiting as `kind` says.
pub(super) fn here_json(here: &Here, kind: Option<Kind>) -> Result<Done, Failure> {
    let f = here.finding();
    let lapse = here.lapse();
    let refusal = here.decision.refusal.as_ref().map(|r| match r {
        Refusal::Verdict(f) => RefusalJson::Verdict { verdict: f.verdict },
        Refusal::Branch {
            branch,
            task,
            tenure,
        } => RefusalJson::Branch {
            branch,
            task: &task.name,
            lease: TenureJson::of(tenure),
        },
        Refusal::LeaseRequired {
            branch, pattern, ..
        } => RefusalJson::LeaseRequired { branch, pattern },
        Refusal::Worktree { name } => RefusalJson::Worktree { name },
    });
    let hooks = match &here.hooks {
        Ok(h) => HooksJson::Known {
            in_force: h.in_force(),
            dir: &h.dir,
            hooks_path: h.hooks_path.as_deref(),
            linked: h.linked.as_deref(),
            pre_push: (&h.pre_push).into(),
            lapses: each(&h.lapses),
        },
        Err(why) => HooksJson::Unknown {
            in_force: false,
            error: why,
            lapses: [lapse.as_ref().map(Into::into)],
        },
    };
    let shape = HereJson {
        verdict: f.verdict,
        allowed: here.decision.refusal.is_none(),
        worktree: here.workdir.as_deref(),
        slot: f.slot.as_ref(),
        task: f.task.as_ref().map(|t| t.name.as_str()),
        credential: f.credential.as_ref().map(Into::into),
        credential_error: f.credential_error.as_deref(),
        lease: f.tenure.as_ref().map(TenureJson::of),
        newest: f.newest.as_ref().map(TenureJson::of),
        issue_lease: f.issue.as_ref().map(TenureJson::of),
        ledger: &here.ledger,
        refusal,
        push: here.target.as_ref().map(Into::into),
        checked: lapse.is_none(),
        hooks,
        remote_fence: here.remote_fence.as_ref().ok().copied(),
        remote_fence_error: here.remote_fence.as_ref().err().map(String::as_str),
        claude_hooks: here.claude.as_ref().map(Into::into),
    };
    Done::json(&shape, kind)
}

/// `status` as text (also the head of `git hand` with no verb).
pub(crate) fn render_here(here: &Here, p: Paint) -> String {
    let f = here.finding();
    let lapse = here.lapse();
    let allowed = here.decision.refusal.is_none();
    let verdict = if allowed {
        p.green(&f.verdict.to_string())
    } else {
        p.red(&f.verdict.to_string())
    };
    let would = match (allowed, &lapse) {
        (true, _) => "allowed".to_string(),
        (false, None) => "refused".to_string(),
        (false, Some(_)) => {
            "refused by git-hand, but the hooks are NOT in force here, so it would go through"
                .to_string()
        }
    };
    let mut out = format!("verdict: {verdict} (a push from here would be {would})\n");
    if let Some(Refusal::Branch { branch, task, .. }) = &here.decision.refusal {
        out.push_str(&format!(
            "fenced:  branch {branch} belongs to live task {}\n",
            task.name
        ));
    }
    out.push_str(&render_finding(&f));
    // A file ledger goes unsaid, as it always has; a team ledger is where every lease is.
    if let Place::Server(url) = &here.ledger {
        out.push_str(&format!("ledger:  team ledger {url}\n"));
    }
    if let Some(t) = &here.target {
        out.push_str(&format!(
            "push:    {} on {} ({})\n",
            t.branch,
            t.remote,
            target_why(t)
        ));
    }
    out.push_str(&remote_fence_line(here));
    if let Some(l) = &lapse {
        out.push_str(&lapse_text(l, p));
    } else if let Ok(h) = &here.hooks {
        for l in &h.lapses {
            out.push_str(&format!("hooks:   {}\n", l.message));
        }
    }
    out.push_str(&claude_text(here, p));
    out
}

/// The Claude Code hooks that lapsed where `install --claude` wrote them, each with its fix
/// (nothing when they are in force, or were never installed).
fn claude_text(here: &Here, p: Paint) -> String {
    let Some(c) = &here.claude else {
        return String::new();
    };
    let mut out = String::new();
    let mut fixes: Vec<&crate::hint::Words> = vec![];
    for l in &c.lapses {
        out.push_str(&format!(
            "{} {}: {}\n",
            p.red("claude:  NOT in force:"),
            l.file.display(),
            l.message
        ));
        if !fixes.contains(&&l.fix) {
            fixes.push(&l.fix);
        }
    }
    for fix in fixes {
        out.push_str(&format!("  fix:   {fix}\n"));
    }
    out
}

/// Whether this slot's pushes present its lease to the remote (`hand.remoteFence`), said only
/// in a slot and only as far as the client knows: the remote checks them only where
/// `git hand install --server` runs. Empty outside a slot.
pub(super) fn remote_fence_line(here: &Here) -> String {
    if here.finding().slot.is_none() {
        return String::new();
    }
    let said = match &here.remote_fence {
        Ok(true) => "on (pushes under the credential of git hand env or spawn --exec carry \
                     the lease as push options; the remote checks them where \
                     git hand install --server runs)"
            .to_string(),
        Ok(false) => "off (pushes present no lease to the remote: only the hooks here check them)"
            .to_string(),
        Err(why) => format!("unknown ({why})"),
    };
    format!("remote fence: {said}\n")
}

pub(super) fn target_why(t: &PushTarget) -> &'static str {
    match t.via {
        "upstream" => "its upstream",
        _ => "no upstream, so the branch of the same name",
    }
}

/// A lapse, loudly, with its fix.
fn lapse_text(l: &Lapse, p: Paint) -> String {
    let mut out = format!("{} {}\n", p.red("hooks:   NOT in force:"), l.message);
    for h in super::hint::lines(&l.hints) {
        out.push_str(&format!("  fix:   {h}\n"));
    }
    out
}

/// The finding's facts, one line each (`verdict:` comes from the caller).
fn render_finding(f: &Finding) -> String {
    let mut out = String::new();
    if let Some(task) = &f.task {
        out.push_str(&format!(
            "task:    {} on {} ({})\n",
            task.name, task.branch, task.state
        ));
    }
    if let Some(t) = f.tenure.as_ref().filter(|t| t.ended_at.is_some()) {
        // An ended lease is nobody's now: "held by" would name a holder it no longer has.
        out.push_str(&format!(
            "lease:   token {} of {}, ended ({})\n",
            t.token,
            t.holder,
            t.end_reason.as_deref().unwrap_or("released")
        ));
    } else if let Some(t) = &f.tenure {
        out.push_str(
            &format!(
                "lease:   token {}, {} , held by {}\n",
                t.token,
                expiry_text(t.expires_at, f.now),
                t.holder
            )
            .replace(" ,", ","),
        );
    }
    if let (Some(n), Some(t)) = (&f.newest, &f.tenure)
        && n.token > t.token
    {
        out.push_str(&if n.is_live(f.now) {
            format!(
                "newer:   token {} held by {} since {}\n",
                n.token,
                n.holder,
                relative(n.acquired_at, f.now)
            )
        } else {
            // Leased again and let go: nothing holds the slot now (issue 22).
            format!(
                "newer:   token {} of {}, which no longer holds it: the slot is free\n",
                n.token, n.holder
            )
        });
    }
    if let Some(why) = &f.credential_error {
        out.push_str(&format!(
            "from:    the environment, which does not parse: {why}\n"
        ));
    }
    if let Some(c) = &f.credential {
        out.push_str(&format!(
            "from:    {}\n",
            match c.source {
                crate::ops::fence::verdict::CredentialSource::Env =>
                    "GIT_HAND_LEASE in the environment",
                crate::ops::fence::verdict::CredentialSource::Stamp => "the worktree's stamp",
                crate::ops::fence::verdict::CredentialSource::Session => {
                    "this Claude Code session's own lease (CLAUDE_CODE_SESSION_ID)"
                }
            }
        ));
    }
    out
}
