//! Pinned help (issue 12): `git hand --help`, `-h`, `help`, the `--help` of every verb and
//! sub-verb (the hidden `hook` and `generate` too) and `--version`, as a snapshot with the exit
//! status, so a change of any word a user reads in help is a reviewed diff.
//!
//! Unlike `support::shot`, the text is kept byte for byte (clap's column alignment included):
//! help varies with nothing but the version, which is replaced by `[version]`. Accept a change
//! as `pinned.rs` says (`INSTA_UPDATE=always cargo test --locked pinned_help::`).

use crate::support::TestEnv;

/// Every command line whose help is pinned, in the order `git hand --help` lists the verbs.
const HELP: &[&str] = &[
    "--help",
    "-h",
    "help",
    "help lease acquire",
    "lease --help",
    "lease acquire --help",
    "lease renew --help",
    "lease release --help",
    "lease current --help",
    "lease list --help",
    "log --help",
    "spawn --help",
    "spawn -h",
    "list --help",
    "status --help",
    "renew --help",
    "env --help",
    "teardown --help",
    "done --help",
    "prune --help",
    "doctor --help",
    "check --help",
    "config --help",
    "trust --help",
    "install --help",
    "uninstall --help",
    "hook --help",
    "generate --help",
    "generate man --help",
    "generate completion --help",
    "--version",
    "-V",
];

/// `$ git hand <args>`, the exit status, stdout and stderr, verbatim but for the version.
fn raw(env: &TestEnv, args: &str) -> String {
    let argv: Vec<&str> = args.split(' ').collect();
    let run = env.hand(&env.path("work"), &argv);
    let mut out = format!("$ git hand {args}\n[exit status: {}]\n", run.code);
    if !run.stdout.is_empty() {
        out += "--- stdout\n";
        out += &run.stdout;
    }
    if !run.stderr.is_empty() {
        out += "--- stderr\n";
        out += &run.stderr;
    }
    out.replace(env!("CARGO_PKG_VERSION"), "[version]")
}

#[test]
fn the_help_of_every_verb_and_the_version() {
    let env = TestEnv::new();
    let text: String = HELP.iter().map(|args| raw(&env, args)).collect();
    insta::assert_snapshot!("help", text);
}

/// A hook verb takes git's arguments as they come, `--help` included: `hook pre-push --help`
/// judges a push to a remote named `--help` (outside a repository: refused, and said so), the
/// other two run as git would run them. What they print is pinned, as it is.
#[test]
fn the_hook_verbs_take_help_as_one_of_gits_arguments() {
    let env = TestEnv::new();
    let text: String = [
        "hook pre-push --help",
        "hook post-checkout --help",
        "hook reference-transaction --help",
    ]
    .iter()
    .map(|args| crate::support::normalize(&env, &raw(&env, args)))
    .collect();
    insta::assert_snapshot!("help_hook_verbs", text);
}
