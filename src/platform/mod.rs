//! What the operating system answers, behind one seam (issue 24): each file here asks the OS one
//! kind of question, through std or a kept crate that covers Linux and macOS alike, so nothing
//! outside it calls an OS-specific API or tool: the machine's identity, cloning files, and a
//! portable process scan (`procs`; no operation uses it yet: they still ask `ops/procs.rs`,
//! reading Linux's `/proc`).
//!
//! Code here never decides what git-hand does with the answer: which files to copy, which
//! process holds a slot. That stays in `ops/`.

pub mod clone;
pub mod machine;
pub mod procs;
