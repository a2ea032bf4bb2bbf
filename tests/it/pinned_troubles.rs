//! Pinned troubles (issue 12): the text of what git-hand says when the ledger is missing,
//! emptied, damaged or open to others; of a spawn that skipped slots, `prune` (dry run and
//! `--yes`) and each `doctor` finding (and `--repair`); of install's and uninstall's warnings
//! and the notices that the hooks lapsed. Errors of the verbs themselves are in
//! `pinned_errors.rs`, `--json` shapes in `pinned.rs`.
//!
//! Snapshots in `tests/it/snapshots/`, normalized by `support::normalize`; accept a change of
//! wording as `pinned.rs` says (`INSTA_UPDATE=always cargo test --locked pinned_troubles::`).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::doctor_debris::half_added;
use crate::support::{
    Shown, TestEnv, a_ledger_of_many_pages, cred, git_with, installed, leased_again, path_of, said,
    said_each, shot, spawn, write_hook,
};

/// The ledger's `-wal` and `-shm` files, gone.
fn remove_sidecars(ledger: &Path) {
    for suffix in ["-wal", "-shm"] {
        let mut s = ledger.as_os_str().to_owned();
        s.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(s));
    }
}

/// What varies in the ledger's troubles beyond what `support::normalize` knows: the time in
/// the name of a file set aside or a backup (`damaged-1796060960317` → `damaged-[ms]`), the
/// pool of a repository the ledger no longer knows (`app-851bf6/` → `app-[repo-1:6]/`: these
/// tests have one repository) and a WAL's size (`a WAL of [n] bytes`, unless 0).
fn settled(text: String) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    let marks = ["damaged-", "backup-", "/pools/app-", "a WAL of "];
    while let Some((at, mark)) = marks
        .iter()
        .filter_map(|m| rest.find(m).map(|at| (at, *m)))
        .min()
    {
        let (head, tail) = rest.split_at(at + mark.len());
        out.push_str(head);
        let word: String = tail
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .collect();
        let digits = word.chars().all(|c| c.is_ascii_digit()) && !word.is_empty();
        let hex = word.len() == 6 && word.chars().all(|c| c.is_ascii_hexdigit());
        let replacement = match mark {
            "damaged-" | "backup-" if digits => "[ms]",
            "/pools/app-" if hex && tail[6..].starts_with('/') => "[repo-1:6]",
            "a WAL of " if digits && word != "0" => "[n]",
            _ => &word,
        };
        out.push_str(replacement);
        rest = &tail[word.len()..];
    }
    out + rest
}

/// A repository with one live task `a` in slot 1: a ledger with something to lose.
fn with_a_task() -> (TestEnv, PathBuf) {
    let (env, repo) = installed();
    spawn(&env, &repo, "a", &[]);
    (env, repo)
}

#[test]
fn the_text_of_a_missing_ledger_that_evidence_says_existed() {
    let (env, repo) = with_a_task();
    std::fs::remove_file(env.ledger()).unwrap();
    remove_sidecars(&env.ledger());
    let text = said_each(
        &env,
        &repo,
        &[
            &["spawn", "b"],
            &["list"],
            &["lease", "acquire", "7"],
            &["doctor"],
            &["doctor", "--repair"],
            &["doctor"],
        ],
    );
    insta::assert_snapshot!("ledger_missing", settled(text));
}

#[test]
fn the_text_of_an_emptied_or_short_ledger() {
    let (env, repo) = with_a_task();
    std::fs::write(env.ledger(), b"").unwrap();
    remove_sidecars(&env.ledger());
    let text = said_each(
        &env,
        &repo,
        &[
            &["spawn", "b"],
            &["list"],
            &["log"],
            &["status"],
            &["doctor"],
        ],
    );
    std::fs::write(env.ledger(), b"{").unwrap();
    let text = text + &said_each(&env, &repo, &[&["spawn", "b"], &["doctor", "--repair"]]);
    // --repair set the short file aside; what it kept is named with a time.
    insta::assert_snapshot!("ledger_emptied", settled(text));
}

#[test]
fn the_text_of_a_damaged_ledger_and_one_that_is_no_database() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let ledger = env.ledger();
    std::fs::create_dir_all(ledger.parent().unwrap()).unwrap();
    a_ledger_of_many_pages(&ledger);
    let mut bytes = std::fs::read(&ledger).unwrap();
    // The second page: a table's root, laid out the same in every run (a page in the middle
    // holds rows whose random lease ids put them elsewhere each time).
    bytes[4096..2 * 4096].fill(0xA5);
    std::fs::write(&ledger, &bytes).unwrap();
    let text = said_each(
        &env,
        &repo,
        &[&["list"], &["doctor"], &["doctor", "--repair"]],
    );
    std::fs::write(&ledger, vec![b'x'; 8192]).unwrap();
    let text = text + &said_each(&env, &repo, &[&["list"], &["doctor"]]);
    insta::assert_snapshot!("ledger_damaged", settled(text));
}

#[test]
fn the_text_of_a_ledger_open_to_others_and_of_a_wal_without_its_ledger() {
    let (env, repo) = with_a_task();
    let ledger = env.ledger();
    std::fs::set_permissions(&ledger, std::fs::Permissions::from_mode(0o644)).unwrap();
    let text = said_each(&env, &repo, &[&["list"], &["list"]]);
    let mut wal = ledger.as_os_str().to_owned();
    wal.push("-wal");
    assert!(Path::new(&wal).exists(), "git-hand keeps its WAL");
    std::fs::remove_file(&ledger).unwrap();
    let text = text + &said_each(&env, &repo, &[&["spawn", "b"], &["doctor"]]);
    insta::assert_snapshot!("ledger_private_and_wal", settled(text));
}

#[test]
fn the_text_of_a_spawn_that_skipped_a_slot_and_of_prune() {
    let (env, repo) = installed();
    let one = path_of(&spawn(&env, &repo, "a", &[]));
    let two = path_of(&spawn(&env, &repo, "b", &[]));
    env.hand(&repo, &["teardown", "a"]).ok();
    std::fs::write(one.join("stray.txt"), "whose?\n").unwrap();
    // The one free slot is unsafe: spawn skips it and says why (with two, which one it probes
    // first is not fixed, and a clean one probed first leaves nothing to say).
    let text = said_each(&env, &repo, &[&["spawn", "c"], &["teardown", "c"]]);
    env.hand(&repo, &["teardown", "b"]).ok();
    env.commit(&two, "kept.txt", "on no branch\n");
    let text = text
        + &said_each(
            &env,
            &repo,
            &[&["prune"], &["prune", "--yes"], &["prune"], &["list"]],
        );
    insta::assert_snapshot!("spawn_skipped_and_prune", settled(text));
}

#[test]
fn the_text_of_each_doctor_finding_about_a_free_slot_and_its_repair() {
    let (env, repo) = installed();
    // missing-slot: a free slot's directory gone.
    let gone = path_of(&spawn(&env, &repo, "gone", &[]));
    // unusable-slot: a free slot with a stray file.
    let stray = path_of(&spawn(&env, &repo, "stray", &[]));
    // unproven-slot: a free slot replaced by a symlink to the user's worktree.
    let linked = path_of(&spawn(&env, &repo, "linked", &[]));
    for task in ["gone", "stray", "linked"] {
        env.hand(&repo, &["teardown", task]).ok();
    }
    std::fs::remove_dir_all(&gone).unwrap();
    std::fs::write(stray.join("stray.txt"), "whose?\n").unwrap();
    let mine = env.path("work/mine");
    env.git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "mine",
            mine.to_str().unwrap(),
        ],
    );
    std::fs::remove_dir_all(&linked).unwrap();
    std::os::unix::fs::symlink(&mine, &linked).unwrap();
    // unknown-slot: a directory in the pool git-hand never made.
    std::fs::create_dir_all(gone.parent().unwrap().parent().unwrap().join("9/app")).unwrap();
    let text = said_each(
        &env,
        &repo,
        &[&["doctor"], &["doctor", "--repair"], &["doctor"]],
    );
    insta::assert_snapshot!("doctor_free_slots", settled(text));
}

#[test]
fn the_text_of_each_doctor_finding_about_a_task_or_the_hooks_and_its_repair() {
    let (env, repo) = installed();
    spawn(&env, &repo, "lapsed", &["--ttl", "1s"]);
    // stuck-spawn: a spawn that died after recording its intent (no free slot to probe).
    let died = env.hand_env(
        &repo,
        &["spawn", "died"],
        &[("GIT_HAND_FAILPOINT", "spawn-after-intent")],
    );
    assert_ne!(died.code, 0, "{}", died.stderr);
    // stuck-teardown: a teardown that died after detaching its slot.
    spawn(&env, &repo, "halfway", &[]);
    let died = env.hand_env(
        &repo,
        &["teardown", "halfway"],
        &[("GIT_HAND_FAILPOINT", "teardown-after-detach")],
    );
    assert_ne!(died.code, 0, "{}", died.stderr);
    // prunable-worktree: a worktree of the user's whose directory is gone.
    let other = env.path("work/other");
    env.git(
        &repo,
        &["worktree", "add", "-q", "--detach", other.to_str().unwrap()],
    );
    std::fs::remove_dir_all(&other).unwrap();
    // hooks-not-in-force: the pre-push hook deleted.
    std::fs::remove_file(repo.join(".git/hooks/pre-push")).unwrap();
    // expired-lease: real time passing for a 1 s lease to expire.
    std::thread::sleep(std::time::Duration::from_millis(1200));
    let text = said_each(
        &env,
        &repo,
        &[&["doctor"], &["doctor", "--repair"], &["doctor"]],
    );
    insta::assert_snapshot!("doctor_tasks_and_hooks", settled(text));
}

#[test]
fn the_text_of_each_doctor_finding_about_a_half_added_worktree_and_its_repair() {
    let (env, repo) = installed();
    spawn(&env, &repo, "a", &[]);
    // A killed spawn's add (removed), a killed plain add (removed), one locked by someone else
    // and one unlocked (left), and one holding more than a killed add writes (left).
    half_added(&repo, "app1", "git-hand slot", false);
    half_added(&repo, "plain", "initializing", true);
    half_added(&repo, "theirs", "on the backup disk", true);
    std::fs::create_dir_all(repo.join(".git/worktrees/unlocked")).unwrap();
    let fuller = half_added(&repo, "fuller", "git-hand slot", true);
    std::fs::write(fuller.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    let text = said_each(
        &env,
        &repo,
        &[&["doctor"], &["doctor", "--repair"], &["doctor"]],
    );
    insta::assert_snapshot!("doctor_half_added_worktrees", settled(text));
}

/// `status` and `check` in `slot` presenting `vars`, labelled with `what` was done to the hooks.
fn lapse(env: &TestEnv, slot: &Path, vars: &[(String, String)], what: &str) -> String {
    let mut out = format!("### {what}\n");
    for verb in [&["status"][..], &["check"], &[]] {
        out += &said(env, slot, verb, vars);
    }
    out
}

#[test]
fn the_text_of_each_way_the_hooks_lapse() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (slot, _a, b) = leased_again(&env, &repo, "a", "b");
    let b = cred(&b);
    let hooks = repo.join(".git/hooks");
    let hook = hooks.join("pre-push");
    let mut text = lapse(&env, &slot, &b, "in force");
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o644)).unwrap();
    text += &lapse(&env, &slot, &b, "pre-push not executable");
    std::fs::rename(&hook, hooks.join("pre-push.old")).unwrap();
    write_hook(&hook, "#!/bin/sh\nexit 0\n", 0o755);
    text += &lapse(
        &env,
        &slot,
        &b,
        "pre-push renamed to pre-push.old, another in its place",
    );
    std::fs::remove_file(hooks.join("pre-push.old")).unwrap();
    text += &lapse(&env, &slot, &b, "a foreign pre-push");
    text += &said(&env, &repo, &["install"], &[]);
    let chained = hooks.join("pre-push.git-hand-chained");
    std::fs::set_permissions(&chained, std::fs::Permissions::from_mode(0o644)).unwrap();
    text += &lapse(&env, &slot, &b, "the chained hook not executable");
    let other = repo.join(".hooks");
    write_hook(&other.join("pre-push"), "#!/bin/sh\nexit 0\n", 0o755);
    env.git(&repo, &["config", "core.hooksPath", ".hooks"]);
    text += &lapse(
        &env,
        &slot,
        &b,
        "core.hooksPath relative, set after install: slots still run git-hand's hooks for them",
    );
    // Hands the slots to core.hooksPath, as the main worktree has it (issue 25).
    text += &said(&env, &repo, &["doctor", "--repair"], &[]);
    text += &lapse(
        &env,
        &slot,
        &b,
        "core.hooksPath relative, absent from the slot",
    );
    env.git(
        &repo,
        &["config", "core.hooksPath", other.to_str().unwrap()],
    );
    text += &lapse(
        &env,
        &slot,
        &b,
        "core.hooksPath to a directory without git-hand",
    );
    text += &said_each(
        &env,
        &repo,
        &[&["install"], &["install", "--hooks-path"], &["doctor"]],
    );
    std::fs::remove_file(&hook).unwrap();
    env.git(&repo, &["config", "--unset", "core.hooksPath"]);
    text += &lapse(&env, &slot, &b, "pre-push deleted");
    insta::assert_snapshot!("hooks_lapse", settled(text));
}

#[test]
fn the_text_of_install_and_uninstall_warnings_and_post_checkouts_notice() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let hooks = repo.join(".git/hooks");
    write_hook(&hooks.join("pre-push"), "#!/bin/sh\nexit 0\n", 0o755);
    let mut text = said_each(
        &env,
        &repo,
        &[
            &["install"],
            &["install"],
            &["install", "--force"],
            &["uninstall"],
            &["uninstall"],
        ],
    );
    env.git(&repo, &["config", "hand.installHooks", "false"]);
    text += &said_each(&env, &repo, &[&["spawn", "a"]]);
    env.git(&repo, &["config", "--unset", "hand.installHooks"]);
    text += &said_each(&env, &repo, &[&["install"], &["teardown", "a"]]);
    // post-checkout in the slot of a task that is done.
    let slot = env.hand(&repo, &["list", "--json"]).json()["free_slots"][0]["path"]
        .as_str()
        .unwrap()
        .to_string();
    let run = git_with(&env, Path::new(&slot), &[], &["switch", "-q", "-c", "late"]);
    text += &shot(
        &env,
        "git switch -c late   # in a free slot",
        &run,
        Shown::Hook,
    );
    insta::assert_snapshot!("install_warnings", settled(text));
}
