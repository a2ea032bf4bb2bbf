//! How a child process ended, from the status the OS reports: in words, and as the exit code a
//! shell would give (128 + the signal of a killed process).

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

/// How a process ended, in words: "exited with status 1", "was killed by signal 9".
pub(crate) fn how_it_ended(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        (None, None) => "failed".to_string(),
    }
}

/// The exit code a shell would report for `status` (128 + signal when killed).
pub(crate) fn exit_code(status: ExitStatus) -> u8 {
    match (status.code(), status.signal()) {
        (Some(code), _) => u8::try_from(code).unwrap_or(1),
        (None, Some(sig)) => u8::try_from(128 + sig).unwrap_or(1),
        (None, None) => 1,
    }
}
