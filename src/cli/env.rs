//! `git hand env`: a task's credential as shell `export` lines (and, with `hand.remoteFence`,
//! the shell code that makes every push present it), in POSIX shell or fish, or as one JSON
//! object of variables.

use clap::{Args, ValueEnum};

use super::output::Vars;
use super::{Done, Failure, Kind};
use crate::hint::Hint;
use crate::ops::task::tasks;
use crate::ops::{Context, fence::credential_push};

#[derive(Debug, Args)]
pub struct EnvArgs {
    /// The task [default: the one whose credential is in the environment, else the current worktree's].
    #[arg(value_name = "task")]
    pub task: Option<String>,
    /// The shell that evaluates the lines (sh also for bash and zsh).
    #[arg(long, value_enum, value_name = "shell", default_value_t = Shell::Sh)]
    pub shell: Shell,
}

/// The language `git hand env` speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    // POSIX shell code, for sh, bash and zsh: `eval "$(git hand env)"`.
    #[value(alias = "bash", alias = "zsh")]
    Sh,
    // `git hand env --shell fish | source`.
    Fish,
}

pub fn env(ctx: &Context, args: EnvArgs, json: bool) -> Result<Done, Failure> {
    // A bad name is a usage error before the ledger is opened (and maybe created).
    if let Some(name) = &args.task {
        crate::ops::repo::names::task_name(name)?;
    }
    let mut ledger = ctx.open_ledger()?;
    let task = match args.task.as_deref() {
        Some(name) => tasks::resolve_task(ctx, &mut ledger, Some(name))?,
        None => tasks::this_task(ctx, &mut ledger)?
            .map_err(|f| super::refusal::not_current(&f, "env"))?,
    };
    let (tenure, now) = tasks::tenure_of(&mut ledger, &task)?;
    // A dead credential is no credential: handing it out would only earn a refused push later.
    if !tenure.is_live(now) {
        return Err(Failure::new(
            Kind::Precondition,
            format!(
                "task {}'s lease is no longer live; its pushes will be refused",
                task.name
            ),
        )
        .hint(
            Hint::hand(format!("teardown {}", task.name))
                .why(format!("commits stay on {}", task.branch)),
        ));
    }
    let carried = credential_push::carried(ctx.repo()?)?;
    if json {
        // One object of variables, as the text sets them: a program applies it on top of the
        // environment it ran `git hand env` in (whose `GIT_CONFIG_COUNT` entries the push
        // options follow), and every value is a string.
        let vars = credential_push::environment(&task, &tenure, carried);
        return Done::json(&Vars(&vars), None);
    }
    // Values are hex, digits and task names ([A-Za-z0-9._-]): nothing a shell would expand.
    let mut text: String = crate::ops::fence::credential::env_vars(&task, &tenure)
        .into_iter()
        .map(|(k, v)| match args.shell {
            Shell::Sh => format!("export {k}={v}\n"),
            Shell::Fish => format!("set -gx {k} {v}\n"),
        })
        .collect();
    if carried {
        let options = credential_push::push_options(&task, &tenure);
        text += &match args.shell {
            Shell::Sh => credential_push::shell(&options),
            Shell::Fish => credential_push::fish(&options),
        };
    }
    Ok(Done::ok(text))
}
