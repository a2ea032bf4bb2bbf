//! `git hand status` and `git hand check`: the task and lease of the current worktree, the
//! decision the pre-push hook would give a push of its branch (branch fencing included), and
//! whether the hooks are in force here at all.

use clap::Args;
use serde_json::{Value, json};

use super::output::{Paint, expiry_text, paint, tenure_json};
use super::{Done, Failure, Kind};
use crate::clock::relative;
use crate::hooks::Lapse;
use crate::ops::Context;
use crate::ops::hook::{self, Here, PushTarget, Refusal, Said};
use crate::ops::verdict::Finding;

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Print one JSON object (fields: docs/cli.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Print one JSON object (fields: docs/cli.md).
    #[arg(long)]
    pub json: bool,
}

pub fn status(ctx: &Context, args: StatusArgs) -> Result<Done, Failure> {
    let here = hook::here(ctx)?;
    if args.json {
        return Ok(Done::json(&here_json(&here), None));
    }
    Ok(Done::ok(render_here(&here, paint(ctx))))
}

/// The JSON of `status` and `check` (docs/cli.md): the verdict's fields, then `refusal` (what
/// refuses, `null` when allowed), `push` (the branch judged) and `hooks` (whether they are in
/// force for this worktree). `allowed` is pre-push's answer, fencing included; `checked` says
/// whether a push from here would be put to pre-push at all.
pub fn here_json(here: &Here) -> Value {
    let f = here.finding();
    let mut v = finding_json(&f, here.workdir.as_deref(), &here.ledger);
    v["allowed"] = json!(here.decision.refusal.is_none());
    v["refusal"] = match &here.decision.refusal {
        None => Value::Null,
        Some(Refusal::Verdict(f)) => json!({"kind": "verdict", "verdict": f.verdict}),
        Some(Refusal::Branch {
            branch,
            task,
            tenure,
        }) => json!({
            "kind": "branch", "branch": branch, "task": task.name, "lease": tenure_json(tenure),
        }),
    };
    v["push"] = json!(here.target);
    let lapse = here.lapse();
    v["checked"] = json!(lapse.is_none());
    v["hooks"] = match &here.hooks {
        Ok(h) => json!({
            "in_force": h.in_force(), "dir": h.dir, "hooks_path": h.hooks_path,
            "pre_push": h.pre_push, "lapses": h.lapses,
        }),
        Err(why) => json!({"in_force": false, "error": why, "lapses": [lapse]}),
    };
    v
}

pub fn finding_json(
    f: &Finding,
    workdir: Option<&std::path::Path>,
    ledger: &std::path::Path,
) -> Value {
    json!({
        "verdict": f.verdict,
        "allowed": f.verdict.allows(),
        "worktree": workdir,
        "slot": f.slot,
        "task": f.task.as_ref().map(|t| &t.name),
        "credential": f.credential,
        "credential_error": f.credential_error,
        "lease": f.tenure.as_ref().map(tenure_json),
        "newest": f.newest.as_ref().map(tenure_json),
        "issue_lease": f.issue.as_ref().map(tenure_json),
        "ledger": ledger,
    })
}

/// `status` as text (also the head of `git hand` with no verb).
pub fn render_here(here: &Here, p: Paint) -> String {
    let f = here.finding();
    let lapse = here.lapse();
    let allowed = here.decision.refusal.is_none();
    let verdict = if allowed {
        p.green(f.verdict.as_str())
    } else {
        p.red(f.verdict.as_str())
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
    if let Some(t) = &here.target {
        out.push_str(&format!(
            "push:    {} on {} ({})\n",
            t.branch,
            t.remote,
            target_why(t)
        ));
    }
    if let Some(l) = &lapse {
        out.push_str(&lapse_text(l, p));
    } else if let Ok(h) = &here.hooks {
        for l in &h.lapses {
            out.push_str(&format!("hooks:   {}\n", l.message));
        }
    }
    out
}

fn target_why(t: &PushTarget) -> &'static str {
    match t.via {
        "upstream" => "its upstream",
        _ => "no upstream, so the branch of the same name",
    }
}

/// A lapse, loudly, with its fix.
fn lapse_text(l: &Lapse, p: Paint) -> String {
    let mut out = format!("{} {}\n", p.red("hooks:   NOT in force:"), l.message);
    for h in &l.hints {
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
            task.name,
            task.branch,
            task.state.as_str()
        ));
    }
    if let Some(t) = &f.tenure {
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
        out.push_str(&format!(
            "newer:   token {} held by {} since {}\n",
            n.token,
            n.holder,
            relative(n.acquired_at, f.now)
        ));
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
                crate::ops::verdict::CredentialSource::Env => "GIT_HAND_LEASE in the environment",
                crate::ops::verdict::CredentialSource::Stamp => "the worktree's stamp",
            }
        ));
    }
    out
}

/// `git hand check`: exactly pre-push's decision for this worktree, without pushing, and
/// whether the hooks would put a push to it at all. Exit 1 when pre-push would refuse.
pub fn check(ctx: &Context, args: CheckArgs) -> Result<Done, Failure> {
    let here = hook::here(ctx)?;
    let allowed = here.decision.refusal.is_none();
    let kind = (!allowed).then_some(Kind::Failed);
    if args.json {
        return Ok(Done::json(&here_json(&here), kind));
    }
    let p = paint(ctx);
    let lapse = here.lapse();
    let mut text = if allowed {
        format!(
            "{}: a push from here would be allowed\n",
            here.finding().verdict.as_str()
        )
    } else {
        super::refusal::lines(&here.decision, Said::Check)
            .iter()
            .map(|l| format!("{l}\n"))
            .collect()
    };
    if let Some(t) = &here.target {
        text.push_str(&format!(
            "(judged for a push to {} on {}: {})\n",
            t.branch,
            t.remote,
            target_why(t)
        ));
    }
    if let Some(l) = &lapse {
        text.push_str(&format!(
            "{} a push from here would NOT be checked: {}\n",
            p.red("but:"),
            l.message
        ));
        for h in &l.hints {
            text.push_str(&format!("  fix: {h}\n"));
        }
    }
    Ok(Done::with(text, kind))
}
