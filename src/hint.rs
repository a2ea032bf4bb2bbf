//! A hint: the command that gets the user out of an error, and why. Data, not words: every room
//! that can fail says which command and why; the command line spells it, once
//! (`cli::hint`), as `RUN   # WHY`, in text and JSON alike.

/// The command that gets the user out of an error, and why it helps (`None`: it says itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hint {
    pub run: Run,
    pub why: Option<String>,
}

/// What a [`Hint`] asks the user to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Run {
    /// One of git-hand's own commands: its arguments after `git hand` (the command line spells
    /// how git-hand is run).
    Hand(String),
    /// Any other command line, or a step in words, as the user types or reads it.
    Other(String),
}

impl Hint {
    /// `git hand ARGS`.
    pub fn hand(args: impl Into<String>) -> Self {
        Self {
            run: Run::Hand(args.into()),
            why: None,
        }
    }

    /// Any other command line, or a step in words.
    pub fn run(line: impl Into<String>) -> Self {
        Self {
            run: Run::Other(line.into()),
            why: None,
        }
    }

    /// This hint with why it helps.
    pub fn why(mut self, why: impl Into<String>) -> Self {
        self.why = Some(why.into());
        self
    }

    /// Whether this hint runs git-hand's `verb` (its arguments start with it).
    pub(crate) fn runs_hand(&self, verb: &str) -> bool {
        matches!(&self.run, Run::Hand(args) if args.split_whitespace().next() == Some(verb))
    }
}
