//! `git-hand generate man|completion <SHELL>` (hidden): the man page and the shell completions,
//! rendered from the clap definitions at run time, so neither can drift from the CLI they
//! describe. `install.sh` calls it; packagers may too. It reads no repository and no ledger.
//!
//! The page itself is rendered in `manpage.rs`.

use std::path::PathBuf;

use clap::{Command, Subcommand};
use clap_complete::Shell;

use super::{Done, Failure, Kind};

#[derive(Debug, Subcommand)]
pub enum GenerateCommand {
    /// The man page git-hand.1 (roff) on stdout.
    Man {
        /// Where README.md and docs/ are installed (install.sh: $PREFIX/share/doc/git-hand): the
        /// page points there [default: the page names no documentation file].
        #[arg(long, value_name = "path")]
        doc_dir: Option<PathBuf>,
    },
    /// A completion script on stdout. The bash script also defines `_git_hand`, the function
    /// git's own bash completion calls for `git hand <TAB>`.
    Completion {
        #[arg(value_enum, value_name = "shell")]
        shell: Shell,
    },
}

pub fn run(cmd: GenerateCommand) -> Result<Done, Failure> {
    let text = match cmd {
        GenerateCommand::Man { doc_dir } => super::manpage::render(doc_dir.as_deref()),
        GenerateCommand::Completion { shell } => completion(shell),
    };
    text.map(Done::ok)
        .map_err(|e| Failure::new(Kind::Failed, format!("cannot render: {e}")))
}

/// The command tree as people see it (the global `--json` included): clap's generated `help`
/// verb left out. Not yet built: building fixes every verb's bin name, and completions need
/// `git-hand` where the page says `git hand`.
fn command() -> Command {
    super::command().disable_help_subcommand(true)
}

/// A completion script: static verbs and flags, and calls of `git-hand complete` for what only
/// the repository knows ([`super::complete::script`]).
fn completion(shell: Shell) -> std::io::Result<String> {
    super::complete::script(shell, &command())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_completion_defines_the_function_git_calls() {
        let script = completion(Shell::Bash).unwrap();
        assert!(script.contains("_git__hand()"));
        assert!(script.contains("_git_hand()"));
        assert!(script.contains("complete -F _git__hand"));
        assert!(
            !script.contains(" generate"),
            "hidden verbs are not offered"
        );
        // Every state the word loop sets (`cmd="..."`) has a branch (`...)`) that completes it.
        for line in script.lines().map(str::trim) {
            let state = line
                .strip_prefix("cmd=\"")
                .and_then(|r| r.strip_suffix('"'));
            if let Some(state) = state.filter(|s| !s.is_empty()) {
                assert!(
                    script.contains(&format!("\n        {state})\n")),
                    "no branch for {state}"
                );
            }
        }
    }
}
