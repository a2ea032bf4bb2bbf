//! A hint: the command that gets the user out of an error, and why. Data, not words: every room
//! that can fail says which command and why; the command line spells it, once
//! (`cli::hint`), as `RUN   # WHY`, in text and JSON alike.
//!
//! [`Words`] carry the same idea into a sentence: a message or a reason that names one of
//! git-hand's own commands holds it as data (`say("then run ").hand("install").text(" again")`),
//! and the command line spells it where the words are shown.

/// The command that gets the user out of an error, and why it helps (`None`: it says itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hint {
    pub run: Run,
    pub why: Option<Words>,
}

/// What a [`Hint`] asks the user to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Run {
    /// One of git-hand's own commands: its arguments after `git hand` (the command line spells
    /// how git-hand is run).
    Hand(String),
    /// Any other command line, or a step in words, as the user types or reads it.
    Other(Words),
}

/// Words for a user in which git-hand's own commands are data: `cli::hint` writes each
/// [`Part::Hand`] as a user runs it, and the text around it as it is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Words(Vec<Part>);

/// A piece of [`Words`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    Text(String),
    /// One of git-hand's own commands: its arguments after `git hand`.
    Hand(String),
}

/// Words that begin with `text`.
pub fn say(text: impl Into<String>) -> Words {
    Words::default().text(text)
}

/// Words that begin with git-hand's command `args`.
pub fn hand(args: impl Into<String>) -> Words {
    Words::default().hand(args)
}

impl Words {
    /// These words, then `text`.
    pub fn text(mut self, text: impl Into<String>) -> Self {
        let text = text.into();
        if !text.is_empty() {
            self.0.push(Part::Text(text));
        }
        self
    }

    /// These words, then git-hand's command `args`.
    pub fn hand(mut self, args: impl Into<String>) -> Self {
        self.0.push(Part::Hand(args.into()));
        self
    }

    pub fn parts(&self) -> &[Part] {
        &self.0
    }
}

/// The shell line that moves into task `name`'s slot: `cd "$(git hand path NAME)"`.
pub fn cd_to_slot(name: &str) -> Words {
    say("cd \"$(").hand(format!("path {name}")).text(")\"")
}

/// The shell line that presents task `name`'s credential: `eval "$(git hand env NAME)"`.
pub fn present_credential(name: &str) -> Words {
    say("eval \"$(").hand(format!("env {name}")).text(")\"")
}

impl From<&str> for Words {
    fn from(text: &str) -> Self {
        say(text)
    }
}

impl From<String> for Words {
    fn from(text: String) -> Self {
        say(text)
    }
}

impl From<&String> for Words {
    fn from(text: &String) -> Self {
        say(text.as_str())
    }
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
    pub fn run(line: impl Into<Words>) -> Self {
        Self {
            run: Run::Other(line.into()),
            why: None,
        }
    }

    /// This hint with why it helps.
    pub fn why(mut self, why: impl Into<Words>) -> Self {
        self.why = Some(why.into());
        self
    }

    /// Whether this hint runs git-hand's `verb` (its arguments start with it).
    pub(crate) fn runs_hand(&self, verb: &str) -> bool {
        matches!(&self.run, Run::Hand(args) if args.split_whitespace().next() == Some(verb))
    }
}
