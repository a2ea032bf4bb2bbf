//! `git hand install` and `git hand uninstall`.

use clap::Args;

use super::{Done, Failure, Kind};
use crate::ops::Context;

#[derive(Debug, Args)]
pub struct InstallArgs {
    /// Rewrite git-hand's hooks even where they look current.
    #[arg(long)]
    pub force: bool,
    /// Only print what to add to the hook manager in charge (core.hooksPath); write nothing.
    #[arg(long)]
    pub manual: bool,
    /// Install into the directory core.hooksPath names, under the same chaining rules.
    #[arg(long)]
    pub hooks_path: bool,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct UninstallArgs {
    #[arg(long)]
    pub json: bool,
}

pub fn install(_ctx: &Context, _args: InstallArgs) -> Result<Done, Failure> {
    Err(Failure::new(Kind::Failed, "not implemented yet"))
}

pub fn uninstall(_ctx: &Context, _args: UninstallArgs) -> Result<Done, Failure> {
    Err(Failure::new(Kind::Failed, "not implemented yet"))
}
