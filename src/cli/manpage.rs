//! The man page `git-hand.1`, rendered by `git-hand generate man` (cli/generate.rs) from the clap
//! definitions with clap_mangen, so it describes exactly the binary it ships with.
//!
//! It is one page with every verb in it, because `git hand --help` is turned by git into
//! `man git-hand` and a reader should find `spawn`'s flags there, not a pointer to a page that
//! does not exist. It stands alone: examples of the everyday flows, a value name for every value
//! in every synopsis, the exit statuses, and a pointer to the longer documentation only where
//! the install put it (`--doc-dir`, which install.sh passes: `$PREFIX/share/doc/git-hand`).

use std::path::Path;

use clap::{Arg, ArgAction, Command};
use clap_mangen::Man;
use clap_mangen::roff::{Roff, bold, italic, roman};

/// Renders git-hand.1. `doc_dir` is where README.md and docs/ were installed, if they were: the
/// page names files there, and no file anywhere else.
pub fn render(doc_dir: Option<&Path>) -> std::io::Result<String> {
    let mut cmd = page_command(doc_dir);
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
    let mut roff = Roff::new();
    roff.control("SH", ["SYNOPSIS"]);
    synopsis(&mut roff, &cmd);
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
    examples(&mut roff);
    exit_status(&mut roff, &cmd);
    titled_list(&mut roff, "ENVIRONMENT", ENVIRONMENT);
    titled_list(&mut roff, "CONFIGURATION", CONFIGURATION);
    titled_list(&mut roff, "FILES", FILES);
    if let Some(dir) = doc_dir {
        roff.control("TP", [])
            .text([bold(dir.display().to_string())])
            .text([roman(DOCS)]);
    }
    roff.control("SH", ["SEE ALSO"]);
    roff.text([roman(SEE_ALSO)]);
    roff.to_writer(&mut out)?;
    man.render_version_section(&mut out)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// The command tree as the page shows it: the CLI's (the global `--json` included) without
/// clap's generated `help` verb, and with `--json`'s pointer to the JSON shapes naming the
/// installed cli.md, or no file when the docs were not installed.
fn page_command(doc_dir: Option<&Path>) -> Command {
    let json_help = match doc_dir {
        Some(dir) => format!(
            "Print one JSON object instead of text (its fields: {}); needs a verb",
            dir.join("docs/cli.md").display()
        ),
        None => "Print one JSON object instead of text; needs a verb".to_string(),
    };
    super::command()
        .disable_help_subcommand(true)
        .mut_arg("json", |a| a.help(json_help))
}

/// What install.sh puts in the documentation directory, as the page names it (README.md's links
/// into docs/ keep working there).
const DOCS: &str = "The longer documentation, installed with this page: README.md, \
     docs/concepts.md (the model: slots, leases, tokens, verdicts), docs/cli.md (every verb, flag \
     and JSON shape), docs/hooks.md (the hooks beside husky, lefthook and pre-commit), \
     docs/architecture.md and docs/performance.md.";

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
    roff.control("PP", []);
    synopsis(&mut roff, &local);
    roff.to_writer(out)?;
    if local.get_arguments().any(|a| !a.is_hide_set()) {
        let mut section = Vec::new();
        Man::new(local).render_options_section(&mut section)?;
        out.extend(without_heading(&section));
    }
    Ok(())
}

/// A synopsis line with the value name of every option that takes one (`[--ttl <duration>]`),
/// which clap_mangen 0.3 leaves out: `git hand spawn [--base <ref>] ... <task> [-- <command>...]`.
fn synopsis(roff: &mut Roff, cmd: &Command) {
    let name = cmd.get_bin_name().unwrap_or_else(|| cmd.get_name());
    let mut line = vec![bold(name)];
    let visible = || cmd.get_arguments().filter(|a| !a.is_hide_set());
    for opt in visible().filter(|a| !a.is_positional()) {
        let flag = match (opt.get_short(), opt.get_long()) {
            (Some(s), Some(l)) => format!("-{s}|--{l}"),
            (Some(s), None) => format!("-{s}"),
            (None, Some(l)) => format!("--{l}"),
            (None, None) => continue,
        };
        let (open, close) = if opt.is_required_set() {
            ("", "")
        } else {
            ("[", "]")
        };
        line.extend([roman(format!(" {open}")), bold(flag)]);
        if takes_value(opt) {
            line.extend([roman(" "), italic(value_names(opt))]);
        }
        line.push(roman(close));
    }
    for arg in visible().filter(|a| a.is_positional()) {
        let many = if takes_many(arg) { "..." } else { "" };
        let value = italic(format!("{}{many}", value_names(arg)));
        line.extend(match (arg.is_last_set(), arg.is_required_set()) {
            (true, _) => vec![roman(" [-- "), value, roman("]")],
            (false, true) => vec![roman(" "), value],
            (false, false) => vec![roman(" ["), value, roman("]")],
        });
    }
    if cmd.has_subcommands() {
        let value = italic("<command>");
        line.extend(match cmd.is_subcommand_required_set() {
            true => vec![roman(" "), value],
            false => vec![roman(" ["), value, roman("]")],
        });
    }
    roff.text(line);
}

/// Whether the argument takes a value (`--ttl 30m`), not a flag (`--force`).
fn takes_value(arg: &Arg) -> bool {
    matches!(arg.get_action(), ArgAction::Set | ArgAction::Append)
}

fn takes_many(arg: &Arg) -> bool {
    matches!(arg.get_action(), ArgAction::Append)
        || arg.get_num_args().is_some_and(|n| n.max_values() > 1)
}

/// `<duration>`: the argument's value names, each in angle brackets.
fn value_names(arg: &Arg) -> String {
    match arg.get_value_names() {
        Some(names) => names
            .iter()
            .map(|n| format!("<{n}>"))
            .collect::<Vec<_>>()
            .join(" "),
        None => format!("<{}>", arg.get_id()),
    }
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

/// EXAMPLES: each flow in a sentence, then its commands as typed.
fn examples(roff: &mut Roff) {
    roff.control("SH", ["EXAMPLES"]);
    for (what, commands) in EXAMPLES {
        roff.control("PP", []).text([roman(*what)]);
        roff.control("PP", [])
            .control("RS", ["4"])
            .control("nf", []);
        for command in *commands {
            roff.text([roman(*command)]);
        }
        roff.control("fi", []).control("RE", []);
    }
}

/// EXIT STATUS: the rows of the table `git hand --help` prints (so the two cannot disagree),
/// then the verbs whose status means more.
fn exit_status(roff: &mut Roff, cmd: &Command) {
    roff.control("SH", ["EXIT STATUS"]);
    let after = cmd
        .get_after_help()
        .map(|s| s.to_string())
        .unwrap_or_default();
    roff.control("nf", []);
    for row in after
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
    {
        roff.text([roman(row)]);
    }
    roff.control("fi", []);
    roff.control("PP", []).text([roman(EXIT_STATUS_MORE)]);
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
     one machine, records every lease in a SQLite ledger, and installs pre-push, post-checkout and \
     reference-transaction hooks so that git itself refuses the push of a holder whose lease was superseded, expired or \
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

/// The everyday flows. Every line starting `git hand` parses (a unit test says so).
const EXAMPLES: &[(&str, &[&str])] = &[
    (
        "Give a coding agent a slot of its own for 30 minutes, renewed while it runs, with its \
         credential (GIT_HAND_LEASE, GIT_HAND_TOKEN, GIT_HAND_TASK) in its environment. spawn \
         exits with the agent's status; the task stays active until it is torn down:",
        &["git hand spawn fix-login --ttl 30m --exec -- my-agent"],
    ),
    (
        "Work in a task yourself: spawn prints the slot's path, env the credential a push \
         presents:",
        &[
            "cd \"$(git hand spawn fix-login --ttl 2h)\"",
            "eval \"$(git hand env fix-login)\"",
            "git push -u origin HEAD",
        ],
    ),
    (
        "See the tasks and their slots; in a worktree, whether a push from it would be allowed:",
        &["git hand list", "git hand", "git hand check"],
    ),
    (
        "Extend a task's leases before they run out (the token stays):",
        &["git hand renew fix-login --ttl 1h"],
    ),
    (
        "End a task: its slot is freed (files kept), its leases released, its branch kept. It is \
         refused while the slot holds work that is not landed; --force discards uncommitted and \
         untracked files (commits stay on the branch):",
        &[
            "git hand teardown fix-login",
            "git hand done fix-login --force",
        ],
    ),
    (
        "Lease an issue, so two agents never work on the same one; spawn --issue takes it with \
         the task, and teardown releases it:",
        &[
            "git hand lease acquire 42 --holder agent-7 --ttl 2h",
            "git hand lease release 42 --holder agent-7",
            "git hand spawn issue-42 --issue 42 --ttl 30m --exec -- my-agent",
        ],
    ),
    (
        "Install the hooks (spawn also does). Where a hook manager owns core.hooksPath (husky, \
         lefthook, pre-commit), print the lines to add to its configuration, or install into \
         that directory beside its hooks:",
        &[
            "git hand install",
            "git hand install --manual",
            "git hand install --hooks-path",
        ],
    ),
    (
        "After a crash (a killed spawn or teardown, a lost ledger), find what is inconsistent, \
         then settle each problem with its safe action:",
        &["git hand doctor", "git hand doctor --repair"],
    ),
    (
        "Remove the free slots that hold nothing worth keeping (a dry run first):",
        &["git hand prune", "git hand prune --yes"],
    ),
];

const EXIT_STATUS_MORE: &str = "spawn --exec exits with its command's status (128 plus the \
     signal's number when a signal killed it); check exits 1 when a push would be refused; \
     doctor exits 3 while problems are left.";

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
    (
        "hand.fenceRefs",
        "When true (the default), the reference-transaction hook refuses a ref update in a slot by \
         a process whose credential is not the slot's current lease.",
    ),
    (
        "hand.remoteFence",
        "When true, the remote checks every push's lease (git hand install --server there), so the \
         credential git hand env prints also makes each push present it as push options.",
    ),
    (
        "hand.include",
        "A .gitignore pattern of ignored files a new slot gets from the main worktree; once per \
         pattern (git config --add). The main worktree's .worktreeinclude is read as well (see \
         FILES).",
    ),
    (
        "hand.onCreate, hand.onReuse, hand.onTeardown",
        "Setup commands run in a slot when it is made, reused or torn down (from .handconfig only \
         after git hand trust, which refuses a file holding control characters unless given \
         --allow-control-characters; every command is shown escaped).",
    ),
    (
        "hand.setupTimeout",
        "How long one setup command may run (default 10m).",
    ),
    (
        "hand.claudeTtl",
        "The lease time of a slot a Claude Code session gets from its WorktreeCreate hook \
         (default: open-ended; the task ends at WorktreeRemove or teardown).",
    ),
    (
        "hand.installHooks",
        "When false, spawn never installs git-hand's hooks (git hand uninstall sets it).",
    ),
    (
        "hand.machine",
        "On a team ledger, this machine's name (default: the machine id, /etc/machine-id on Linux, \
         the IOPlatformUUID on macOS).",
    ),
    (
        "hand.remoteUrl, hand.requireLease",
        "On the server, in the bare repository: a URL clients push to it by, and a branch pattern \
         a push may update only under a current lease; once per value (git config --add).",
    ),
];

const FILES: &[(&str, &str)] = &[
    (
        "<main worktree>/.handconfig",
        "The repository's committed hand.* settings, in git's config syntax. Read only when it is \
         a regular file of at most 1 MiB, never through a symbolic link; anything else (a link, \
         a FIFO, a device, a larger file) is an error naming it. Its setup commands run only \
         after git hand trust, which keeps its approvals in $XDG_STATE_HOME/git-hand/trusted/ \
         (created 0700).",
    ),
    (
        "<main worktree>/.worktreeinclude",
        "Patterns, in .gitignore syntax, of ignored files a new slot gets from the main worktree, \
         as Claude Code, Conductor, worktrunk, gtr and opencode read it; matched on its own \
         (its ! lines never undo hand.include), and only an untracked path git ignores is \
         copied. Read as .handconfig is: a link, a FIFO, a device or a file over 1 MiB is not \
         read, and spawn warns, naming it, and copies nothing it names.",
    ),
    (
        "$XDG_STATE_HOME/git-hand/ledger.sqlite",
        "The ledger (~/.local/state/git-hand/ledger.sqlite when XDG_STATE_HOME is unset).",
    ),
    (
        "$XDG_DATA_HOME/git-hand/pools/<repo>-<id>/<n>/<repo>",
        "Slot n of a repository's pool (~/.local/share/git-hand/pools when XDG_DATA_HOME is unset).",
    ),
    (
        "$(git rev-parse --git-path hooks)/pre-push, post-checkout, reference-transaction",
        "The hook shims git hand install writes; a hook that was there is kept as \
         <hook>.git-hand-chained and still runs.",
    ),
];

const SEE_ALSO: &str = "git-worktree(1), githooks(5); git hand <command> -h for one verb's flags.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_man_page_documents_every_visible_verb_and_its_flags() {
        let page = render(None).unwrap();
        assert!(page.contains("\n.TH GIT-HAND 1 "), "{page}");
        let mut cmd = page_command(None);
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
    fn the_configuration_section_names_every_key_git_hand_reads() {
        for key in crate::ops::repo::settings::KEYS {
            assert!(
                CONFIGURATION
                    .iter()
                    .any(|(names, _)| names.split(", ").any(|n| n == key.name)),
                "{} is not in the man page's CONFIGURATION",
                key.name
            );
        }
    }

    #[test]
    fn every_example_command_parses() {
        for (_, commands) in EXAMPLES {
            for line in *commands {
                let Some(args) = line.strip_prefix("git hand") else {
                    continue;
                };
                assert!(!line.contains('"'), "quote-free, so it splits: {line}");
                let argv = std::iter::once("git-hand").chain(args.split_whitespace());
                if let Err(e) = super::super::command().try_get_matches_from(argv) {
                    panic!("example {line:?} does not parse: {e}");
                }
            }
        }
    }

    #[test]
    fn without_a_doc_dir_the_page_names_no_documentation_file() {
        let page = render(None).unwrap();
        assert!(!page.contains(".md"), "{page}");
        let page = render(Some(Path::new("/opt/x/share/doc/git-hand"))).unwrap();
        assert!(page.contains("/opt/x/share/doc/git\\-hand/docs/cli.md"));
    }
}
