//! This machine's identity on a team ledger, which keys slots by machine and path: on Linux the
//! systemd machine id (`/etc/machine-id`, else D-Bus's copy), read exactly as git-hand always
//! read it, so a slot recorded before keeps its key; elsewhere the platform's own id through the
//! kept crate `machine-uid` (macOS: the IOPlatformUUID, `gethostuuid(3)`). And its host name.

/// The machine id, trimmed; `None` when the platform has none to give.
pub fn id() -> Option<String> {
    let id = platform_id()?;
    let id = id.trim();
    (!id.is_empty()).then(|| id.to_string())
}

#[cfg(target_os = "linux")]
fn platform_id() -> Option<String> {
    ["/etc/machine-id", "/var/lib/dbus/machine-id"]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
}

#[cfg(not(target_os = "linux"))]
fn platform_id() -> Option<String> {
    machine_uid::get().ok()
}

/// This machine's host name, as the kernel keeps it (`gethostname(3)`, through the kept crate
/// `whoami`; on Linux the same name as `/proc/sys/kernel/hostname`), else `HOSTNAME`, else
/// `localhost`.
pub fn hostname() -> String {
    whoami::hostname()
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".into())
}

/// Where [`id`] comes from, for the message that says it is missing.
pub(crate) const SOURCE: &str = if cfg!(target_os = "linux") {
    "/etc/machine-id"
} else {
    "the platform's machine id"
};

#[cfg(test)]
mod tests {
    /// The name every Linux tool reads (`hostname`, `/proc/sys/kernel/hostname`) is the one a
    /// default holder and `hand.machine`'s hint were built from before.
    #[cfg(target_os = "linux")]
    #[test]
    fn on_linux_the_host_name_is_the_kernels() {
        let kernel = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
        assert_eq!(super::hostname(), kernel.trim());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn on_linux_it_is_the_machine_id_file_as_read_before() {
        let file = std::fs::read_to_string("/etc/machine-id")
            .or_else(|_| std::fs::read_to_string("/var/lib/dbus/machine-id"))
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty());
        assert_eq!(super::id(), file);
    }
}
