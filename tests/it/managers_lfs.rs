//! git-hand beside git-lfs (the real tool, Debian `git-lfs`): LFS objects reach the remote's LFS
//! store whatever the install order, a stale holder's push is refused before any of its objects
//! is uploaded, lines appended to git-hand's shim (git-lfs's own advice) survive the next
//! install, and `git lfs update --force` followed by `git hand install` works every time.
//!
//! The remote is a bare repository on a local path: git-lfs 3 uploads to it with its built-in
//! standalone file transfer, into `<remote>/lfs/objects/<oid[0..2]>/<oid[2..4]>/<oid>`.

use std::path::{Path, PathBuf};

use crate::managers_lefthook::push;
use crate::support::{Run, TestEnv, hooks_dir, hooks_snapshot, path_of, remote_oid, spawn, tool};

/// An env with the hook tools and a real (empty) global git config: git-lfs writes there.
fn lfs_env() -> TestEnv {
    let mut env = TestEnv::new().with_hook_tools();
    let global = env.path("home/.gitconfig");
    std::fs::write(&global, "").unwrap();
    env.vars
        .push(("GIT_CONFIG_GLOBAL".into(), global.display().to_string()));
    env
}

/// A repository and its bare origin (`work/app-origin.git`).
fn lfs_repo(env: &TestEnv) -> (PathBuf, PathBuf) {
    let repo = env.repo("app");
    let origin = env.path("work/app-origin.git");
    (repo, origin)
}

/// Tracks `*.bin` with git-lfs and commits and pushes `.gitattributes`, so slots have it.
fn track_bin(env: &TestEnv, repo: &Path) {
    tool(env, repo, "git", &["lfs", "track", "*.bin"]).ok();
    env.git(repo, &["add", ".gitattributes"]);
    env.git(repo, &["commit", "-q", "-m", "lfs"]);
    let run = push(env, repo, None, &["-q", "origin", "main"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

/// The path an LFS object with `content` has in `origin`'s LFS store.
pub fn stored(origin: &Path, content: &str) -> PathBuf {
    use sha2_free::sha256_hex;
    let oid = sha256_hex(content.as_bytes());
    origin
        .join("lfs/objects")
        .join(&oid[0..2])
        .join(&oid[2..4])
        .join(&oid)
}

/// SHA-256 without a crate: `shasum -a 256` (Perl's, which macOS ships and Debian's `perl` has),
/// else coreutils' `sha256sum` (which macOS long had not); both print the digest first.
mod sha2_free {
    pub fn sha256_hex(bytes: &[u8]) -> String {
        use std::io::Write;
        let mut cmd = if which::which("shasum").is_ok() {
            let mut cmd = std::process::Command::new("shasum");
            cmd.args(["-a", "256"]);
            cmd
        } else {
            std::process::Command::new("sha256sum")
        };
        let mut child = cmd
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(bytes).unwrap();
        let out = child.wait_with_output().unwrap();
        String::from_utf8(out.stdout).unwrap()[..64].to_string()
    }
}

/// Commits an LFS file in `dir`.
fn commit_bin(env: &TestEnv, dir: &Path, name: &str, content: &str) {
    std::fs::write(dir.join(name), content).unwrap();
    env.git(dir, &["add", name]);
    env.git(dir, &["commit", "-q", "-m", name]);
}

/// The zombie story with LFS: a's holder commits an LFS file in the slot b now holds and pushes:
/// refused, and its object never reaches the remote. b's push uploads b's object.
fn zombie_uploads_nothing_and_the_holder_uploads(env: &TestEnv, repo: &Path, origin: &Path) {
    let a = spawn(env, repo, "lfs-a", &[]);
    env.hand(repo, &["teardown", "lfs-a", "--force"]).ok();
    let b = spawn(env, repo, "lfs-b", &[]);
    let slot = path_of(&b);
    assert_eq!(path_of(&a), slot);

    let zombie = "zombie's large file\n";
    commit_bin(env, &slot, "zombie.bin", zombie);
    let run = push(
        env,
        &slot,
        Some(&a),
        &["origin", "HEAD:refs/heads/hand/lfs-b"],
    );
    assert_ne!(run.code, 0, "the stale push went through:\n{}", run.stderr);
    assert!(
        run.stderr.contains("git-hand: push refused"),
        "{}",
        run.stderr
    );
    assert_eq!(remote_oid(env, origin, "hand/lfs-b"), None);

    env.git(&slot, &["reset", "-q", "--hard", "HEAD~1"]);
    let mine = "b's large file\n";
    commit_bin(env, &slot, "mine.bin", mine);
    let run = push(
        env,
        &slot,
        Some(&b),
        &["origin", "HEAD:refs/heads/hand/lfs-b"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        stored(origin, mine).is_file(),
        "b's LFS object was not uploaded:\n{}",
        run.stderr
    );
}

#[test]
fn git_lfs_after_git_hand_still_uploads_and_a_zombie_uploads_nothing() {
    let env = lfs_env();
    let (repo, origin) = lfs_repo(&env);
    env.hand(&repo, &["install"]).ok();
    // git-lfs will not replace git-hand's pre-push; it configures its filters all the same.
    let run = tool(&env, &repo, "git", &["lfs", "install", "--local"]);
    assert_ne!(run.code, 0, "git lfs install replaced git-hand's hook");
    track_bin(&env, &repo);
    // From the main worktree too.
    let main = "main's large file\n";
    commit_bin(&env, &repo, "main.bin", main);
    let run = push(&env, &repo, None, &["origin", "main"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(stored(&origin, main).is_file(), "{}", run.stderr);
    zombie_uploads_nothing_and_the_holder_uploads(&env, &repo, &origin);
    let zombie = "zombie's large file\n";
    assert!(
        !stored(&origin, zombie).exists(),
        "the zombie's LFS object was uploaded before the refusal"
    );
}

#[test]
fn git_lfs_first_is_chained_uploads_and_uninstall_restores_its_hooks_byte_identical() {
    let env = lfs_env();
    let (repo, origin) = lfs_repo(&env);
    tool(&env, &repo, "git", &["lfs", "install", "--local"]).ok();
    let lfs_only = hooks_snapshot(&hooks_dir(&repo));
    track_bin(&env, &repo);
    zombie_uploads_nothing_and_the_holder_uploads(&env, &repo, &origin);
    env.hand(&repo, &["uninstall"]).ok();
    assert_eq!(hooks_snapshot(&hooks_dir(&repo)), lfs_only);
}

/// What `git lfs update --manual` says to add to `.git/hooks/pre-push` (without its `#!` line,
/// as one appends to an existing hook).
fn lfs_manual_pre_push_lines(env: &TestEnv, repo: &Path) -> String {
    let out = tool(env, repo, "git", &["lfs", "update", "--manual"]).ok();
    let section = out
        .split("Add the following to '.git/hooks/pre-push':")
        .nth(1)
        .expect("git lfs update --manual names pre-push");
    section
        .lines()
        .skip_while(|l| l.trim().is_empty())
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.strip_prefix('\t').unwrap_or(l))
        .filter(|l| !l.starts_with("#!"))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn lfs_lines_appended_to_git_hands_shim_survive_the_next_install_and_uninstall() {
    let env = lfs_env();
    let (repo, origin) = lfs_repo(&env);
    env.hand(&repo, &["install"]).ok();
    // git lfs will not write over git-hand's shim: its lines are appended by hand below.
    let refused = tool(&env, &repo, "git", &["lfs", "install", "--local"]);
    assert!(
        refused.stderr.contains("Hook already exists: pre-push"),
        "{refused:?}"
    );
    let lines = lfs_manual_pre_push_lines(&env, &repo);
    assert!(lines.contains("git lfs pre-push \"$@\""), "{lines}");
    let pre_push = hooks_dir(&repo).join("pre-push");
    let mut shim = std::fs::read_to_string(&pre_push).unwrap();
    shim.push_str(&lines);
    std::fs::write(&pre_push, shim).unwrap();

    let run = env.hand(&repo, &["install", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let chained = hooks_dir(&repo).join("pre-push.git-hand-chained");
    let kept = std::fs::read_to_string(&chained).unwrap_or_default();
    assert!(
        kept.ends_with(&lines),
        "the appended lines were erased:\n{kept}"
    );

    track_bin(&env, &repo);
    zombie_uploads_nothing_and_the_holder_uploads(&env, &repo, &origin);

    env.hand(&repo, &["uninstall"]).ok();
    let left = std::fs::read_to_string(&pre_push).unwrap();
    assert!(
        left.ends_with(&lines),
        "uninstall lost the lfs lines:\n{left}"
    );
    assert!(!left.contains("git-hand-managed-hook"), "{left}");
}

#[test]
fn git_lfs_update_force_then_git_hand_install_works_every_time() {
    let env = lfs_env();
    let (repo, origin) = lfs_repo(&env);
    env.hand(&repo, &["install"]).ok();
    // As a user meets it: git lfs install refuses (git-hand's pre-push is there), then
    // `git lfs update --force` replaces git-hand's hooks with git-lfs's.
    let run = tool(&env, &repo, "git", &["lfs", "install", "--local"]);
    assert_ne!(run.code, 0);
    // The recipe `git hand install --manual` prints for git-lfs, run as written, twice.
    let recipe = crate::managers_lefthook::recipe(&env, &repo, "git-lfs");
    let line = recipe
        .lines()
        .find(|l| !l.starts_with('#') && !l.trim().is_empty())
        .expect("the git-lfs recipe has a command");
    assert_eq!(line, "git lfs update --force && git hand install");
    for round in 0..2 {
        let run: Run = tool(&env, &repo, "sh", &["-c", line]);
        assert_eq!(run.code, 0, "round {round}: {}{}", run.stdout, run.stderr);
    }
    let dir = hooks_dir(&repo);
    let chained = std::fs::read_to_string(dir.join("pre-push.git-hand-chained")).unwrap();
    assert!(chained.contains("git lfs pre-push"), "{chained}");
    track_bin(&env, &repo);
    zombie_uploads_nothing_and_the_holder_uploads(&env, &repo, &origin);

    // Uninstall leaves exactly git-lfs's hooks, as `git lfs update --force` alone writes them.
    env.hand(&repo, &["uninstall"]).ok();
    let fresh = lfs_env();
    let (other, _) = lfs_repo(&fresh);
    tool(&fresh, &other, "git", &["lfs", "update", "--force"]).ok();
    assert_eq!(hooks_snapshot(&dir), hooks_snapshot(&hooks_dir(&other)));
}

/// Lines appended to git-hand's shim (the first shipped version) while another hook is already
/// chained stay below the current shim, as they were, and the next install leaves them alone (no
/// upgrade on every install).
#[test]
fn appended_lines_beside_a_chained_hook_stay_below_the_shim_and_settle() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let dir = hooks_dir(&repo);
    let pre_push = dir.join("pre-push");
    std::fs::write(&pre_push, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(
        &pre_push,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    env.hand(&repo, &["install"]).ok();
    let current = std::fs::read_to_string(&pre_push).unwrap();
    let v1 = include_str!("../../src/hooks/shipped/pre-push.v1");
    let lines = "git lfs pre-push \"$@\"\n";
    std::fs::write(&pre_push, format!("{v1}{lines}")).unwrap();

    let run = env.hand(&repo, &["install", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let change = run.json()["hooks"][0]["change"].clone();
    assert!(
        change == "upgraded" || (change == "unchanged" && v1 == current),
        "{change}"
    );
    assert_eq!(
        std::fs::read_to_string(&pre_push).unwrap(),
        format!("{current}{lines}")
    );
    let run = env.hand(&repo, &["install", "--json"]);
    assert_eq!(run.json()["hooks"][0]["change"], "unchanged");
    assert!(dir.join("pre-push.git-hand-chained").exists());
}
