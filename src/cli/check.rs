//! `git hand check`: exactly pre-push's decision for this worktree, in pre-push's words, without
//! pushing, and whether the hooks would put a push from here to it at all.

use super::output::paint;
use super::status::{here_json, remote_fence_line, target_why};
use super::{Done, Failure, Kind};
use crate::ops::Context;
use crate::ops::on_hook::{self, Said};

/// `git hand check`: exactly pre-push's decision for this worktree, without pushing, and
/// whether the hooks would put a push to it at all. Exit 1 when pre-push would refuse.
pub fn check(ctx: &Context, json: bool) -> Result<Done, Failure> {
    let here = on_hook::here(ctx)?;
    let allowed = here.decision.refusal.is_none();
    let kind = (!allowed).then_some(Kind::Failed);
    if json {
        return here_json(&here, kind);
    }
    let p = paint(ctx);
    let lapse = here.lapse();
    let mut text = if allowed {
        format!(
            "{}: a push from here would be allowed\n",
            here.finding().verdict
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
    text.push_str(&remote_fence_line(&here));
    if let Some(l) = &lapse {
        text.push_str(&format!(
            "{} a push from here would NOT be checked: {}\n",
            p.red("but:"),
            l.message
        ));
        for h in super::hint::lines(&l.hints) {
            text.push_str(&format!("  fix: {h}\n"));
        }
    }
    Ok(Done::with(text, kind))
}
