//! What the operating system answers, behind one seam (issue 24): each file here asks the OS one
//! kind of question, through std or a kept crate that covers Linux and macOS alike, so nothing
//! outside it calls an OS-specific API or tool: the machine's identity and host name, cloning
//! files, how a child process ended (`exit_status`), and the process table (`procs`: Linux's `/proc` fast path and the portable one, given
//! to operations as a `Scan`).
//!
//! Code here never decides what git-hand does with the answer: which files to copy, which
//! process holds a slot. That stays in `ops/`.

pub mod clone;
pub mod env;
pub mod exit_status;
pub mod machine;
pub mod procs;
