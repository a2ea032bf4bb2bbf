//! `git-hand hook reference-transaction <state>`: what the reference-transaction shim execs when
//! a process presenting a credential (or in a slot that requires one) prepares a ref
//! transaction in a leased slot. Exit 1 aborts the transaction: git removes its lock files and
//! moves no ref; the objects already written stay in the object store.
//!
//! The chained hook runs first, with the same arguments and stdin, in every state (the shim runs
//! it directly when it starts no git-hand). Only `prepared` is judged: once git reports
//! `committed` or `aborted`, a hook's exit status changes nothing.

use std::ffi::OsString;
use std::io::Read;

use super::{cannot_check, exit, say};
use crate::cli::Done;
use crate::git::INTERNAL_ENV;
use crate::hooks::{HookName, chain};
use crate::ops::Context;
use crate::ops::on_hook::Said;
use crate::ops::on_hook::ref_fence;

pub(crate) fn reference_transaction(ctx: &Context, args: &[OsString]) -> Done {
    let mut stdin = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut stdin) {
        say(&[format!(
            "ref update refused: cannot read what the transaction moves: {e}"
        )]);
        return exit(1);
    }
    let prepared = args.first().is_some_and(|s| s == "prepared");
    match chain::run_chained(HookName::ReferenceTransaction, None, args, &stdin) {
        Ok(Some(status)) if !status.success() => {
            return exit(crate::platform::exit_status::exit_code(status).max(1));
        }
        Ok(_) => {}
        Err(e) if prepared => {
            say(&[format!(
                "ref update refused: the chained reference-transaction hook could not run: {e}"
            )]);
            return exit(1);
        }
        Err(_) => {}
    }
    // git-hand's own git commands (spawn's switch, teardown's reset) are never refused.
    if !prepared || std::env::var_os(INTERNAL_ENV).is_some() {
        return exit(0);
    }
    let decision = ref_fence::parse_ref_lines(&String::from_utf8_lossy(&stdin))
        .map_err(|e| crate::ops::Error::from(crate::ops::on_hook::OnHookError::Unread { why: e }))
        .and_then(|updates| ref_fence::reference_transaction(ctx, &updates));
    match decision {
        Ok(None) => exit(0),
        Ok(Some(refused)) => {
            say(&crate::cli::refusal::lines(&refused, Said::RefUpdate));
            exit(1)
        }
        Err(e) => cannot_check("ref update refused", e),
    }
}
