//! How a [`Hint`] reads: `RUN   # WHY`, git-hand's own commands spelled `git hand ARGS`.

use crate::hint::{Hint, Run};

/// A hint in JSON is its line, as the text shows it.
impl serde::Serialize for Hint {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&line(self))
    }
}

/// How a user runs what `run` names.
pub fn command(run: &Run) -> String {
    match run {
        Run::Hand(args) => format!("git hand {args}"),
        Run::Other(line) => line.clone(),
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
}
