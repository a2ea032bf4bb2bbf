//! `git-hand hook pre-receive`: what the server's shim (`git hand install --server`) execs. It
//! runs the chained pre-receive hook first (its failure fails the push), then asks
//! [`crate::ops::on_hook::pre_receive`] about the refs on stdin and the lease the push options present.
//! git hands the hook's stderr to the pusher, who reads each `git-hand:` line after `remote:`.
//!
//! It fails closed: a push it cannot judge (unreadable input, a ledger it cannot read) is
//! refused.

use std::ffi::OsString;
use std::io::Read;

use super::{exit, say};
use crate::cli::{Done, Failure};
use crate::hooks::{HookName, chain};
use crate::ops::Context;
use crate::ops::on_hook::Said;
use crate::ops::on_hook::pre_receive::{self, Presented, Pusher};

const REFUSED: &str = "push refused by the remote";

pub fn pre_receive(ctx: &Context, args: &[OsString]) -> Done {
    let mut stdin = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut stdin) {
        say(&[format!("{REFUSED}: cannot read what is being pushed: {e}")]);
        return exit(1);
    }
    match chain::run_chained(HookName::PreReceive, None, args, &stdin) {
        Ok(Some(status)) if !status.success() => {
            return exit(crate::platform::exit_status::exit_code(status).max(1));
        }
        Ok(_) => {}
        Err(e) => {
            say(&[format!(
                "{REFUSED}: the chained pre-receive hook could not run: {e}"
            )]);
            return exit(1);
        }
    }
    // receive-pack runs the hook inside the repository, GIT_DIR naming it (`.` for a bare one).
    let dir = match std::env::var_os("GIT_DIR") {
        Some(dir) => ctx.cwd.join(dir),
        None => ctx.cwd.clone(),
    };
    let server = Context::for_server(dir);
    let decision = pre_receive::parse_receive_lines(&String::from_utf8_lossy(&stdin))
        .map_err(|e| crate::ops::Error::from(crate::ops::on_hook::OnHookError::Unread { why: e }))
        .and_then(|refs| {
            let pusher = Pusher::from_env();
            pre_receive::pre_receive(&server, &Presented::from_env(), &refs, pusher.as_ref())
        });
    match decision {
        Ok(p) if p.refusal.is_none() => exit(0),
        Ok(p) => {
            say(&crate::cli::refusal::lines(&p, Said::Receive));
            exit(1)
        }
        Err(e) => {
            let f = Failure::from(e);
            let mut lines = vec![format!("{REFUSED}: it cannot check leases: {}", f.message)];
            lines.extend(
                crate::cli::hint::lines(&f.hints)
                    .iter()
                    .map(|h| format!("  on the server, run: {h}")),
            );
            say(&lines);
            exit(1)
        }
    }
}
