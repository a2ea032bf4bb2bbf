//! `git hand status` and `git hand check`: the task and lease of the current worktree, and the
//! verdict the pre-push hook would give it.

use clap::Args;
use serde_json::{Value, json};

use super::output::{Paint, expiry_text, paint, tenure_json};
use super::{Done, Failure, Kind};
use crate::clock::relative;
use crate::ops::hook::{self, PrePush, Refusal};
use crate::ops::verdict::Finding;
use crate::ops::{Context, tasks};

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
    let here = tasks::here(ctx)?;
    let f = &here.finding;
    if args.json {
        return Ok(Done::json(
            &finding_json(f, here.workdir.as_deref(), &here.ledger),
            None,
        ));
    }
    Ok(Done::ok(render_finding(f, paint(ctx))))
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

pub fn render_finding(f: &Finding, p: Paint) -> String {
    let verdict = if f.verdict.allows() {
        p.green(f.verdict.as_str())
    } else {
        p.red(f.verdict.as_str())
    };
    let mut out = format!(
        "verdict: {verdict} (a push from here would be {})\n",
        if f.verdict.allows() {
            "allowed"
        } else {
            "refused"
        }
    );
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

/// `git hand check`: the pre-push verdict of this worktree, without pushing.
pub fn check(ctx: &Context, args: CheckArgs) -> Result<Done, Failure> {
    let here = tasks::here(ctx)?;
    let allowed = here.finding.verdict.allows();
    let kind = (!allowed).then_some(Kind::Failed);
    if args.json {
        return Ok(Done::json(
            &finding_json(&here.finding, here.workdir.as_deref(), &here.ledger),
            kind,
        ));
    }
    if allowed {
        return Ok(Done::ok(format!(
            "{}: a push from here would be allowed\n",
            here.finding.verdict.as_str()
        )));
    }
    let repo = ctx.repo()?;
    let p = PrePush {
        refusal: Some(Refusal::Verdict(Box::new(here.finding.clone()))),
        now: here.finding.now,
        finding: Some(here.finding),
        head_branch: repo.head_branch(),
        head_oid: repo.head_oid(),
    };
    let text: String = hook::refusal_lines(&p)
        .iter()
        .map(|l| format!("{l}\n"))
        .collect();
    Ok(Done::with(text, kind))
}
