//! The man page stands alone (issue 13, item 8): rendered by the binary (`git-hand generate
//! man`), it has an EXAMPLES section with the everyday flows, an EXIT STATUS section, a value
//! name for every option that takes a value in every synopsis (the clap tree walked, so a new
//! flag without one fails here), and, installed by install.sh, it names no file the install did
//! not put on disk ([`assert_names_only_installed_files`], which the newcomer test runs on its
//! install).

use std::path::Path;

use clap::{ArgAction, Command};

use crate::support::TestEnv;

/// The page the binary renders, with `args` after `generate man`.
fn page(args: &[&str]) -> String {
    let env = TestEnv::new();
    let mut all = vec!["generate", "man"];
    all.extend(args);
    env.hand(&env.path("home"), &all).ok()
}

/// Roff to words: escapes and font changes gone.
fn plain(roff: &str) -> String {
    roff.replace("\\-", "-")
        .replace("\\*(Aq", "'")
        .replace("\\fB", "")
        .replace("\\fI", "")
        .replace("\\fR", "")
}

#[test]
fn the_man_page_has_examples_and_exit_status_sections() {
    let page = page(&[]);
    let sections: Vec<&str> = page.lines().filter(|l| l.starts_with(".SH ")).collect();
    for want in [".SH EXAMPLES", ".SH \"EXIT STATUS\""] {
        assert!(sections.contains(&want), "{want} missing: {sections:?}");
    }
    let text = plain(&page);
    let examples = &text[text.find(".SH EXAMPLES").unwrap()..];
    let examples = &examples[..examples.find("\n.SH ").unwrap()];
    for flow in [
        "git hand spawn fix-login --ttl 30m --exec -- ",
        "git hand list",
        "git hand env fix-login",
        "git hand renew fix-login --ttl ",
        "git hand teardown fix-login",
        "git hand done fix-login",
        "git hand lease acquire 42",
        "git hand install --manual",
        "git hand doctor --repair",
    ] {
        assert!(
            examples.contains(flow),
            "no example of {flow:?}:\n{examples}"
        );
    }
    let status = &text[text.find(".SH \"EXIT STATUS\"").unwrap()..];
    for code in ["0  ok", "1  refused", "2  usage", "3  precondition"] {
        assert!(status.contains(code), "{code:?} missing:\n{status}");
    }
}

#[test]
fn every_option_that_takes_a_value_has_a_value_name_in_its_synopsis() {
    let page = page(&[]);
    let mut cmd = git_hand::cli::command().disable_help_subcommand(true);
    cmd.build();
    let mut checked = 0;
    check_synopses(&cmd, true, &page, &mut checked);
    assert!(checked >= 10, "only {checked} options checked");
}

/// For `cmd` and each visible verb below it: each visible option that takes a value has a value
/// name, and the synopsis line of `cmd` in the page shows it after the option. A global option
/// (`-C`) is shown once, in the synopsis of `git hand` (`top`).
fn check_synopses(cmd: &Command, top: bool, page: &str, checked: &mut usize) {
    let name = cmd.get_bin_name().unwrap();
    let start = format!("\\fB{}\\fR", name.replace('-', "\\-"));
    let synopsis = page
        .lines()
        .find(|l| l.starts_with(&format!("{start} ")) || *l == start)
        .unwrap_or_else(|| panic!("no synopsis for {name}"));
    for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
        let shown_here = top || !arg.is_global_set();
        if !shown_here || !matches!(arg.get_action(), ArgAction::Set | ArgAction::Append) {
            continue;
        }
        let value = arg
            .get_value_names()
            .and_then(|names| names.first())
            .unwrap_or_else(|| panic!("{name}: {} has no value_name", arg.get_id()));
        let value = value.replace('-', "\\-");
        let shown = match (arg.get_long(), arg.get_short()) {
            // `--limit`, or `-n|--limit` when the flag has a short form too.
            (Some(long), _) => format!("\\-\\-{}\\fR \\fI<{value}>", long.replace('-', "\\-")),
            (None, Some(short)) => format!("\\fB\\-{short}\\fR \\fI<{value}>"),
            (None, None) => format!("\\fI<{value}>"),
        };
        assert!(
            synopsis.contains(&shown),
            "{name}: {} shown without its value name {value}:\n{synopsis}",
            arg.get_id()
        );
        *checked += 1;
    }
    for verb in cmd.get_subcommands().filter(|c| !c.is_hide_set()) {
        check_synopses(verb, false, page, checked);
    }
}

/// Every file the installed page names under `prefix`, and every documentation file it names
/// (docs/cli.md, relative to the documentation directory), exists after install.sh; and it names
/// the documentation directory at all, so this is no empty check.
pub fn assert_names_only_installed_files(prefix: &Path) {
    let page = std::fs::read_to_string(prefix.join("share/man/man1/git-hand.1")).unwrap();
    let text = plain(&page);
    let doc_dir = prefix.join("share/doc/git-hand");
    assert!(
        text.contains(doc_dir.to_str().unwrap()),
        "the page does not name {}:\n{text}",
        doc_dir.display()
    );
    let prefix_text = prefix.to_str().unwrap();
    let mut named = vec![];
    for word in text.split(|c: char| c.is_whitespace() || ",;()\"".contains(c)) {
        let word = word.trim_end_matches(['.', ':']);
        if word.starts_with(prefix_text) {
            named.push(Path::new(word).to_path_buf());
        } else if word.ends_with(".md") {
            assert!(
                !word.starts_with('/'),
                "names {word}, outside {prefix_text}"
            );
            named.push(doc_dir.join(word));
        }
    }
    assert!(named.len() >= 6, "{named:?}");
    for path in named {
        assert!(
            path.exists(),
            "the page names {}, which is not installed",
            path.display()
        );
    }
}

#[test]
fn generate_man_names_documentation_files_only_with_a_doc_dir() {
    let bare = page(&[]);
    assert!(!bare.contains(".md"), "{bare}");
    let with = plain(&page(&["--doc-dir", "/usr/share/doc/git-hand"]));
    assert!(
        with.contains("/usr/share/doc/git-hand/docs/cli.md"),
        "{with}"
    );
}

/// `install` puts in three hooks; the man page and `-h` said two (pre-push and post-checkout),
/// so a reader never learnt the reference-transaction hook was there (issue 22 item 15).
#[test]
fn the_man_page_and_help_name_all_three_hooks_install_puts_in() {
    let env = TestEnv::new();
    let home = env.path("home");
    let man = plain(&page(&[])).replace("-\n", "-").replace('\n', " ");
    let short = env.hand(&home, &["-h"]).ok();
    let install = env.hand(&home, &["install", "-h"]).ok();
    for (what, text) in [("man page", &man), ("-h", &short), ("install -h", &install)] {
        assert!(
            text.contains("reference-transaction") && !text.contains("pre-push and post-checkout"),
            "{what} does not name all three hooks:\n{text}"
        );
    }
}
