//! `git hand trust`: approve the exact content of the repository's `.handconfig`, so its setup
//! commands may run.

use clap::Args;
use serde::Serialize;

use super::{Done, Failure, Kind};
use crate::hint::Hint;
use crate::ops::Context;
use crate::ops::repo::settings::{self, Settings};
use crate::ops::repo::setup::Hook;

#[derive(Debug, Args)]
pub struct TrustArgs {
    /// Approve it even though it holds control or bidirectional-formatting characters (which can
    /// hide part of a command on a terminal).
    #[arg(long)]
    pub allow_control_characters: bool,
}

/// `trust --json`.
#[derive(Serialize)]
struct TrustJson<'a> {
    path: &'a std::path::Path,
    /// The blob id approved (`git hash-object`).
    hash: &'a str,
    /// The commands the file may now run, by key.
    commands: Vec<CommandJson<'a>>,
}

#[derive(Serialize)]
struct CommandJson<'a> {
    key: &'static str,
    command: &'a str,
}

pub fn trust(ctx: &Context, args: &TrustArgs, json: bool) -> Result<Done, Failure> {
    let repo = ctx.repo()?;
    let settings = Settings::load(repo).map_err(crate::ops::Error::from)?;
    let Some(file) = settings.file() else {
        let where_ = settings::file_path(repo)
            .map_or("a bare repository has no checkout".into(), |p| {
                format!("there is no {}", p.display())
            });
        return Err(
            Failure::new(Kind::Usage, format!("nothing to trust: {where_}"))
                .hint(Hint::hand("config").why("the hand.* values in effect")),
        );
    };
    let odd = crate::ops::repo::trust::control_characters(file);
    if !odd.is_empty() && !args.allow_control_characters {
        let shown = crate::shown::path(file.path());
        let mut message = format!(
            "not trusted: {shown} holds control or bidirectional-formatting characters, which can \
             make what a terminal shows differ from what runs; nothing was approved"
        );
        for line in &odd {
            message.push_str(&format!("\n  {line}"));
        }
        return Err(Failure::new(Kind::Failed, message)
            .hint(Hint::run(format!("cat -v {shown}")).why("read it with them made visible"))
            .hint(Hint::hand("trust --allow-control-characters").why("approve it as it is")));
    }
    crate::ops::repo::trust::approve(file)?;
    let written: Vec<(&'static str, String)> = [Hook::OnCreate, Hook::OnReuse, Hook::OnTeardown]
        .into_iter()
        .filter_map(|hook| {
            let command = file.string(hook.key()).filter(|c| !c.trim().is_empty())?;
            Some((hook.key(), command))
        })
        .collect();
    let commands = written
        .iter()
        .map(|(key, command)| CommandJson { key, command })
        .collect();
    let shape = TrustJson {
        path: file.path(),
        hash: file.hash(),
        commands,
    };
    if json {
        return Done::json(&shape, None);
    }
    let mut out = format!(
        "trusted {} (blob {}); a change to it asks again\n",
        crate::shown::path(shape.path),
        crate::ids::short(shape.hash)
    );
    if shape.commands.is_empty() {
        out.push_str("it sets no setup command\n");
    }
    for c in &shape.commands {
        out.push_str(&format!(
            "  {} = {}\n",
            c.key,
            crate::shown::shown(c.command)
        ));
    }
    Ok(Done::ok(out))
}
