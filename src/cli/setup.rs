//! The words of a running setup command (`hand.onCreate`, `hand.onReuse`, `hand.onTeardown`),
//! shared by `spawn` and `teardown`: always on stderr, whatever stdout is, each line of the
//! command's output prefixed with the task's name.

use std::io::Write;

use super::output::say;
use crate::ops::repo::setup::SetupEvent;

/// Shows one event of task `task`'s setup command.
pub(super) fn show(task: &str, event: SetupEvent<'_>) {
    match event {
        SetupEvent::Running(cmd) => {
            let from = if cmd.from_file { " (.handconfig)" } else { "" };
            say([format!(
                "{task}: running {}{from}: {}",
                cmd.hook.key(),
                crate::shown::shown(&cmd.command)
            )]);
        }
        SetupEvent::Output(line) => {
            let _ = writeln!(std::io::stderr().lock(), "[{task}] {line}");
        }
    }
}
