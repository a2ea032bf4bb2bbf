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

fn completion(shell: Shell) -> std::io::Result<String> {
    // clap_complete offers hidden verbs too; a menu of `hook` and `generate` helps nobody.
    let full = command();
    let mut cmd = Command::new("git-hand")
        .version(env!("CARGO_PKG_VERSION"))
        .disable_help_subcommand(true);
    for arg in full.get_arguments() {
        cmd = cmd.arg(arg.clone());
    }
    for verb in full.get_subcommands().filter(|c| !c.is_hide_set()) {
        cmd = cmd.subcommand(verb.clone());
    }
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "git-hand", &mut out);
    let mut text = String::from_utf8_lossy(&out).into_owned();
    if shell == Shell::Bash {
        // clap_complete 4.6 names the bash state of `git-hand lease` `git__hand__subcmd__lease`
        // where it sets it and `git__subcmd__hand__subcmd__lease` where it reads it (the `-` of
        // the binary's name is mangled twice), so no verb would complete. One spelling for both;
        // a unit test checks every state set has a branch.
        text = text.replace("git__subcmd__hand", "git__hand");
        text.push_str(BASH_GIT_ADAPTER);
    }
    Ok(text)
}

/// git's bash completion completes `git hand ...` by calling `_git_hand` with no arguments and
/// its own `words`/`cword`/`cur`/`prev` in scope (it first loads a completion file named
/// `git-hand` when bash-completion's loader is there). This adapter hands the words after
/// `hand` to the generated `_git__hand` as if `git-hand` had been typed.
const BASH_GIT_ADAPTER: &str = r#"
# `git hand <TAB>`: git's completion calls _git_hand with its words/cword/cur/prev in scope.
_git_hand() {
    local hand_idx=${__git_cmd_idx:-}
    if [ -z "$hand_idx" ]; then
        hand_idx=1
        while [ "$hand_idx" -lt "$cword" ] && [ "${words[hand_idx]}" != hand ]; do
            hand_idx=$((hand_idx + 1))
        done
    fi
    local COMP_WORDS=(git-hand "${words[@]:hand_idx+1}")
    local COMP_CWORD=$((cword - hand_idx))
    local hand_prev=git-hand
    [ "$COMP_CWORD" -gt 1 ] && hand_prev=${COMP_WORDS[COMP_CWORD-1]}
    _git__hand git-hand "$cur" "$hand_prev"
}
"#;

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
