//! The words a user reads live in `cli` (issue 26, deliver 3): no user-facing sentence naming a
//! `git hand` command is built outside `src/cli`. Looked at: every string literal of shipped code
//! outside `src/cli` (on one line or continued onto the next; `#[cfg(test)]` code, comments and
//! `main.rs` left out). Elsewhere an operation returns facts and [`git_hand::hint::Hint`]s
//! (`Hint::hand("teardown t")`), and a sentence that names a command holds it as data
//! ([`git_hand::hint::Words`]: `say("then run ").hand("install")`); `cli::hint` spells it.

use std::path::Path;

use crate::import_graph::{lex, module_files};

fn names_git_hand(text: &str) -> bool {
    text.match_indices("git hand").any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + "git hand".len()..].chars().next();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '-')
            && !after.is_some_and(|c| c.is_alphanumeric() || c == '-')
    })
}

/// Every literal outside `src/cli` that names a `git hand` command: `module, line N: text`.
fn outside_cli(src: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for (module, text) in module_files(src) {
        if module.first().is_some_and(|m| m == "cli") {
            continue;
        }
        for (line, literal) in lex::strings(&text) {
            if names_git_hand(&literal) {
                let shown: String = literal.split_whitespace().collect::<Vec<_>>().join(" ");
                found.push(format!("{}, line {line}: {shown}", module.join("::")));
            }
        }
    }
    found
}

#[test]
fn no_sentence_naming_a_git_hand_command_is_built_outside_cli() {
    let found = outside_cli(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(
        found.is_empty(),
        "{} string literals outside src/cli name a `git hand` command: say it in cli, or return \
         a Hint (Hint::hand) or Words (say(..).hand(..)) and let cli spell it:\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn a_literal_names_git_hand_only_as_words_and_test_code_is_left_out() {
    assert!(names_git_hand("run git hand doctor"));
    assert!(names_git_hand("git hand"));
    assert!(!names_git_hand("git-hand doctor"));
    assert!(!names_git_hand("git handle"));
    let text = "fn f() { g(\"git hand list\", \"ok\", \"then git hand \\\n  spawn\"); }\n\
                #[cfg(test)]\nmod tests { const T: &str = \"git hand teardown\"; }\n";
    let named: Vec<String> = lex::strings(text)
        .into_iter()
        .filter(|(_, s)| names_git_hand(s))
        .map(|(line, s)| {
            format!(
                "{line}:{}",
                s.split_whitespace().collect::<Vec<_>>().join(" ")
            )
        })
        .collect();
    assert_eq!(named, ["1:git hand list", "1:then git hand \\ spawn"]);
}
