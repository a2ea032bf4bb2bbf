//! The command line: clap definitions, one file per verb, the exit-code table and rendering.
//! A verb file turns arguments into options, calls one operation and renders its outcome as text
//! or `--json`; the logic lives in [`crate::ops`].

mod check;
mod complete;
mod config;
mod env;
mod error;
mod findings;
mod generate;
pub mod hint;
mod hook;
mod install;
mod lease;
mod ledger;
mod list;
mod log;
mod maintenance;
mod manpage;
pub mod output;
mod path;
mod recipe;
mod refusal;
mod renew;
mod setup;
mod shape;
mod spawn;
mod status;
mod teardown;
mod trust;
mod way_out;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Arg, ArgAction, CommandFactory, FromArgMatches, Parser, Subcommand};

pub use error::{Failure, Kind};

use crate::hint::Hint;
use crate::ops::Context;

const AFTER_HELP: &str = "\
Exit status:
  0  ok
  1  refused or failed
  2  usage error (bad arguments or hand.* configuration; nothing was changed)
  3  precondition: held by another, ledger busy, or unsafe to proceed

See docs/cli.md for every verb, flag and JSON shape.";

/// Lease a repository's worktrees to parallel tasks; git refuses the push of a stale holder.
#[derive(Debug, Parser)]
#[command(name = "git-hand", bin_name = "git hand", version, after_help = AFTER_HELP)]
pub(crate) struct Cli {
    /// Run as if started in <path>.
    #[arg(short = 'C', value_name = "path", global = true)]
    pub dir: Option<PathBuf>,
    /// `--json`: print the outcome as one JSON object. One flag for every verb, added by
    /// [`command`] rather than derived here, so that [`parse`] can ask clap about a command line
    /// without it.
    #[arg(skip)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The id of the global `--json` flag.
const JSON: &str = "json";

/// The whole command line: the derived [`Cli`] and the global `--json`. Everything that parses
/// or describes the command line (the man page, the completions) starts here.
pub fn command() -> clap::Command {
    Cli::command()
        .arg(
            Arg::new(JSON)
                .long("json")
                .global(true)
                .action(ArgAction::SetTrue)
                .help("Print one JSON object instead of text (fields: docs/cli.md); needs a verb"),
        )
        // Said here, not in `SpawnArgs`: the command line without `--json` must stay whole.
        // (`mut_subcommands` and `mut_args` keep the order help and completions show.)
        .mut_subcommands(|verb| match verb.get_name() {
            "spawn" => verb.mut_args(|a| match a.get_id().as_str() {
                "print_path" => a.conflicts_with(JSON),
                _ => a,
            }),
            _ => verb,
        })
}

/// Parses our arguments. A verb with no JSON output ([`takes_json`]) refuses `--json` as it did
/// before the flag was global: parsed again without the flag, clap gives the very usage error it
/// always gave (or, for a hook's own arguments, takes `--json` as one of them).
fn parse(argv: Vec<std::ffi::OsString>) -> Result<Cli, clap::Error> {
    if let Some(hook) = hook::parse_direct(argv.iter().cloned()) {
        return Ok(Cli {
            dir: None,
            json: false,
            command: Some(Command::Hook(hook)),
        });
    }
    let matches = command().try_get_matches_from(&argv)?;
    let mut cli = Cli::from_arg_matches(&matches)?;
    cli.json = matches.get_flag(JSON);
    if cli.json && !takes_json(&cli.command) {
        return Cli::try_parse_from(argv);
    }
    Ok(cli)
}

/// Whether the verb prints its outcome as JSON under `--json`: all of them but the hidden
/// `hook`, `generate` and `complete`, and `git hand` with no verb.
fn takes_json(command: &Option<Command>) -> bool {
    !matches!(
        command,
        None | Some(Command::Hook(_) | Command::Generate(_) | Command::Complete(_))
    )
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Issue leases: acquire, renew, release, current, list.
    #[command(subcommand)]
    Lease(lease::LeaseCommand),
    /// The ledger itself: copy this machine's into a team ledger.
    #[command(subcommand)]
    Ledger(ledger::LedgerCommand),
    /// The ledger's event log, newest first.
    Log(log::LogArgs),
    /// Lease a slot to a task and check out its branch there; prints the path.
    Spawn(spawn::SpawnArgs),
    /// Active tasks and free slots.
    List(list::ListArgs),
    /// Print a task's directory: cd "$(git hand path <task>)".
    Path(path::PathArgs),
    /// The task and lease of the current worktree, and the verdict a push would get.
    Status,
    /// Extend a task's leases.
    Renew(renew::RenewArgs),
    /// Print `export` lines for a task's credential.
    Env(env::EnvArgs),
    /// End a task: free its slot (files kept), release its leases, keep its branch.
    #[command(visible_alias = "done")]
    Teardown(teardown::TeardownArgs),
    /// Remove free slots that hold nothing worth keeping (dry run unless --yes).
    Prune(maintenance::PruneArgs),
    /// Find and (with --repair) settle what crashes left inconsistent.
    Doctor(maintenance::DoctorArgs),
    /// The verdict the pre-push hook would give this worktree, without pushing (exit 1 if refused).
    Check,
    /// Every hand.* value in effect and where it comes from (git config, .handconfig, default).
    Config,
    /// Approve this exact .handconfig, so its setup commands may run.
    Trust(trust::TrustArgs),
    /// What the installed hooks run (not for people).
    #[command(subcommand, hide = true)]
    Hook(hook::HookCommand),
    /// Install the pre-push, post-checkout and reference-transaction hooks into this repository.
    Install(install::InstallArgs),
    /// Remove git-hand's hooks and restore exactly what was there before.
    Uninstall(install::UninstallArgs),
    /// The man page and shell completions, from these very definitions (install.sh runs it).
    #[command(subcommand, hide = true)]
    Generate(generate::GenerateCommand),
    /// The candidates the shell completions ask for: task names, refs (not for people).
    #[command(subcommand, hide = true)]
    Complete(complete::CompleteCommand),
}

/// What a verb printed and how it should exit.
pub(crate) struct Done {
    pub stdout: String,
    pub code: ExitCode,
}

impl Done {
    pub fn ok(stdout: String) -> Self {
        Self {
            stdout,
            code: ExitCode::SUCCESS,
        }
    }
    pub fn with(stdout: String, kind: Option<Kind>) -> Self {
        Self {
            stdout,
            code: kind.map_or(ExitCode::SUCCESS, Kind::code),
        }
    }
    /// `value` as pretty JSON (docs/cli.md has every verb's shape).
    pub fn json(value: &impl serde::Serialize, kind: Option<Kind>) -> Result<Self, Failure> {
        let text = serde_json::to_string_pretty(value).map_err(|e| {
            Failure::new(Kind::Failed, format!("cannot render the JSON output: {e}"))
        })?;
        Ok(Self::with(text + "\n", kind))
    }
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = match parse(std::env::args_os().collect()) {
        Ok(cli) => cli,
        Err(e) => {
            if !e.use_stderr() {
                let _ = e.print(); // --help, --version
                return ExitCode::SUCCESS;
            }
            if argv_wants_json(std::env::args_os()) {
                print_json_error(&parse_failure(&e.render().to_string()));
            }
            let _ = e.print();
            return Kind::Usage.code();
        }
    };
    let json = cli.json;
    match run(cli) {
        Ok(done) => {
            print_stdout(&done.stdout);
            done.code
        }
        Err(failure) => {
            report(&failure, json);
            failure.kind.code()
        }
    }
}

/// Whether `--json` is among our arguments (before a `--`, after which the arguments are
/// `--exec`'s command): an argument error is then also printed as the JSON error object, since
/// clap could not tell us which verb asked for it.
fn argv_wants_json(argv: impl Iterator<Item = std::ffi::OsString>) -> bool {
    argv.skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--json")
}

/// The failure of an argument error, from clap's rendering: its first paragraph (without
/// `error: `) on one line is the message; each `tip:` and `--help` on the verb are the hints.
fn parse_failure(rendered: &str) -> Failure {
    let mut paragraphs = rendered.split("\n\n");
    let message = paragraphs
        .next()
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ");
    let message = message.strip_prefix("error: ").unwrap_or(&message);
    let mut failure = Failure::new(Kind::Usage, message);
    for paragraph in paragraphs {
        let paragraph = paragraph.trim();
        if let Some(tip) = paragraph.strip_prefix("tip: ") {
            failure = failure.hint(Hint::run(tip));
        } else if let Some(usage) = paragraph.strip_prefix("Usage: ") {
            let verb: Vec<&str> = usage
                .split_whitespace()
                .take_while(|w| !w.starts_with(['[', '<', '-']))
                .collect();
            failure = failure.hint(Hint::run(format!("{} --help", verb.join(" "))));
        }
    }
    if !failure
        .hints
        .iter()
        .any(|h| hint::command(&h.run).ends_with("--help"))
    {
        failure = failure.hint(Hint::hand("--help"));
    }
    failure
}

/// Whether the verb works on a repository. Those are refused outside one before the ledger is
/// opened, so the usage error leaves nothing behind (issue 10).
fn needs_repo(command: &Option<Command>) -> bool {
    match command {
        Some(Command::Lease(lease::LeaseCommand::List { all, .. })) => !all,
        Some(
            Command::Log(_)
            | Command::Ledger(_)
            | Command::Hook(_)
            | Command::Generate(_)
            | Command::Complete(_),
        )
        | None => false,
        Some(_) => true,
    }
}

/// `doctor` with a team ledger's URL runs anywhere (issue 22): the owner creates the schema
/// with it (docs/team.md, Setting it up) before any repository uses the ledger; outside a
/// repository it checks the ledger alone.
fn doctor_of_a_team_ledger(command: &Option<Command>, ctx: &Context) -> bool {
    matches!(command, Some(Command::Doctor(_)))
        && ctx.repo_opt().is_none()
        && matches!(
            ctx.ledger_location().map(|l| l.place),
            Ok(crate::ledger::Place::Server(_))
        )
}

fn run(cli: Cli) -> Result<Done, Failure> {
    let cwd = match &cli.dir {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|e| {
            Failure::new(
                Kind::Failed,
                format!("cannot read the current directory: {e}"),
            )
        })?,
    };
    let ctx = Context::new(cwd);
    if needs_repo(&cli.command) && !doctor_of_a_team_ledger(&cli.command, &ctx) {
        ctx.repo()?;
    }
    let json = cli.json;
    let done = match cli.command {
        Some(Command::Lease(cmd)) => lease::run(&ctx, cmd, json),
        Some(Command::Ledger(cmd)) => ledger::run(&ctx, cmd, json),
        Some(Command::Log(args)) => log::log(&ctx, args, json),
        Some(Command::Spawn(args)) => spawn::run(&ctx, args, json),
        Some(Command::List(args)) => list::list(&ctx, args, json),
        Some(Command::Path(args)) => path::path(&ctx, args, json),
        Some(Command::Status) => status::status(&ctx, json),
        Some(Command::Renew(args)) => renew::renew(&ctx, args, json),
        Some(Command::Env(args)) => env::env(&ctx, args, json),
        Some(Command::Teardown(args)) => teardown::run(&ctx, args, json),
        Some(Command::Prune(args)) => maintenance::prune(&ctx, args, json),
        Some(Command::Doctor(args)) => maintenance::doctor(&ctx, args, json),
        Some(Command::Check) => check::check(&ctx, json),
        Some(Command::Config) => config::config(&ctx, json),
        Some(Command::Trust(args)) => trust::trust(&ctx, &args, json),
        Some(Command::Hook(cmd)) => hook::run(&ctx, cmd),
        Some(Command::Install(args)) => install::install(&ctx, args, json),
        Some(Command::Uninstall(args)) => install::uninstall(&ctx, args, json),
        Some(Command::Generate(cmd)) => generate::run(cmd),
        Some(Command::Complete(cmd)) => complete::run(&ctx, cmd),
        None => overview(&ctx),
    };
    let mut err = std::io::stderr().lock();
    for note in ctx.take_notices() {
        let _ = writeln!(err, "git-hand: note: {note}");
    }
    done
}

/// `git hand` with no verb: the verdict for this worktree, then the repository's active tasks.
/// It only reads: a repository git-hand never saw gets no ledger created for it.
fn overview(ctx: &Context) -> Result<Done, Failure> {
    if ctx.repo().is_err() {
        return Err(Failure::new(
            Kind::Usage,
            "not in a git repository, so there is no worktree or task to show",
        )
        .hint(Hint::run(
            "cd into a repository (or pass -C <path>), then run: git hand",
        ))
        .hint(Hint::hand("--help").why("every verb")));
    }
    let p = output::paint(ctx);
    let here = crate::ops::on_hook::here(ctx)?;
    let mut out = match &here.workdir {
        Some(dir) => format!("worktree {}\n", dir.display()),
        None => String::new(),
    };
    out.push_str(&status::render_here(&here, p));
    out.push('\n');
    let ledger = ctx.open_existing(&ctx.ledger_location()?.place)?;
    let listing = match ledger {
        Some(mut ledger) => Some(crate::ops::task::tasks::list(
            ctx,
            &mut ledger,
            crate::ledger::Tasks::Open,
            crate::ops::task::tasks::Reach::Team,
        )?),
        None => None,
    };
    match &listing {
        Some(listing) => out.push_str(&list::render_list(listing, list::Columns::default(), p)),
        None => out.push_str("no tasks\n"),
    }
    if listing.is_none_or(|l| l.tasks.is_empty()) {
        out.push_str("start one: git hand spawn <task>\n");
    }
    out.push_str(&p.dim("(git hand --help lists every verb)"));
    out.push('\n');
    Ok(Done::ok(out))
}

/// Writes to stdout; a closed pipe (`git hand log | head`) ends quietly.
fn print_stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
}

/// Prints a failure: to stderr for people, and as a JSON object on stdout for `--json`.
fn report(failure: &Failure, json: bool) {
    if json {
        print_json_error(failure);
    }
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "git-hand: error: {}", failure.message);
    for hint in hint::lines(&failure.hints) {
        let _ = writeln!(err, "  hint: {hint}");
    }
}

/// The JSON error object every failure prints on stdout under `--json` (docs/cli.md).
fn print_json_error(failure: &Failure) {
    if let Ok(text) = serde_json::to_string_pretty(&error::ErrorJson::of(failure)) {
        print_stdout(&(text + "\n"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_counts_only_before_the_commands_double_dash() {
        let argv = |a: &[&str]| a.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        assert!(argv_wants_json(
            argv(&["git-hand", "spawn", "--json", "t"]).into_iter()
        ));
        assert!(!argv_wants_json(
            argv(&["git-hand", "spawn", "t", "--", "x", "--json"]).into_iter()
        ));
        assert!(
            !argv_wants_json(argv(&["--json"]).into_iter()),
            "argv[0] is the program"
        );
    }

    #[test]
    fn json_is_one_flag_anywhere_before_the_commands_but_only_for_verbs_that_print_it() {
        let parse = |a: &[&str]| parse(a.iter().map(std::ffi::OsString::from).collect());
        for argv in [
            &["git-hand", "--json", "list"][..],
            &["git-hand", "list", "--json"],
            &["git-hand", "lease", "--json", "current", "I-1"],
            &["git-hand", "-C", "/x", "spawn", "t", "--json"],
        ] {
            assert!(parse(argv).is_ok_and(|cli| cli.json), "{argv:?}");
        }
        for argv in [
            &["git-hand", "--json"][..],
            &["git-hand", "-C", "/x", "--json"],
            &["git-hand", "generate", "man", "--json"],
            &["git-hand", "generate", "--json", "completion", "bash"],
            &["git-hand", "-C", "/x", "hook", "--json", "pre-push"],
            &["git-hand", "spawn", "t", "--json", "--print-path"],
        ] {
            let e = parse(argv).err();
            assert!(
                e.is_some_and(|e| e.use_stderr()),
                "{argv:?} is a usage error"
            );
        }
        // A hook's arguments are git's, whatever they look like.
        let cli = parse(&["git-hand", "-C", "/x", "hook", "pre-push", "--json"]);
        assert!(cli.is_ok_and(|cli| !cli.json
            && matches!(
                cli.command,
                Some(Command::Hook(hook::HookCommand::PrePush { args })) if args == ["--json"]
            )));
    }

    #[test]
    fn an_argument_error_becomes_one_line_and_hints() {
        let f = parse_failure(
            "error: the following required arguments were not provided:\n  <ISSUE>\n\n\
             Usage: git hand lease acquire --json <ISSUE>\n\nFor more information, try '--help'.\n",
        );
        assert_eq!(f.kind, Kind::Usage);
        assert_eq!(
            f.message,
            "the following required arguments were not provided: <ISSUE>"
        );
        assert_eq!(hint::lines(&f.hints), ["git hand lease acquire --help"]);
        let f = parse_failure(
            "error: unexpected argument '--x' found\n\n  tip: to pass '--x' as a value, use '-- --x'\n",
        );
        assert_eq!(
            hint::lines(&f.hints),
            ["to pass '--x' as a value, use '-- --x'", "git hand --help"]
        );
    }
}
