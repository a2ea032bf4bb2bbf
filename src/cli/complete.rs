//! Shell completion that knows the repository. `git-hand generate completion <SHELL>` renders the
//! verbs and flags statically with clap_complete ([`script`]); what only the repository knows is
//! asked of the hidden `git-hand complete tasks|refs` at the moment <TAB> is pressed: the names of
//! its open tasks (for `teardown`, `done`, `env`, `renew`, `path`) and its refs (`spawn --base`),
//! one per line.
//!
//! The verb only reads (no ledger is created, none is written) and fails silently to nothing: a
//! completion that prints an error into the user's command line is worse than none.
//!
//! clap_complete's own dynamic completion needs its unstable feature, so the scripts are clap's
//! static ones with each argument that needs the repository marked (its only possible value is a
//! stand-in) and the stand-in swapped, per shell, for a call of a small function appended here.

use clap::{Arg, Command, Subcommand};
use clap_complete::Shell;

use super::{Done, Failure};
use crate::ops::{Context, task::candidates};

#[derive(Debug, Subcommand)]
pub enum CompleteCommand {
    /// The names of the repository's open tasks.
    Tasks,
    /// The repository's branches, remote-tracking branches and tags.
    Refs,
}

pub fn run(ctx: &Context, cmd: CompleteCommand) -> Result<Done, Failure> {
    let found = match cmd {
        CompleteCommand::Tasks => candidates::task_names(ctx),
        CompleteCommand::Refs => candidates::refs(ctx),
    };
    // Nothing on stderr mid-completion: a notice (a ledger made private) waits for a real verb.
    drop(ctx.take_notices());
    let mut out = String::new();
    for candidate in found.unwrap_or_default() {
        out.push_str(&candidate);
        out.push('\n');
    }
    Ok(Done::ok(out))
}

/// Verbs whose first positional argument is a task's name (`done` is `teardown`'s alias).
const TASK_VERBS: &[&str] = &["teardown", "env", "renew", "path"];
/// Stand-ins for the values only the repository knows: see [`marked`].
const TASKS_MARK: &str = "GIT_HAND_COMPLETE_TASKS";
const REFS_MARK: &str = "GIT_HAND_COMPLETE_REFS";

/// The completion script for `shell`, from `full`, the whole command tree as people see it.
pub fn script(shell: Shell, full: &Command) -> std::io::Result<String> {
    let dynamic = matches!(shell, Shell::Bash | Shell::Zsh | Shell::Fish);
    // clap_complete offers hidden verbs too; a menu of `hook` and `generate` helps nobody.
    let mut cmd = Command::new("git-hand")
        .version(env!("CARGO_PKG_VERSION"))
        .disable_help_subcommand(true);
    for arg in full.get_arguments() {
        cmd = cmd.arg(arg.clone());
    }
    for verb in full.get_subcommands().filter(|c| !c.is_hide_set()) {
        cmd = cmd.subcommand(if dynamic {
            marked(verb.clone())
        } else {
            verb.clone()
        });
    }
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "git-hand", &mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    Ok(match shell {
        Shell::Bash => bash(text),
        Shell::Zsh => zsh(text),
        Shell::Fish => fish(text, &cmd),
        _ => text,
    })
}

/// `verb` with its task argument or its `--base` marked: given its stand-in as the only possible
/// value, which clap_complete renders where each shell offers an argument's values. Only the tree
/// completions are rendered from is marked: the parser never sees the marks.
fn marked(verb: Command) -> Command {
    let mark = |value: &'static str| {
        move |a: Arg| a.value_parser(clap::builder::PossibleValuesParser::new([value]))
    };
    if TASK_VERBS.contains(&verb.get_name()) {
        let task = verb.get_positionals().next().map(|a| a.get_id().clone());
        match task {
            Some(task) => verb.mut_arg(task, mark(TASKS_MARK)),
            None => verb,
        }
    } else if verb.get_name() == "spawn" {
        verb.mut_arg("base", mark(REFS_MARK))
    } else {
        verb
    }
}

fn bash(text: String) -> String {
    // clap_complete 4.6 names the bash state of `git-hand lease` `git__hand__subcmd__lease`
    // where it sets it and `git__subcmd__hand__subcmd__lease` where it reads it (the `-` of
    // the binary's name is mangled twice), so no verb would complete. One spelling for both;
    // a unit test checks every state set has a branch.
    let mut text = text
        .replace("git__subcmd__hand", "git__hand")
        // The stand-ins sit in the double-quoted word lists `compgen -W` is given.
        .replace(TASKS_MARK, "$(_git_hand_candidates tasks)")
        .replace(REFS_MARK, "$(_git_hand_candidates refs)");
    text.push_str(BASH_FUNCTIONS);
    text
}

/// `_git_hand_candidates` asks `git-hand complete` in the directory a `-C` on the line (or git's
/// own `git -C`, which git's completion keeps in `__git_C_args`) names.
///
/// git's bash completion completes `git hand ...` by calling `_git_hand` with no arguments and
/// its own `words`/`cword`/`cur`/`prev` in scope (it first loads a completion file named
/// `git-hand` when bash-completion's loader is there). That adapter hands the words after
/// `hand` to the generated `_git__hand` as if `git-hand` had been typed.
const BASH_FUNCTIONS: &str = r#"
# What only the repository knows (task names, refs), from `git-hand complete`.
_git_hand_candidates() {
    local dir=(${__git_C_args:+"${__git_C_args[@]}"}) i
    for ((i = 1; i < COMP_CWORD; i++)); do
        if [[ ${COMP_WORDS[i]} == -C ]]; then
            dir=(-C "${COMP_WORDS[i+1]/#\~/$HOME}")
        fi
    done
    command git-hand "${dir[@]}" complete "$1" 2>/dev/null
}

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

fn zsh(text: String) -> String {
    // zsh's own git completion calls `_git-hand` for `git hand <TAB>` (words shifted so that
    // `hand` is the command), so one function serves both spellings. The helper must be defined
    // before the file's last lines call `_git-hand` (the file is autoloaded as that function).
    let text = text
        .replace(&format!("({TASKS_MARK})"), "{_git_hand_candidates tasks}")
        .replace(&format!("({REFS_MARK})"), "{_git_hand_candidates refs}");
    let tail = "\nif [ \"$funcstack[1]\" = \"_git-hand\" ]; then";
    match text.rfind(tail) {
        Some(at) => format!("{}{ZSH_FUNCTIONS}{}", &text[..at], &text[at..]),
        None => text + ZSH_FUNCTIONS,
    }
}

const ZSH_FUNCTIONS: &str = r#"
# What only the repository knows (task names, refs), from `git-hand complete`, in the directory
# a `-C` on the line names (`git-hand -C <path>` or `git -C <path> hand`: the line as typed, since
# `words` no longer holds what came before the verb).
(( $+functions[_git_hand_candidates] )) ||
_git_hand_candidates() {
    local -a candidates dir expl line
    local i
    line=(${(z)LBUFFER})
    for (( i = 1; i < $#line; i++ )); do
        [[ $line[i] == -C ]] && dir=(-C ${~${(Q)line[i+1]}})
    done
    candidates=(${(f)"$(command git-hand $dir complete $1 2>/dev/null)"})
    _wanted $1 expl ${1%s} compadd -a candidates
}
"#;

/// fish: clap_complete renders no positional arguments, so the task names are a `complete` line
/// of our own for each task verb and its aliases; then [`FISH_GIT_BRIDGE`].
fn fish(text: String, cmd: &Command) -> String {
    let mut text = text.replace(
        &format!("-a \"{REFS_MARK}\\t''\""),
        "-a \"(__fish_git_hand_candidates refs)\"",
    );
    text.push_str(FISH_FUNCTIONS);
    let verbs: Vec<&str> = cmd
        .get_subcommands()
        .filter(|v| TASK_VERBS.contains(&v.get_name()))
        .flat_map(|v| v.get_name_and_visible_aliases())
        .collect();
    text.push_str(&format!(
        "complete -c git-hand -n \"__fish_git_hand_using_subcommand {}; and __fish_git_hand_task_missing\" -f -a \"(__fish_git_hand_candidates tasks)\"\n",
        verbs.join(" ")
    ));
    text.push_str(FISH_GIT_BRIDGE);
    text
}

const FISH_FUNCTIONS: &str = r#"
# What only the repository knows (task names, refs), from `git-hand complete`, in the directory
# a -C on the line names.
function __fish_git_hand_candidates -a kind
    set -l cmd (commandline -opc)
    set -e cmd[1]
    set -l dir
    argparse -i C= -- $cmd 2>/dev/null
    and set -q _flag_C
    and set dir -C $_flag_C[-1]
    command git-hand $dir complete $kind 2>/dev/null
end

# Whether the verb's task is still to come: nothing but options after the verb.
function __fish_git_hand_task_missing
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -i C= ttl= -- $cmd 2>/dev/null
    or return 1
    test (count (string match -v -- '-*' $argv)) -le 1
end

"#;

/// The last part of the fish script, from its first line on, is also what `install.sh` puts in
/// fish's `vendor_conf.d`, which fish runs at startup: a completion file is loaded only when its
/// own command is completed, and `git hand` is `git`'s. fish's git completion (3.6.0) hands a
/// `git-foo` command's completions to `git git-foo`, not `git foo`, and does not offer `hand`
/// after `git`: these lines do both, asking `complete -C "git-hand ..."` (which loads the file).
const FISH_GIT_BRIDGE: &str = r#"# `git hand <TAB>`: git's completion hands `git hand ...` to git-hand's.
function __fish_git_hand_from_git
    set -l cmd (commandline -opc)
    set -l at (contains -i -- hand $cmd)
    or return
    set -l dir
    if test $at -gt 2
        argparse -i C= -- $cmd[2..(math $at - 1)] 2>/dev/null
        and set -q _flag_C
        and set dir -C $_flag_C[-1]
    end
    set -l rest
    if test $at -lt (count $cmd)
        set rest $cmd[(math $at + 1)..-1]
    end
    complete -C (string join ' ' -- git-hand (string escape -- $dir $rest) (commandline -ct))
end
complete -c git -f -n __fish_git_needs_command -a hand -d 'Lease worktrees to parallel tasks'
complete -c git -f -n '__fish_git_using_command hand' -a '(__fish_git_hand_from_git)'
"#;

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> Command {
        super::super::command().disable_help_subcommand(true)
    }

    #[test]
    fn every_stand_in_becomes_a_call_and_no_other_shell_sees_one() {
        for shell in [
            Shell::Bash,
            Shell::Zsh,
            Shell::Fish,
            Shell::Elvish,
            Shell::PowerShell,
        ] {
            let text = script(shell, &tree()).unwrap();
            assert!(
                !text.contains("GIT_HAND_COMPLETE"),
                "{shell}: a stand-in left"
            );
            let calls = text.matches("hand_candidates tasks").count();
            let dynamic = matches!(shell, Shell::Bash | Shell::Zsh | Shell::Fish);
            assert_eq!(
                calls > 0,
                dynamic,
                "{shell}: task names asked {calls} times"
            );
        }
    }

    #[test]
    fn a_path_verb_is_marked_by_its_name() {
        let verb = Command::new("path").arg(Arg::new("task"));
        let marked = marked(verb);
        let task = marked.get_positionals().next().unwrap();
        let values: Vec<String> = task
            .get_possible_values()
            .iter()
            .map(|v| v.get_name().to_string())
            .collect();
        assert_eq!(values, [TASKS_MARK]);
    }
}
