//! `hand.include` (issue 13, item 3) and `.worktreeinclude` (issue 23, item 5): files a checkout
//! lacks, copied from the main worktree into a new slot. Whole matches only, ignored ones only,
//! never over what the slot has, never through a link out of the main worktree, never into a
//! reused slot; a failed copy is a warning and leaves no partial file. `.worktreeinclude` is read
//! as git reads a `.gitignore`, on its own (its `!` lines never undo `hand.include`), and never
//! through a symbolic link.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::support::{SYSTEM_PATH, Shown, TestEnv, path_of, shot, spawn};

/// A repository whose `.gitignore` ignores `.env`, `node_modules/` and `*.local`, committed,
/// with `hand.include` set to `patterns`.
fn repo_including(env: &TestEnv, patterns: &[&str]) -> PathBuf {
    let repo = env.repo("r");
    env.commit(&repo, ".gitignore", ".env\nnode_modules/\n*.local\n");
    for p in patterns {
        env.git(&repo, &["config", "--add", "hand.include", p]);
    }
    repo
}

/// `node_modules/` with a package, a relative link inside it, and a file in a nested directory.
fn node_modules(repo: &Path) {
    fs::create_dir_all(repo.join("node_modules/a/lib")).unwrap();
    fs::write(
        repo.join("node_modules/a/index.js"),
        "module.exports = 1;\n",
    )
    .unwrap();
    fs::write(repo.join("node_modules/a/lib/x.js"), "x\n").unwrap();
    fs::create_dir_all(repo.join("node_modules/.bin")).unwrap();
    symlink("../a/index.js", repo.join("node_modules/.bin/a")).unwrap();
}

/// `(path, word)` pairs: a path and how it was copied, or why it was not.
type Pairs = Vec<(String, String)>;

/// The `included` and `not_included` of a spawn's JSON, as `(path, word)` pairs.
fn report(v: &Value) -> (Pairs, Pairs) {
    let pairs = |key: &str, word: &str| {
        v[key]
            .as_array()
            .unwrap_or_else(|| panic!("no {key} in {v:#}"))
            .iter()
            .map(|e| {
                (
                    e["path"].as_str().unwrap().to_string(),
                    e[word].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    (pairs("included", "how"), pairs("not_included", "reason"))
}

/// The `(path, source)` of each entry of a spawn's `included` or `not_included`.
fn sources(v: &Value, key: &str) -> Pairs {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {v:#}"))
        .iter()
        .map(|e| {
            let source = e["source"]
                .as_str()
                .unwrap_or_else(|| panic!("no source in {e}"));
            (e["path"].as_str().unwrap().to_string(), source.to_string())
        })
        .collect()
}

fn pair(path: &str, word: &str) -> (String, String) {
    (path.to_string(), word.to_string())
}

fn status(env: &TestEnv, slot: &Path) -> String {
    env.git(slot, &["status", "--porcelain", "--untracked-files=all"])
}

#[test]
fn a_new_slot_gets_the_env_file_and_node_modules_whole_and_stays_clean() {
    let env = TestEnv::new();
    let repo = repo_including(&env, &[".env", "node_modules/"]);
    fs::write(repo.join(".env"), "TOKEN=abc\n").unwrap();
    node_modules(&repo);

    let v = spawn(&env, &repo, "a", &[]);
    let slot = path_of(&v);
    assert_eq!(
        fs::read_to_string(slot.join(".env")).unwrap(),
        "TOKEN=abc\n"
    );
    assert_eq!(
        fs::read_to_string(slot.join("node_modules/a/lib/x.js")).unwrap(),
        "x\n"
    );
    let link = slot.join("node_modules/.bin/a");
    assert_eq!(fs::read_link(&link).unwrap(), Path::new("../a/index.js"));
    let (included, not_included) = report(&v);
    let how = included[0].1.clone();
    assert!(how == "copy" || how == "reflink", "{v:#}");
    assert_eq!(included, [pair(".env", &how), pair("node_modules/", &how)]);
    assert!(not_included.is_empty(), "{v:#}");
    assert_eq!(v["included"][1]["files"], 3, "{v:#}");
    assert_eq!(v["included"][0]["bytes"], 10, "{v:#}");
    // Ignored copies leave the slot clean: nothing to commit, and teardown needs no --force.
    assert_eq!(status(&env, &slot), "");
    assert!(
        fs::read_dir(&slot).unwrap().all(|e| !e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .contains("tmp")),
        "a temporary name was left in the slot"
    );
    env.hand(&repo, &["teardown", "a"]).ok();
}

#[test]
fn a_tracked_file_matching_a_pattern_is_never_copied_over() {
    let env = TestEnv::new();
    let repo = repo_including(&env, &["*.local", ".env"]);
    // config.local is tracked (added despite the ignore rule) and changed in the main worktree.
    fs::write(repo.join("config.local"), "committed\n").unwrap();
    env.git(&repo, &["add", "-f", "config.local"]);
    env.git(&repo, &["commit", "-q", "-m", "config"]);
    fs::write(repo.join("config.local"), "changed in main\n").unwrap();
    fs::write(repo.join("dev.local"), "ignored\n").unwrap();
    // .env is tracked at an older commit and ignored now: a slot spawned there has the tracked
    // one, which the main worktree's untracked .env must not replace.
    fs::write(repo.join(".env"), "tracked env\n").unwrap();
    env.git(&repo, &["add", "-f", ".env"]);
    env.git(&repo, &["commit", "-q", "-m", "track .env"]);
    let old = env.git(&repo, &["rev-parse", "HEAD"]);
    env.git(&repo, &["rm", "-q", "--cached", ".env"]);
    env.git(&repo, &["commit", "-q", "-m", "untrack .env"]);
    fs::write(repo.join(".env"), "main's env\n").unwrap();

    let v = spawn(&env, &repo, "a", &["--base", &old]);
    let slot = path_of(&v);
    assert_eq!(
        fs::read_to_string(slot.join("config.local")).unwrap(),
        "committed\n"
    );
    assert_eq!(
        fs::read_to_string(slot.join(".env")).unwrap(),
        "tracked env\n"
    );
    assert_eq!(
        fs::read_to_string(slot.join("dev.local")).unwrap(),
        "ignored\n"
    );
    let (included, not_included) = report(&v);
    assert_eq!(included.len(), 1, "{v:#}");
    assert_eq!(included[0].0, "dev.local");
    assert_eq!(
        not_included,
        [pair("config.local", "tracked"), pair(".env", "in-slot")]
    );
    assert_eq!(status(&env, &slot), "");
}

#[test]
fn a_symlink_leading_out_of_the_main_worktree_is_not_followed() {
    let env = TestEnv::new();
    let repo = repo_including(&env, &[".env", "node_modules/", "*.local"]);
    let secret = env.path("secret");
    fs::create_dir_all(&secret).unwrap();
    fs::write(secret.join("key"), "secret\n").unwrap();
    symlink(secret.join("key"), repo.join(".env")).unwrap();
    symlink("../secret/key", repo.join("up.local")).unwrap();
    fs::write(repo.join("real.local"), "real\n").unwrap();
    symlink("real.local", repo.join("in.local")).unwrap();
    // A link inside a copied directory is copied as the link it is.
    fs::create_dir_all(repo.join("node_modules")).unwrap();
    symlink(&secret, repo.join("node_modules/linked")).unwrap();

    let v = spawn(&env, &repo, "a", &[]);
    let slot = path_of(&v);
    let (included, not_included) = report(&v);
    let paths: Vec<&str> = included.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(paths, ["in.local", "node_modules/", "real.local"], "{v:#}");
    assert_eq!(
        not_included,
        [
            pair(".env", "symlink-outside"),
            pair("up.local", "symlink-outside")
        ]
    );
    assert!(fs::symlink_metadata(slot.join(".env")).is_err());
    assert!(fs::symlink_metadata(slot.join("up.local")).is_err());
    assert_eq!(
        fs::read_link(slot.join("in.local")).unwrap(),
        Path::new("real.local")
    );
    let linked = slot.join("node_modules/linked");
    assert!(fs::symlink_metadata(&linked).unwrap().is_symlink());
    assert_eq!(fs::read_link(&linked).unwrap(), secret);
    assert_eq!(
        v["included"][1]["files"], 1,
        "nothing behind the link was copied: {v:#}"
    );
}

#[test]
fn a_reused_slot_keeps_the_files_its_last_task_left() {
    let env = TestEnv::new();
    let repo = repo_including(&env, &[".env"]);
    fs::write(repo.join(".env"), "v1\n").unwrap();
    let a = spawn(&env, &repo, "a", &[]);
    let slot = path_of(&a);
    fs::write(slot.join(".env"), "the task's own\n").unwrap();
    env.hand(&repo, &["teardown", "a"]).ok();
    fs::write(repo.join(".env"), "v2\n").unwrap();

    let b = spawn(&env, &repo, "b", &[]);
    assert_eq!(path_of(&b), slot, "b should reuse a's slot: {b:#}");
    assert_eq!(
        fs::read_to_string(slot.join(".env")).unwrap(),
        "the task's own\n"
    );
    assert_eq!(report(&b), (vec![], vec![]));
}

#[test]
fn a_pattern_matching_nothing_or_an_unignored_file_copies_nothing() {
    let env = TestEnv::new();
    let repo = repo_including(&env, &["nothing-here/", "notes.txt"]);
    fs::write(repo.join("notes.txt"), "untracked, not ignored\n").unwrap();
    let run = env.hand(&repo, &["spawn", "a"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let slot = PathBuf::from(run.stdout.trim());
    assert!(!slot.join("notes.txt").exists());
    assert_eq!(status(&env, &slot), "");
    assert!(
        run.stderr
            .contains("not included: notes.txt (not ignored by git"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_failed_copy_is_a_warning_and_leaves_no_partial_copy() {
    let env = TestEnv::new();
    let repo = repo_including(&env, &[".env", "node_modules/"]);
    fs::write(repo.join(".env"), "TOKEN=abc\n").unwrap();
    node_modules(&repo);
    // A FIFO git-hand will not copy, among files it copies: the copy of node_modules fails
    // part way, as on a full disk.
    let fifo = repo.join("node_modules/a/pipe");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let why = format!(
        "{} is a FIFO: only files, links and directories are copied",
        fifo.display()
    );
    // Timed (`env.hand`): were the FIFO opened for reading, the spawn would wait for a writer.
    let v = spawn(&env, &repo, "a", &[]);
    let slot = path_of(&v);
    assert_eq!(report(&v).1, [pair("node_modules/", "failed")], "{v:#}");
    assert_eq!(v["not_included"][0]["detail"], why.as_str());
    assert!(slot.join(".env").exists());
    assert!(!slot.join("node_modules").exists());
    let names: Vec<String> = fs::read_dir(&slot)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| !n.starts_with(".git-hand-tmp")),
        "{names:?}"
    );
    assert_eq!(status(&env, &slot), "");

    // With --print-path, stderr keeps the warning and drops the summary.
    let run = env.hand(&repo, &["spawn", "b", "--print-path"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        format!("git-hand: not included: node_modules/ (failed: {why})\n")
    );
}

/// 2020-09-13, to the nanosecond: no copy made now has it by chance.
fn long_ago() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::new(1_600_000_000, 123_456_789)
}

fn mtime(path: &Path) -> SystemTime {
    fs::symlink_metadata(path).unwrap().modified().unwrap()
}

/// A repository including `.env` (private), `run.local` (executable) and a `target/` a build
/// left: an executable, a fingerprint, a private directory and a link to the executable; every
/// file and directory last modified [`long_ago`], as cargo's fingerprints would read them.
fn repo_with_a_build(env: &TestEnv) -> PathBuf {
    let repo = repo_including(env, &[".env", "*.local", "target/"]);
    env.commit(&repo, ".gitignore", ".env\ntarget/\n*.local\n");
    let files = [
        (".env", "TOKEN=abc\n", 0o600),
        ("run.local", "#!/bin/sh\n", 0o755),
        ("target/debug/app", "\x7fELF", 0o755),
        (
            "target/debug/.fingerprint/app-1/dep-bin-app",
            "fingerprint",
            0o644,
        ),
    ];
    for (path, content, mode) in files {
        let path = repo.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, content).unwrap();
        fs::set_permissions(&path, PermissionsExt::from_mode(mode)).unwrap();
        fs::File::open(&path)
            .unwrap()
            .set_modified(long_ago())
            .unwrap();
    }
    symlink("debug/app", repo.join("target/latest")).unwrap();
    fs::set_permissions(
        repo.join("target/debug/.fingerprint"),
        PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    for dir in [
        "debug/.fingerprint/app-1",
        "debug/.fingerprint",
        "debug",
        "",
    ] {
        let dir = repo.join("target").join(dir);
        fs::File::open(&dir)
            .unwrap()
            .set_modified(long_ago())
            .unwrap();
    }
    repo
}

/// Spawns `task` in [`repo_with_a_build`] with a `cp` first on `PATH` that fails and leaves a
/// mark, checks the slot got every file with its content, mode and modification time and the
/// link as a link, that no `cp` ran, and returns the slot and how each match was copied.
fn spawn_with_a_build(env: &TestEnv, repo: &Path, task: &str) -> (PathBuf, Pairs) {
    let shims = env.path("shims");
    fs::create_dir_all(&shims).unwrap();
    let ran = env.path("cp-ran");
    fs::write(
        shims.join("cp"),
        format!("#!/bin/sh\ntouch '{}'\nexit 1\n", ran.display()),
    )
    .unwrap();
    fs::set_permissions(shims.join("cp"), PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}:{SYSTEM_PATH}",
        TestEnv::bin_dir().display(),
        shims.display()
    );
    let run = env.hand_env(repo, &["spawn", task, "--json"], &[("PATH", &path)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v = run.json();
    let slot = path_of(&v);
    assert!(!ran.exists(), "git-hand ran cp");
    let (included, not_included) = report(&v);
    assert!(not_included.is_empty(), "{v:#}");
    let paths: Vec<&str> = included.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(paths, [".env", "run.local", "target/"], "{v:#}");
    assert_eq!(v["included"][2]["files"], 3, "{v:#}");
    for (path, content, mode) in [
        (".env", "TOKEN=abc\n", 0o600),
        ("run.local", "#!/bin/sh\n", 0o755),
        ("target/debug/app", "\x7fELF", 0o755),
        (
            "target/debug/.fingerprint/app-1/dep-bin-app",
            "fingerprint",
            0o644,
        ),
    ] {
        let copy = slot.join(path);
        assert_eq!(fs::read_to_string(&copy).unwrap(), content, "{path}");
        assert_eq!(crate::support::mode(&copy), mode, "mode of {path}");
        assert_eq!(mtime(&copy), long_ago(), "mtime of {path}");
    }
    for dir in [
        "debug/.fingerprint/app-1",
        "debug/.fingerprint",
        "debug",
        "",
    ] {
        let copy = slot.join("target").join(dir);
        assert_eq!(mtime(&copy), long_ago(), "mtime of target/{dir}");
    }
    assert_eq!(
        crate::support::mode(&slot.join("target/debug/.fingerprint")),
        0o700
    );
    let link = slot.join("target/latest");
    assert!(fs::symlink_metadata(&link).unwrap().is_symlink());
    assert_eq!(fs::read_link(&link).unwrap(), Path::new("debug/app"));
    assert_eq!(status(env, &slot), "");
    (slot, included)
}

#[test]
fn an_included_build_keeps_its_modes_times_and_links_and_no_cp_runs() {
    let env = TestEnv::new();
    let repo = repo_with_a_build(&env);
    let (_, included) = spawn_with_a_build(&env, &repo, "a");
    let how = included[0].1.clone();
    assert!(how == "copy" || how == "reflink", "{included:?}");
    assert!(included.iter().all(|(_, h)| *h == how), "{included:?}");
}

/// The slot on a tmpfs (`hand.root` there), the main worktree on the test's filesystem: a
/// tmpfs never clones, and a clone across filesystems never does either.
#[cfg(target_os = "linux")]
#[test]
fn an_included_build_keeps_its_modes_times_and_links_on_a_tmpfs() {
    let env = TestEnv::new();
    let repo = repo_with_a_build(&env);
    let root = tempfile::tempdir_in("/dev/shm").unwrap();
    env.git(
        &repo,
        &["config", "hand.root", &root.path().display().to_string()],
    );
    let (slot, included) = spawn_with_a_build(&env, &repo, "a");
    assert!(slot.starts_with(root.path()), "{slot:?}");
    assert!(
        included.iter().all(|(_, how)| how == "copy"),
        "{included:?}"
    );
    env.hand(&repo, &["teardown", "a"]).ok();
}

#[test]
fn a_large_copy_shows_progress_on_a_terminal_and_only_a_summary_elsewhere() {
    let env = TestEnv::new();
    let repo = repo_including(&env, &["node_modules/"]);
    fs::create_dir_all(repo.join("node_modules")).unwrap();
    // 80 MiB, sparse: large to count, cheap to copy.
    let big = fs::File::create(repo.join("node_modules/big.bin")).unwrap();
    big.set_len(80 << 20).unwrap();

    let piped = env.hand(&repo, &["spawn", "a"]);
    assert_eq!(piped.code, 0, "{}", piped.stderr);
    assert!(!piped.stderr.contains("including"), "{}", piped.stderr);
    assert!(
        piped
            .stderr
            .contains("included node_modules/ (1 file, 80.0 MiB,"),
        "{}",
        piped.stderr
    );

    // `script` gives the spawn a terminal; its output is the terminal's.
    let bin = crate::support::BIN;
    let out = env
        .in_a_terminal(&format!("{bin} spawn b"), &repo)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("including node_modules/ (1 file, 80.0 MiB; 0 B of 80.0 MiB done)..."),
        "{said}"
    );
}

#[test]
fn the_text_and_json_of_a_spawn_that_includes_files() {
    let env = TestEnv::new();
    let repo = repo_including(&env, &[".env", "node_modules/", "*.local", "notes.txt"]);
    env.commit(
        &repo,
        ".gitignore",
        ".env\nnode_modules/\n*.local\n*.secret\n",
    );
    fs::write(
        repo.join(".worktreeinclude"),
        "# shared with Claude Code\n*.secret\n.env\n",
    )
    .unwrap();
    fs::write(repo.join("api.secret"), "KEY=1\n").unwrap();
    fs::write(repo.join(".env"), "TOKEN=abc\n").unwrap();
    node_modules(&repo);
    fs::write(repo.join("config.local"), "committed\n").unwrap();
    env.git(&repo, &["add", "-f", "config.local"]);
    env.git(&repo, &["commit", "-q", "-m", "config"]);
    fs::write(repo.join("notes.txt"), "not ignored\n").unwrap();
    symlink("/etc/hostname", repo.join("host.local")).unwrap();

    let mut text = String::new();
    for (args, shown) in [
        (&["spawn", "a", "--json"][..], Shown::Json),
        (&["spawn", "b"][..], Shown::Text),
    ] {
        let run = env.hand(&repo, args);
        text.push_str(&shot(&env, &args.join(" "), &run, shown));
        text.push('\n');
    }
    // Whether the filesystem clones depends on the machine.
    let text = text
        .replace("\"how\": \"reflink\"", "\"how\": \"copy\"")
        .replace(", reflinked)", ", copied)");
    insta::assert_snapshot!("include_spawn", text);
}

/// A repository whose `.gitignore` ignores `.env*`, `*.local`, `node_modules/` and the two files
/// named with a `#`, committed, with `.worktreeinclude` holding `lines` (untracked) and no
/// `hand.include`.
fn repo_with_worktreeinclude(env: &TestEnv, lines: &str) -> PathBuf {
    let repo = env.repo("r");
    env.commit(
        &repo,
        ".gitignore",
        ".env*\n*.local\nnode_modules/\n\\#secret\n\\#kept\n.worktreeinclude\n",
    );
    fs::write(repo.join(".worktreeinclude"), lines).unwrap();
    repo
}

#[test]
fn a_worktreeinclude_alone_copies_an_ignored_env_file_into_a_new_slot() {
    let env = TestEnv::new();
    let repo = repo_with_worktreeinclude(&env, ".env\n");
    fs::write(repo.join(".env"), "TOKEN=abc\n").unwrap();

    let v = spawn(&env, &repo, "a", &[]);
    let slot = path_of(&v);
    assert_eq!(
        fs::read_to_string(slot.join(".env")).unwrap(),
        "TOKEN=abc\n"
    );
    assert_eq!(
        sources(&v, "included"),
        [pair(".env", ".worktreeinclude")],
        "{v:#}"
    );
    assert!(report(&v).1.is_empty(), "{v:#}");
    assert_eq!(status(&env, &slot), "");
}

#[test]
fn a_worktreeinclude_match_git_does_not_ignore_is_never_copied() {
    let env = TestEnv::new();
    let repo = repo_with_worktreeinclude(&env, "*.local\nnotes.txt\n");
    // Tracked despite the ignore rule, and changed in the main worktree.
    fs::write(repo.join("config.local"), "committed\n").unwrap();
    env.git(&repo, &["add", "-f", "config.local"]);
    env.git(&repo, &["commit", "-q", "-m", "config"]);
    fs::write(repo.join("config.local"), "changed in main\n").unwrap();
    // Untracked, and no .gitignore rule ignores it.
    fs::write(repo.join("notes.txt"), "not ignored\n").unwrap();

    let v = spawn(&env, &repo, "a", &[]);
    let slot = path_of(&v);
    assert_eq!(
        fs::read_to_string(slot.join("config.local")).unwrap(),
        "committed\n"
    );
    assert!(!slot.join("notes.txt").exists());
    assert!(report(&v).0.is_empty(), "{v:#}");
    assert_eq!(
        report(&v).1,
        [
            pair("config.local", "tracked"),
            pair("notes.txt", "not-ignored")
        ]
    );
    assert_eq!(
        sources(&v, "not_included"),
        [
            pair("config.local", ".worktreeinclude"),
            pair("notes.txt", ".worktreeinclude")
        ]
    );
    assert_eq!(status(&env, &slot), "");
}

#[test]
fn a_negated_worktreeinclude_line_excludes_what_its_earlier_lines_matched() {
    let env = TestEnv::new();
    let repo = repo_with_worktreeinclude(&env, ".env*\n!.env.example\n");
    for name in [".env", ".env.local", ".env.example"] {
        fs::write(repo.join(name), format!("{name}\n")).unwrap();
    }

    let v = spawn(&env, &repo, "a", &[]);
    let slot = path_of(&v);
    let paths: Vec<String> = report(&v).0.into_iter().map(|(p, _)| p).collect();
    assert_eq!(paths, [".env", ".env.local"], "{v:#}");
    assert!(slot.join(".env.local").exists());
    assert!(!slot.join(".env.example").exists());
    // Not matched at all, so not reported either.
    assert!(report(&v).1.is_empty(), "{v:#}");
}

#[test]
fn a_worktreeinclude_is_read_as_git_reads_a_gitignore() {
    let env = TestEnv::new();
    // A comment that would match `#secret` were it a pattern, an escaped `#`, trailing spaces,
    // a CRLF line ending and a byte order mark: each as git reads it in a `.gitignore`.
    let repo = repo_with_worktreeinclude(
        &env,
        "\u{feff}a.local\r\n#secret\n\\#kept\n.env   \n\n# node_modules/\n",
    );
    for name in ["#secret", "#kept", ".env", "a.local"] {
        fs::write(repo.join(name), "x\n").unwrap();
    }
    fs::create_dir_all(repo.join("node_modules")).unwrap();
    fs::write(repo.join("node_modules/m.js"), "x\n").unwrap();

    let v = spawn(&env, &repo, "a", &[]);
    let paths: Vec<String> = report(&v).0.into_iter().map(|(p, _)| p).collect();
    assert_eq!(paths, ["#kept", ".env", "a.local"], "{v:#}");
    let slot = path_of(&v);
    assert!(!slot.join("#secret").exists());
    assert!(!slot.join("node_modules").exists());
}

#[test]
fn hand_include_and_worktreeinclude_each_copy_what_they_select_and_a_path_is_copied_once() {
    let env = TestEnv::new();
    let repo = repo_with_worktreeinclude(
        &env,
        // `.env` is hand.include's too; `!dev.local` must not undo hand.include's `*.local`;
        // `node_modules/a.js` is inside the directory hand.include copies whole; `conf/.env` is
        // inside one hand.include names but git does not ignore, so it is copied on its own.
        ".env\n.env.dev\n!dev.local\nnode_modules/a.js\nconf/.env\n",
    );
    for p in ["*.local", ".env", "node_modules/", "conf/"] {
        env.git(&repo, &["config", "--add", "hand.include", p]);
    }
    for name in [".env", ".env.dev", "dev.local"] {
        fs::write(repo.join(name), format!("{name}\n")).unwrap();
    }
    fs::create_dir_all(repo.join("node_modules")).unwrap();
    fs::write(repo.join("node_modules/a.js"), "a\n").unwrap();
    fs::write(repo.join("node_modules/b.js"), "b\n").unwrap();
    fs::create_dir_all(repo.join("conf")).unwrap();
    fs::write(repo.join("conf/.env"), "conf\n").unwrap();
    fs::write(repo.join("conf/notes.txt"), "not ignored\n").unwrap();

    let v = spawn(&env, &repo, "a", &[]);
    let slot = path_of(&v);
    assert_eq!(
        sources(&v, "included"),
        [
            pair(".env", "hand.include"),
            pair(".env.dev", ".worktreeinclude"),
            pair("conf/.env", ".worktreeinclude"),
            pair("dev.local", "hand.include"),
            pair("node_modules/", "hand.include"),
        ],
        "{v:#}"
    );
    assert_eq!(report(&v).1, [pair("conf/", "not-ignored")], "{v:#}");
    assert!(!slot.join("conf/notes.txt").exists());
    for name in [
        ".env",
        ".env.dev",
        "conf/.env",
        "dev.local",
        "node_modules/a.js",
        "node_modules/b.js",
    ] {
        assert!(slot.join(name).exists(), "{name} not copied");
    }
    assert_eq!(status(&env, &slot), "");
}

#[test]
fn a_symlinked_worktreeinclude_is_not_followed_and_the_spawn_says_so() {
    let env = TestEnv::new();
    let repo = repo_with_worktreeinclude(&env, "");
    fs::remove_file(repo.join(".worktreeinclude")).unwrap();
    let elsewhere = env.path("patterns");
    fs::write(&elsewhere, ".env\n").unwrap();
    symlink(&elsewhere, repo.join(".worktreeinclude")).unwrap();
    fs::write(repo.join(".env"), "TOKEN=abc\n").unwrap();
    fs::write(repo.join("dev.local"), "dev\n").unwrap();
    env.git(&repo, &["config", "--add", "hand.include", "*.local"]);

    let v = spawn(&env, &repo, "a", &[]);
    let slot = path_of(&v);
    assert!(!slot.join(".env").exists(), "the link was followed");
    // hand.include is copied as ever.
    assert_eq!(sources(&v, "included"), [pair("dev.local", "hand.include")]);
    assert_eq!(report(&v).1, [pair(".worktreeinclude", "failed")], "{v:#}");
    assert_eq!(v["not_included"][0]["source"], ".worktreeinclude");
    let file = repo.join(".worktreeinclude");
    assert_eq!(
        v["not_included"][0]["detail"],
        format!(
            "{} is a symbolic link, which git-hand does not follow; nothing it names was copied",
            file.display()
        )
    );

    // A warning even with --print-path, which keeps stderr to failures.
    let run = env.hand(&repo, &["spawn", "b", "--print-path"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        format!(
            "git-hand: not included: .worktreeinclude (failed: {} is a symbolic link, which \
             git-hand does not follow; nothing it names was copied)\n",
            file.display()
        )
    );
}

#[test]
fn a_worktreeinclude_that_is_a_fifo_is_refused_without_waiting_for_a_writer() {
    let env = TestEnv::new();
    let repo = repo_with_worktreeinclude(&env, "");
    fs::remove_file(repo.join(".worktreeinclude")).unwrap();
    let fifo = repo.join(".worktreeinclude");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    // Contained: were the FIFO opened for reading, the spawn would wait for a writer forever.
    let out = env
        .contained(crate::support::BIN, &repo)
        .args(["spawn", "a", "--json"])
        .output()
        .unwrap();
    let run = crate::support::Run::from(out);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v = run.json();
    assert_eq!(report(&v).1, [pair(".worktreeinclude", "failed")], "{v:#}");
    let detail = v["not_included"][0]["detail"].as_str().unwrap();
    assert!(
        detail.contains("is not a regular file (it is a FIFO)"),
        "{detail}"
    );
}

#[test]
fn a_worktreeinclude_over_one_mebibyte_or_too_long_for_git_is_one_warning() {
    let env = TestEnv::new();
    let repo = repo_with_worktreeinclude(&env, &".env\n".repeat((1 << 20) / 5 + 1));
    fs::write(repo.join(".env"), "TOKEN=abc\n").unwrap();
    let v = spawn(&env, &repo, "a", &[]);
    assert_eq!(
        report(&v),
        (vec![], vec![pair(".worktreeinclude", "failed")])
    );
    let detail = v["not_included"][0]["detail"].as_str().unwrap();
    assert!(
        detail.ends_with("is larger than 1 MiB; nothing it names was copied"),
        "{detail}"
    );

    // Under the cap, but half a million patterns are more than one git command line takes:
    // one entry for the file, not one per line.
    fs::write(
        repo.join(".worktreeinclude"),
        "a\n".repeat((1 << 20) / 2 - 1),
    )
    .unwrap();
    let v = spawn(&env, &repo, "b", &[]);
    assert_eq!(
        report(&v),
        (vec![], vec![pair(".worktreeinclude", "failed")])
    );
    assert_eq!(v["not_included"][0]["source"], ".worktreeinclude");
}

#[test]
fn without_a_worktreeinclude_nor_hand_include_spawn_asks_git_nothing_about_includes() {
    let env = TestEnv::new();
    let repo = repo_with_worktreeinclude(&env, "");
    fs::remove_file(repo.join(".worktreeinclude")).unwrap();
    fs::write(repo.join(".env"), "TOKEN=abc\n").unwrap();
    // A git first on PATH that logs its arguments, one line per run.
    let shims = env.path("shims");
    fs::create_dir_all(&shims).unwrap();
    let log = env.path("git.log");
    let real = which::which("git").unwrap();
    fs::write(
        shims.join("git"),
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            real.display()
        ),
    )
    .unwrap();
    fs::set_permissions(
        shims.join("git"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let path = format!(
        "{}:{}:{SYSTEM_PATH}",
        TestEnv::bin_dir().display(),
        shims.display()
    );
    let asked = |task: &str| {
        let _ = fs::remove_file(&log);
        let run = env.hand_env(&repo, &["spawn", task, "--json"], &[("PATH", &path)]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let said = fs::read_to_string(&log).unwrap();
        (
            run.json(),
            said.lines()
                .filter(|l| l.contains("ls-files") || l.contains("check-ignore"))
                .count(),
        )
    };
    let (v, runs) = asked("a");
    assert_eq!(runs, 0, "{}", fs::read_to_string(&log).unwrap());
    assert!(!path_of(&v).join(".env").exists());

    fs::write(repo.join(".worktreeinclude"), ".env\n").unwrap();
    let (v, runs) = asked("b");
    assert!(runs > 0);
    assert!(path_of(&v).join(".env").exists(), "{v:#}");
}
