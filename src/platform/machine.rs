//! This machine's identity on a team ledger, which keys slots by machine and path: on Linux the
//! systemd machine id (`/etc/machine-id`, else D-Bus's copy), read exactly as git-hand always
//! read it, so a slot recorded before keeps its key; elsewhere the platform's own id through the
//! kept crate `machine-uid` (macOS: the IOPlatformUUID, `gethostuuid(3)`).

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

/// Where [`id`] comes from, for the message that says it is missing.
pub const SOURCE: &str = if cfg!(target_os = "linux") {
    "/etc/machine-id"
} else {
    "the platform's machine id"
};

#[cfg(test)]
mod tests {
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
