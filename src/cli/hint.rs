//! How a [`Hint`] reads: `RUN   # WHY`, git-hand's own commands spelled `git hand ARGS`.

use std::fmt;

use crate::hint::{Hint, Part, Run, Words};

/// How git-hand's command `args` is run: the one place that spells it.
fn hand_command(args: &str) -> String {
    format!("git hand {args}")
}

/// Words as a user reads them, git-hand's commands spelled as [`command`] spells them.
impl fmt::Display for Words {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for part in self.parts() {
            match part {
                Part::Text(text) => f.write_str(text)?,
                Part::Hand(args) => f.write_str(&hand_command(args))?,
            }
        }
        Ok(())
    }
}

/// Words kept as text (a message, a field of a report) read as a user reads them.
impl From<Words> for String {
    fn from(words: Words) -> Self {
        words.to_string()
    }
}

/// Words in JSON are the text a user reads.
impl serde::Serialize for Words {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A hint in JSON is its line, as the text shows it.
impl serde::Serialize for Hint {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&line(self))
    }
}

/// How a user runs what `run` names.
pub fn command(run: &Run) -> String {
    match run {
        Run::Hand(args) => hand_command(args),
        Run::Other(line) => line.to_string(),
    }
}

/// One hint: `RUN   # WHY`, or the command alone.
pub fn line(hint: &Hint) -> String {
    let command = command(&hint.run);
    match &hint.why {
        Some(why) => format!("{command}   # {why}"),
        None => command,
    }
}

/// A list of hints, each on a line of its own. Not aligned in a column: a test or a script that
/// looks for one hint finds it spelled the same in every list.
pub fn lines(hints: &[Hint]) -> Vec<String> {
    hints.iter().map(line).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hint_reads_run_then_why_and_a_bare_command_stays_bare() {
        let hints = [
            Hint::hand("list").why("which tasks hold slots"),
            Hint::hand("teardown <task>").why("free one"),
            Hint::run("git config hand.maxSlots 32"),
        ];
        assert_eq!(
            lines(&hints),
            [
                "git hand list   # which tasks hold slots",
                "git hand teardown <task>   # free one",
                "git config hand.maxSlots 32",
            ]
        );
        assert_eq!(line(&Hint::hand("doctor")), "git hand doctor");
    }

    #[test]
    fn words_spell_git_hands_commands_where_they_name_one_in_text_and_json() {
        use crate::hint::{cd_to_slot, say};
        let words = say("reports it; ")
            .hand("doctor --repair")
            .text(" sets it aside");
        assert_eq!(
            words.to_string(),
            "reports it; git hand doctor --repair sets it aside"
        );
        assert_eq!(
            serde_json::to_string(&words).unwrap(),
            "\"reports it; git hand doctor --repair sets it aside\""
        );
        assert_eq!(cd_to_slot("t").to_string(), "cd \"$(git hand path t)\"");
        let hint = Hint::hand("doctor").why(say("then ").hand("spawn t"));
        assert_eq!(line(&hint), "git hand doctor   # then git hand spawn t");
    }
}
