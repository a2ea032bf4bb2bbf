//! `git-hand generate man|completion <SHELL>` (hidden): the man page and the shell completions,
//! rendered from the clap definitions at run time, so neither can drift from the CLI they
//! describe. `install.sh` calls it; packagers may too. It reads no repository and no ledger.
//!
//! The page is one `git-hand.1` with every verb in it, because `git hand --help` is turned by git
//! into `man git-hand` and a reader should find `spawn`'s flags there, not a pointer to a page
//! that does not exist.

use clap::{Arg, ArgAction, Command, Subcommand};
use clap_complete::Shell;
use clap_mangen::Man;
use clap_mangen::roff::{Roff, bold, roman};

use super::{Done, Failure, Kind};

#[derive(Debug, Subcommand)]
pub enum GenerateCommand {
    /// The man page git-hand.1 (roff) on stdout.
    Man,
    /// A completion script on stdout. The bash script also defines `_git_hand`, the function
    /// git's own bash completion calls for `git hand <TAB>`.
    Completion {
        #[arg(value_enum)]
        shell: Shell,
    },
}

pub fn run(cmd: GenerateCommand) -> Result<Done, Failure> {
    let text = match cmd {
        GenerateCommand::Man => man_page(),
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

/// Renders git-hand.1.
fn man_page() -> std::io::Result<String> {
    let mut cmd = command();
    cmd.build();
    let version = cmd.get_version().unwrap_or_default().to_string();
    let man = Man::new(cmd.clone())
        .title("GIT-HAND")
        .section("1")
        .source(format!("git-hand {version}"))
        .manual("Git Manual");
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    let mut roff = Roff::new();
    roff.control("SH", ["DESCRIPTION"]);
    for para in DESCRIPTION {
        roff.control("PP", []).text([roman(*para)]);
    }
    roff.to_writer(&mut out)?;
    man.render_options_section(&mut out)?;

    let mut roff = Roff::new();
    roff.control("SH", ["COMMANDS"]);
    roff.to_writer(&mut out)?;
    for verb in cmd.get_subcommands().filter(|c| !c.is_hide_set()) {
        render_verb(verb, &mut out)?;
        for sub in verb.get_subcommands().filter(|c| !c.is_hide_set()) {
            render_verb(sub, &mut out)?;
        }
    }

    let mut roff = Roff::new();
    roff.control("SH", ["EXIT STATUS"]);
    // The same table `git hand --help` prints, so the two cannot disagree.
    let after = cmd
        .get_after_help()
        .map(|s| s.to_string())
        .unwrap_or_default();
    roff.control("nf", []);
    for line in after.lines().filter(|l| !l.ends_with(':')) {
        roff.text([roman(line)]);
    }
    roff.control("fi", []);
    titled_list(&mut roff, "ENVIRONMENT", ENVIRONMENT);
    titled_list(&mut roff, "CONFIGURATION", CONFIGURATION);
    titled_list(&mut roff, "FILES", FILES);
    roff.control("SH", ["SEE ALSO"]);
    roff.text([roman(SEE_ALSO)]);
    roff.to_writer(&mut out)?;
    man.render_version_section(&mut out)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// One verb: a subsection named by its full command line, its summary, synopsis and options.
/// `-C`, `--json` and `-h` are global and documented once, at the top.
fn render_verb(verb: &Command, out: &mut Vec<u8>) -> std::io::Result<()> {
    let name = verb.get_bin_name().unwrap_or_else(|| verb.get_name());
    let aliases: Vec<&str> = verb.get_visible_aliases().collect();
    let heading = match aliases.as_slice() {
        [] => name.to_string(),
        a => format!("{name} (alias: {})", a.join(", ")),
    };
    let mut roff = Roff::new();
    roff.control("SS", [heading.as_str()]);
    if let Some(about) = verb.get_long_about().or_else(|| verb.get_about()) {
        roff.text([roman(about.to_string())]);
    }
    let local = verb
        .clone()
        .mut_args(|a| if is_global(&a) { a.hide(true) } else { a });
    let man = Man::new(local.clone());
    roff.control("PP", []);
    roff.to_writer(out)?;
    let mut section = Vec::new();
    man.render_synopsis_section(&mut section)?;
    out.extend(without_heading(&section));
    if local.get_arguments().any(|a| !a.is_hide_set()) {
        let mut section = Vec::new();
        man.render_options_section(&mut section)?;
        out.extend(without_heading(&section));
    }
    Ok(())
}

/// `-C`, `--json`, `-h/--help` and `-V/--version`: propagated to every verb by clap.
fn is_global(a: &Arg) -> bool {
    a.is_global_set() || matches!(a.get_action(), ArgAction::Help | ArgAction::Version)
}

/// A rendered section without its `.SH` line (the verb's `.SS` heading stands for it).
fn without_heading(section: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(section);
    text.lines()
        .filter(|l| !l.starts_with(".SH "))
        .flat_map(|l| format!("{l}\n").into_bytes())
        .collect()
}

fn titled_list(roff: &mut Roff, title: &str, items: &[(&str, &str)]) {
    roff.control("SH", [title]);
    for (term, text) in items {
        roff.control("TP", [])
            .text([bold(*term)])
            .text([roman(*text)]);
    }
}

const DESCRIPTION: &[&str] = &[
    "git hand leases the worktrees of a repository to parallel tasks (coding agents or people) on \
     one machine, records every lease in a SQLite ledger, and installs pre-push and post-checkout \
     hooks so that git itself refuses the push of a holder whose lease was superseded, expired or \
     released.",
    "git hand spawn TASK leases a slot (a linked worktree kept in a pool and reused across tasks), \
     puts the task's branch (hand/TASK) there and prints the slot's path. git hand env TASK prints \
     the credential (GIT_HAND_LEASE, GIT_HAND_TOKEN) a holder presents when it pushes, and \
     spawn --exec -- CMD runs CMD in the slot with it set. git hand teardown TASK ends the task: \
     the slot is freed (its files kept), the lease released, the branch kept.",
    "Every lease carries a fencing token, one more than the largest ever issued for that slot or \
     issue. A holder whose slot was leased again presents an older token, and its push is \
     refused with the lease that superseded it and the command that keeps its work.",
    "Run with no command, git hand shows the verdict for the current worktree and the tasks of \
     the repository.",
];

const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "GIT_HAND_LEDGER",
        "The ledger file; wins over git config hand.ledger.",
    ),
    (
        "GIT_HAND_HOLDER",
        "The default holder name when --holder is not given (else user@host).",
    ),
    (
        "GIT_HAND_LEASE, GIT_HAND_TOKEN, GIT_HAND_TASK",
        "A task's credential, printed by git hand env and set by spawn --exec. The pre-push hook \
         judges it when GIT_HAND_LEASE or GIT_HAND_TOKEN is set, else the stamp in the worktree's \
         admin directory; a credential that does not parse is judged unknown-lease.",
    ),
    (
        "NO_COLOR",
        "When set and not empty, no colour (colour is also off when stdout is not a terminal or \
         color.ui is never).",
    ),
    (
        "XDG_STATE_HOME, XDG_DATA_HOME",
        "Where the ledger and the pool live by default.",
    ),
];

/// Every `hand.*` value that does not parse is an error naming the key and the value (verbs exit
/// 2, the pre-push hook refuses, post-checkout warns): said once, in the section's first entry.
const CONFIGURATION: &[(&str, &str)] = &[
    (
        "hand.*",
        "A value that does not parse (a bad boolean, a maxSlots that is not a positive integer, a \
         relative root or ledger) is an error that names the key and the value: a command exits 2 \
         with the git config command that fixes it, the pre-push hook refuses the push, the \
         post-checkout hook warns.",
    ),
    (
        "hand.ledger",
        "The ledger file (GIT_HAND_LEDGER wins over it).",
    ),
    ("hand.root", "The directory that holds the slot pools."),
    (
        "hand.maxSlots",
        "How many slots a repository's pool may have (default 16).",
    ),
    (
        "hand.requireCredential",
        "When true, a push from a leased slot is refused unless GIT_HAND_LEASE is in the \
         environment (the stamp alone is not enough).",
    ),
    (
        "hand.fenceBranches",
        "When true (the default), a push that updates the branch of a live task from outside that \
         task's lease is refused.",
    ),
    (
        "hand.adoptWorktrees",
        "When true, a worktree made by a plain git worktree add is leased as a task by the \
         post-checkout hook.",
    ),
    (
        "hand.issueNamespace",
        "The namespace of issue leases (default: the normalized origin URL, else the repository's \
         id).",
    ),
];

const FILES: &[(&str, &str)] = &[
    (
        "$XDG_STATE_HOME/git-hand/ledger.sqlite",
        "The ledger (~/.local/state/git-hand/ledger.sqlite when XDG_STATE_HOME is unset).",
    ),
    (
        "$XDG_DATA_HOME/git-hand/pools/<repo>-<id>/<n>/<repo>",
        "Slot n of a repository's pool (~/.local/share/git-hand/pools when XDG_DATA_HOME is unset).",
    ),
    (
        "$(git rev-parse --git-path hooks)/pre-push, post-checkout",
        "The hook shims git hand install writes; a hook that was there is kept as \
         <hook>.git-hand-chained and still runs.",
    ),
];

const SEE_ALSO: &str = "git-worktree(1), githooks(5); in the source: README.md, docs/concepts.md, \
     docs/cli.md, docs/hooks.md, docs/architecture.md";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_man_page_documents_every_visible_verb_and_its_flags() {
        let page = man_page().unwrap();
        assert!(page.contains("\n.TH GIT-HAND 1 "), "{page}");
        let mut cmd = command();
        cmd.build();
        for verb in cmd.get_subcommands().filter(|c| !c.is_hide_set()) {
            assert!(
                page.contains(&format!(".SS \"git hand {}", verb.get_name())),
                "no section for {}",
                verb.get_name()
            );
        }
        for flag in [
            "\\-\\-exec",
            "\\-\\-print\\-path",
            "\\-\\-repair",
            "\\-\\-hooks\\-path",
            "\\-\\-json",
        ] {
            assert!(page.contains(flag), "{flag} missing");
        }
        assert!(!page.contains("git hand hook"), "hidden verbs stay hidden");
        assert!(
            !page.contains("git hand generate"),
            "hidden verbs stay hidden"
        );
    }

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
