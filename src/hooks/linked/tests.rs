//! The layout's tests, on real repositories with the real git.

use super::entries::{config_quote, forwarder};
use super::section::Note;
use super::*;
use crate::hooks::{HookName, shim};

#[test]
fn the_newline_note_knows_the_file_it_was_written_for() {
    let note = Note::of(b"[core]\n\tbare = false");
    assert_eq!(Note::parse(&note.text()), Some(note));
    assert!(note.matches(b"[core]\n\tbare = false"));
    assert!(
        !note.matches(b"[core]\n\tbare = falsE"),
        "same length, other bytes"
    );
    assert!(!note.matches(b"[core]\n\tbare = false\n"));
    // A note of an earlier build holds the length alone.
    let old = Note::parse("20").unwrap();
    assert!(old.matches(b"[core]\n\tbare = false"));
    assert_eq!(Note::parse("x"), None);
    assert_eq!(Note::parse("20 nothex"), None);
}
use std::process::{Command, Stdio};

/// git with a hermetic environment: no global or system configuration, nothing inherited
/// that points it at another repository or makes git-hand's shim judge.
fn git_cmd(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(dir).args(args).stdin(Stdio::null());
    for var in crate::git::runner::SCRUBBED {
        cmd.env_remove(var);
    }
    for var in [
        "GIT_HAND_LEASE",
        "GIT_HAND_TOKEN",
        "CLAUDE_CODE_SESSION_ID",
        "GIT_HAND_IN_HOOK",
        "GIT_HAND_INTERNAL",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com");
    cmd
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = git_cmd(dir, args).output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .trim_end()
        .to_string()
}

fn shim_text() -> &'static str {
    shim::content(HookName::ReferenceTransaction)
}

/// A repository with one commit: (temp dir, main worktree, common dir), all canonical.
fn repo() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let top = fs::canonicalize(tmp.path()).unwrap().join("repo");
    fs::create_dir(&top).unwrap();
    git(&top, &["init", "-q", "-b", "main"]);
    git(&top, &["commit", "-q", "--allow-empty", "-m", "init"]);
    let common = top.join(".git");
    (tmp, top, common)
}

/// A linked worktree of the repository at `from` on a new branch.
fn add_worktree(from: &Path, dir: &Path, branch: &str) {
    git(
        from,
        &["worktree", "add", "-q", "-b", branch, dir.to_str().unwrap()],
    );
}

/// `git rev-parse --git-path hooks` in `dir`, made absolute.
fn hooks_of(dir: &Path) -> PathBuf {
    let hooks = PathBuf::from(git(dir, &["rev-parse", "--git-path", "hooks"]));
    let hooks = dir.join(hooks);
    fs::canonicalize(&hooks).unwrap_or(hooks)
}

/// An executable sh script appending `$0`, its arguments and stdin to `log`.
fn recording_hook(path: &Path, log: &Path, with_stdin: bool) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let log = String::from_utf8(shim::sh_quote_bytes(log.as_os_str().as_bytes())).unwrap();
    let stdin = if with_stdin { "; cat" } else { "" };
    fs::write(
        path,
        format!("#!/bin/sh\n{{ printf '%s\\n' \"$0\" \"$@\"{stdin}; }} >>{log}\n"),
    )
    .unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_default()
}

fn changes_of(changes: &[LinkedChange]) -> Vec<(String, EntryChange)> {
    changes
        .iter()
        .map(|c| {
            let name = c.path.file_name().unwrap().to_string_lossy().to_string();
            (name, c.change)
        })
        .collect()
}

#[test]
fn after_include_and_sync_the_main_worktree_runs_d_and_a_linked_one_runs_l() {
    for bare in [false, true] {
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap();
        let mut kept = None;
        let (main, common) = if bare {
            let seed = root.join("seed");
            fs::create_dir(&seed).unwrap();
            git(&seed, &["init", "-q", "-b", "main"]);
            git(&seed, &["commit", "-q", "--allow-empty", "-m", "init"]);
            let bare_dir = root.join("bare.git");
            git(
                &root,
                &["clone", "-q", "--bare", "seed", bare_dir.to_str().unwrap()],
            );
            (bare_dir.clone(), bare_dir)
        } else {
            let (keep, top, common) = repo();
            kept = Some(keep);
            (top, common)
        };
        let d = main_hooks_dir(&common).unwrap();
        assert_eq!(d, common.join("hooks"), "bare: {bare}");
        assert_eq!(include(&common).unwrap(), Included::Added);
        assert!(!sync(&common, shim_text()).unwrap().is_empty());
        let slot = root.join("slot");
        add_worktree(&main, &slot, "slot");
        let l = common.join("git-hand/hooks");
        assert_eq!(hooks_of(&main), d, "bare: {bare}");
        assert_eq!(hooks_of(&slot), l, "bare: {bare}");
        drop(kept);
    }
}

#[test]
fn a_d_hook_runs_in_a_linked_worktree_through_its_forwarder_with_ds_path_and_gits_arguments_and_stdin()
 {
    let (tmp, top, common) = repo();
    let log = tmp.path().join("log");
    let d = main_hooks_dir(&common).unwrap();
    recording_hook(&d.join("pre-push"), &log, true);
    include(&common).unwrap();
    sync(&common, shim_text()).unwrap();
    let l_hook = common.join("git-hand/hooks/pre-push");
    assert!(fs::symlink_metadata(&l_hook).unwrap().is_file());
    assert_eq!(
        forward_target(&fs::read(&l_hook).unwrap()),
        Some(d.join("pre-push"))
    );

    let remote = tmp.path().join("remote.git");
    git(
        tmp.path(),
        &["init", "-q", "--bare", remote.to_str().unwrap()],
    );
    let slot = tmp.path().join("slot");
    add_worktree(&top, &slot, "slot");
    git(
        &slot,
        &["commit", "-q", "--allow-empty", "-m", "in the slot"],
    );
    let head = git(&slot, &["rev-parse", "HEAD"]);
    let url = remote.to_str().unwrap();
    git(&slot, &["push", "-q", url, "slot"]);
    let zero = "0".repeat(head.len());
    assert_eq!(
        read(&log),
        format!(
            "{}\n{url}\n{url}\nrefs/heads/slot {head} refs/heads/slot {zero}\n",
            d.join("pre-push").display()
        )
    );
}

#[test]
fn a_hook_added_to_d_after_sync_runs_through_its_link_until_the_next_sync_makes_it_a_forwarder() {
    let (tmp, top, common) = repo();
    let log = tmp.path().join("log");
    let d = main_hooks_dir(&common).unwrap();
    include(&common).unwrap();
    sync(&common, shim_text()).unwrap();
    let slot = tmp.path().join("slot");
    add_worktree(&top, &slot, "slot");
    let l_hook = common.join("git-hand/hooks/pre-commit");
    assert_eq!(fs::read_link(&l_hook).unwrap(), d.join("pre-commit"));

    recording_hook(&d.join("pre-commit"), &log, false);
    let written = fs::read(d.join("pre-commit")).unwrap();
    git(&slot, &["commit", "-q", "--allow-empty", "-m", "one"]);
    assert_eq!(read(&log), format!("{}\n", l_hook.display()));

    let changes = sync(&common, shim_text()).unwrap();
    assert_eq!(
        changes_of(&changes),
        [("pre-commit".to_string(), EntryChange::Forwarder)]
    );
    assert!(fs::symlink_metadata(&l_hook).unwrap().is_file());
    assert_eq!(
        fs::read(d.join("pre-commit")).unwrap(),
        written,
        "wrote through the link"
    );
    fs::remove_file(&log).unwrap();
    git(&slot, &["commit", "-q", "--allow-empty", "-m", "two"]);
    assert_eq!(read(&log), format!("{}\n", d.join("pre-commit").display()));
}

#[test]
fn a_forwarder_whose_d_hook_is_gone_becomes_a_link() {
    let (tmp, top, common) = repo();
    let log = tmp.path().join("log");
    let d = main_hooks_dir(&common).unwrap();
    recording_hook(&d.join("pre-commit"), &log, false);
    include(&common).unwrap();
    sync(&common, shim_text()).unwrap();
    let l_hook = common.join("git-hand/hooks/pre-commit");
    assert!(fs::symlink_metadata(&l_hook).unwrap().is_file());

    fs::remove_file(d.join("pre-commit")).unwrap();
    let changes = sync(&common, shim_text()).unwrap();
    assert_eq!(
        changes_of(&changes),
        [("pre-commit".to_string(), EntryChange::Link)]
    );
    assert_eq!(fs::read_link(&l_hook).unwrap(), d.join("pre-commit"));
    let slot = tmp.path().join("slot");
    add_worktree(&top, &slot, "slot");
    git(&slot, &["commit", "-q", "--allow-empty", "-m", "one"]);
    assert_eq!(read(&log), "");
    assert!(!d.join("pre-commit").exists());
}

#[test]
fn a_second_sync_changes_nothing_and_state_finds_nothing_stale() {
    let (tmp, _top, common) = repo();
    let log = tmp.path().join("log");
    let d = main_hooks_dir(&common).unwrap();
    recording_hook(&d.join("pre-push"), &log, true);
    recording_hook(&d.join(REFERENCE_TRANSACTION), &log, true);
    include(&common).unwrap();
    let first = changes_of(&sync(&common, shim_text()).unwrap());
    for expected in [
        ("pre-push", EntryChange::Forwarder),
        ("pre-commit", EntryChange::Link),
        (REFERENCE_TRANSACTION, EntryChange::Shim),
        (
            "reference-transaction.git-hand-chained",
            EntryChange::Chained,
        ),
        ("linked.config", EntryChange::Config),
    ] {
        assert!(
            first.contains(&(expected.0.to_string(), expected.1)),
            "{expected:?} in {first:?}"
        );
    }
    assert_eq!(first.len(), HOOK_NAMES.len() + 2);
    let l = common.join("git-hand/hooks");
    let inodes = |dir: &Path| {
        let mut all: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name(),
                    std::os::unix::fs::MetadataExt::ino(&e.metadata().unwrap()),
                )
            })
            .collect();
        all.sort();
        all
    };
    let before = (inodes(&l), inodes(&common.join("git-hand")));
    assert_eq!(sync(&common, shim_text()).unwrap(), []);
    assert_eq!((inodes(&l), inodes(&common.join("git-hand"))), before);

    let state = state(&common, shim_text()).unwrap();
    assert!(
        state.included && state.points_at_l && state.records_current,
        "{state:?}"
    );
    assert_eq!(state.recorded, Some((d.clone(), common.clone())));
    assert_eq!(state.stale, []);
    assert_eq!(state.d, d);
}

#[test]
fn a_changed_d_is_reported_stale_and_the_next_sync_rewrites_the_record_and_l() {
    let (tmp, _top, common) = repo();
    let log = tmp.path().join("log");
    let old = main_hooks_dir(&common).unwrap();
    include(&common).unwrap();
    sync(&common, shim_text()).unwrap();

    let new = tmp.path().join("hooks2");
    recording_hook(&new.join("pre-push"), &log, true);
    git(
        &common,
        &["config", "core.hooksPath", new.to_str().unwrap()],
    );
    let state = state(&common, shim_text()).unwrap();
    assert_eq!(state.d, new);
    assert!(state.included && state.points_at_l && !state.records_current);
    assert_eq!(state.recorded, Some((old, common.clone())));
    let stale = changes_of(&state.stale);
    assert!(stale.contains(&("pre-push".to_string(), EntryChange::Forwarder)));
    assert!(stale.contains(&("linked.config".to_string(), EntryChange::Config)));
    assert_eq!(
        stale.len(),
        HOOK_NAMES.len() + 1,
        "every link (the chained one too) and the config: {stale:?}"
    );

    let changes = sync(&common, shim_text()).unwrap();
    assert_eq!(changes_of(&changes), stale);
    assert_eq!(
        fs::read_link(common.join("git-hand/hooks/pre-commit")).unwrap(),
        new.join("pre-commit")
    );
    assert!(state_is_clean(&common));
}

fn state_is_clean(common: &Path) -> bool {
    let state = state(common, shim_text()).unwrap();
    state.records_current && state.points_at_l && state.stale.is_empty()
}

#[test]
fn exclude_gives_back_the_config_byte_for_byte_with_or_without_a_final_newline() {
    for tail in [
        "",
        "\n",
        "# a comment of the user's\n",
        "# no newline after me",
    ] {
        let (_tmp, _top, common) = repo();
        let config = common.join("config");
        let mut before = fs::read(&config).unwrap();
        before.extend_from_slice(tail.as_bytes());
        if tail.is_empty() {
            // The same file without its final newline.
            before.pop();
        }
        fs::write(&config, &before).unwrap();
        assert_eq!(include(&common).unwrap(), Included::Added);
        let with = fs::read_to_string(&config).unwrap();
        assert!(
            with.ends_with(
                "[includeIf \"gitdir:./worktrees/**\"]\n\tpath = git-hand/linked.config\n"
            ),
            "{with}"
        );
        assert_eq!(include(&common).unwrap(), Included::Unchanged);
        assert_eq!(exclude(&common).unwrap(), Excluded::Removed);
        assert_eq!(fs::read(&config).unwrap(), before, "tail {tail:?}");
        assert_eq!(exclude(&common).unwrap(), Excluded::NotThere);
        assert_eq!(fs::read(&config).unwrap(), before, "tail {tail:?}");
        assert!(!common.join("git-hand/config-had-no-final-newline").exists());
    }
}

/// An exclude that removed the section but stopped before it took back git's newline (the
/// strip found `config.lock`) is finished by the next one: the file is as it was before.
#[test]
fn a_retried_exclude_takes_back_the_newline_an_interrupted_one_left() {
    let (_tmp, _top, common) = repo();
    let config = common.join("config");
    let mut before = fs::read(&config).unwrap();
    before.pop();
    fs::write(&config, &before).unwrap();
    include(&common).unwrap();
    // What the interrupted exclude did: the section is gone, the newline and the note stay.
    git(
        &common,
        &[
            "config",
            "-f",
            config.to_str().unwrap(),
            "--remove-section",
            SECTION,
        ],
    );
    assert_ne!(fs::read(&config).unwrap(), before);
    assert_eq!(exclude(&common).unwrap(), Excluded::NotThere);
    assert_eq!(fs::read(&config).unwrap(), before);
    assert!(!common.join("git-hand/config-had-no-final-newline").exists());
}

/// A header of the user's with nothing under it is theirs: neither added to (git would put
/// the key under it, not at the end) nor removed.
#[test]
fn an_empty_section_of_the_users_is_neither_added_to_nor_removed() {
    let (_tmp, _top, common) = repo();
    let config = common.join("config");
    let mut text = fs::read(&config).unwrap();
    text.extend_from_slice(b"[includeIf \"gitdir:./worktrees/**\"]\n");
    fs::write(&config, &text).unwrap();
    assert!(matches!(
        include(&common),
        Err(LinkedError::SectionTaken { .. })
    ));
    assert!(matches!(
        exclude(&common),
        Err(LinkedError::SectionTaken { .. })
    ));
    assert_eq!(fs::read(&config).unwrap(), text);
}

/// A forwarder is no shim of git-hand's: the chain runner, which skips git-hand's own shim,
/// runs a chained forwarder (D's reference-transaction from L's shim).
#[test]
fn a_forwarder_is_not_taken_for_git_hands_shim() {
    let text = forwarder(Path::new("/repo/.git/hooks/reference-transaction"));
    assert!(!shim::is_ours(&text));
    assert!(shim::is_ours(shim_text().as_bytes()));
    assert_eq!(
        forward_target(&text),
        Some(PathBuf::from("/repo/.git/hooks/reference-transaction"))
    );
}

#[test]
fn lines_added_after_the_section_keep_their_final_newline() {
    let (_tmp, _top, common) = repo();
    let config = common.join("config");
    let mut before = fs::read(&config).unwrap();
    before.pop();
    fs::write(&config, &before).unwrap();
    include(&common).unwrap();
    git(&common, &["config", "their.key", "kept"]);
    exclude(&common).unwrap();
    let after = fs::read_to_string(&config).unwrap();
    let mut expected = String::from_utf8(before).unwrap();
    expected.push_str("\n[their]\n\tkey = kept\n");
    assert_eq!(after, expected);
}

#[test]
fn a_section_with_the_users_own_lines_is_neither_added_to_nor_removed() {
    let (_tmp, _top, common) = repo();
    git(&common, &["config", KEY, "their.config"]);
    let before = fs::read(common.join("config")).unwrap();
    assert!(matches!(
        include(&common),
        Err(LinkedError::SectionTaken { .. })
    ));
    assert!(matches!(
        exclude(&common),
        Err(LinkedError::SectionTaken { .. })
    ));
    assert_eq!(fs::read(common.join("config")).unwrap(), before);
}

#[test]
fn a_relative_d_gets_forwarders_to_dot_d_and_no_links() {
    let (tmp, top, common) = repo();
    let log = tmp.path().join("log");
    recording_hook(&top.join(".husky/_/pre-commit"), &log, false);
    git(&top, &["add", "-f", ".husky"]);
    git(&top, &["commit", "-q", "-m", "husky"]);
    git(&top, &["config", "core.hooksPath", ".husky/_"]);
    let d = main_hooks_dir(&common).unwrap();
    assert_eq!(d, Path::new(".husky/_"));
    include(&common).unwrap();
    let changes = changes_of(&sync(&common, shim_text()).unwrap());
    assert_eq!(
        changes,
        [
            ("pre-commit".to_string(), EntryChange::Forwarder),
            (REFERENCE_TRANSACTION.to_string(), EntryChange::Shim),
            ("linked.config".to_string(), EntryChange::Config),
        ]
    );
    let l = common.join("git-hand/hooks");
    assert_eq!(
        forward_target(&fs::read(l.join("pre-commit")).unwrap()),
        Some(PathBuf::from("./.husky/_/pre-commit"))
    );
    assert!(fs::symlink_metadata(l.join("pre-push")).is_err());

    let slot = tmp.path().join("slot");
    add_worktree(&top, &slot, "slot");
    git(
        &slot,
        &["commit", "-q", "--allow-empty", "-m", "in the slot"],
    );
    assert_eq!(read(&log), "./.husky/_/pre-commit\n");
    assert!(state_is_clean(&common));
}

#[test]
fn ds_reference_transaction_runs_in_a_slot_as_the_shims_chained_hook() {
    let (tmp, top, common) = repo();
    let log = tmp.path().join("log");
    let d = main_hooks_dir(&common).unwrap();
    let hook = d.join(REFERENCE_TRANSACTION);
    fs::write(
        &hook,
        format!(
            "#!/bin/sh\necho \"$GIT_HAND_HOOK_DIR $1\" >>{}\n",
            String::from_utf8(shim::sh_quote_bytes(log.as_os_str().as_bytes())).unwrap()
        ),
    )
    .unwrap();
    fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
    include(&common).unwrap();
    sync(&common, shim_text()).unwrap();
    let slot = tmp.path().join("slot");
    add_worktree(&top, &slot, "slot");
    fs::remove_file(&log).unwrap();
    git(
        &slot,
        &["commit", "-q", "--allow-empty", "-m", "in the slot"],
    );
    let l = common.join("git-hand/hooks");
    let logged = read(&log);
    assert!(
        logged.contains(&format!("{} committed\n", l.display())),
        "{logged}"
    );

    // D's reference-transaction is git-hand's own (installed before issue 25): the chained
    // hook is the one it chained.
    fs::rename(&hook, d.join("reference-transaction.git-hand-chained")).unwrap();
    fs::write(&hook, shim_text()).unwrap();
    fs::set_permissions(&hook, fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(
        changes_of(&sync(&common, shim_text()).unwrap()),
        [(
            "reference-transaction.git-hand-chained".to_string(),
            EntryChange::Chained
        )]
    );
    assert_eq!(
        forward_target(&fs::read(l.join("reference-transaction.git-hand-chained")).unwrap()),
        Some(d.join("reference-transaction.git-hand-chained"))
    );
}

#[test]
fn a_moved_repository_gets_its_record_and_l_rewritten() {
    let (tmp, top, common) = repo();
    include(&common).unwrap();
    sync(&common, shim_text()).unwrap();
    let moved = tmp.path().join("moved");
    fs::rename(&top, &moved).unwrap();
    let common = fs::canonicalize(moved.join(".git")).unwrap();
    assert!(!state_is_clean(&common));
    let changes = changes_of(&sync(&common, shim_text()).unwrap());
    assert!(changes.contains(&("linked.config".to_string(), EntryChange::Config)));
    assert!(changes.contains(&("pre-push".to_string(), EntryChange::Link)));
    assert_eq!(
        hooks_path_of(&Paths::of(&common)).unwrap(),
        Some(common.join("git-hand/hooks"))
    );
    assert!(state_is_clean(&common));
}

#[test]
fn a_hook_name_newer_than_git_hands_list_is_forwarded_and_removed_with_the_rest() {
    let (_tmp, _top, common) = repo();
    let d = common.join("hooks");
    let future = d.join("post-future");
    fs::write(&future, "#!/bin/sh\nexit 0\n").unwrap();
    fs::set_permissions(&future, fs::Permissions::from_mode(0o755)).unwrap();
    // Not hook names: git's samples and git-hand's chained files.
    fs::write(d.join("pre-push.git-hand-chained"), "#!/bin/sh\n").unwrap();
    include(&common).unwrap();
    sync(&common, shim_text()).unwrap();
    let l = common.join("git-hand/hooks");
    let entry = fs::read(l.join("post-future")).unwrap();
    assert_eq!(forward_target(&entry), Some(future));
    assert!(!l.join("pre-push.git-hand-chained").exists());
    assert!(!l.join("pre-push.sample").exists());
    exclude(&common).unwrap();
    remove_files(&common).unwrap();
    assert!(!common.join("git-hand").exists());
}

#[test]
fn remove_files_leaves_no_file_of_the_layout() {
    let (_tmp, _top, common) = repo();
    include(&common).unwrap();
    sync(&common, shim_text()).unwrap();
    exclude(&common).unwrap();
    let removed = remove_files(&common).unwrap();
    // Every name's entry, the chained link and linked.config.
    assert_eq!(removed.len(), HOOK_NAMES.len() + 2);
    assert!(!common.join("git-hand").exists());
}

/// What a tool wrote into L (git-lfs's installer run in a slot writes there: it honours
/// `core.hooksPath`), an edited forwarder and a directory in a hook's place are not
/// git-hand's: sync leaves them, state names them, uninstall keeps them.
#[test]
fn what_git_hand_did_not_write_in_l_is_left_and_reported() {
    let (_tmp, _top, common) = repo();
    include(&common).unwrap();
    sync(&common, shim_text()).unwrap();
    let l = common.join("git-hand/hooks");
    let lfs = l.join("post-commit");
    fs::remove_file(&lfs).unwrap();
    fs::write(&lfs, "#!/bin/sh\ngit lfs post-commit \"$@\"\n").unwrap();
    fs::set_permissions(&lfs, fs::Permissions::from_mode(0o755)).unwrap();
    fs::remove_file(l.join("pre-rebase")).unwrap();
    fs::create_dir(l.join("pre-rebase")).unwrap();
    let before = fs::read(&lfs).unwrap();

    let state = state(&common, shim_text()).unwrap();
    let mut foreign = state.foreign.clone();
    foreign.sort();
    assert_eq!(foreign, vec![lfs.clone(), l.join("pre-rebase")]);
    assert_eq!(state.stale, vec![], "foreign entries are not stale ones");
    // The tool's file is moved aside, byte for byte, and git-hand's entry takes its place;
    // the directory is left where it is.
    let displaced = l.join("post-commit.git-hand-displaced");
    assert_eq!(
        sync(&common, shim_text()).unwrap(),
        [
            LinkedChange {
                path: displaced.clone(),
                change: EntryChange::Displaced
            },
            LinkedChange {
                path: lfs.clone(),
                change: EntryChange::Link
            }
        ]
    );
    assert_eq!(fs::read(&displaced).unwrap(), before);
    assert!(fs::symlink_metadata(&lfs).unwrap().file_type().is_symlink());
    assert_eq!(state_of_foreign(&common), vec![l.join("pre-rebase")]);
    assert_eq!(sync(&common, shim_text()).unwrap(), []);
    exclude(&common).unwrap();
    remove_files(&common).unwrap();
    assert_eq!(
        fs::read(&displaced).unwrap(),
        before,
        "uninstall took a tool's hook"
    );
    assert!(l.join("pre-rebase").is_dir());
}

fn state_of_foreign(common: &Path) -> Vec<PathBuf> {
    state(common, shim_text()).unwrap().foreign
}

#[test]
fn a_symlinked_hooks_dir_is_not_written_through() {
    let (tmp, _top, common) = repo();
    let elsewhere = tmp.path().join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    fs::create_dir(common.join("git-hand")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, common.join("git-hand/hooks")).unwrap();
    assert!(matches!(
        sync(&common, shim_text()),
        Err(LinkedError::NotADirectory { .. })
    ));
    assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0);
}

#[test]
fn quoting_round_trips_any_path() {
    for path in [
        "/a/b",
        "/it's here/x",
        "/q\"uo\\te/\nline\tend",
        "./.husky/_/pre-commit",
    ] {
        let text = forwarder(Path::new(path));
        assert_eq!(forward_target(&text), Some(PathBuf::from(path)), "{path:?}");
        let quoted = config_quote(path.as_bytes());
        assert!(!quoted.contains(&b'\n'));
        assert_eq!(
            config_unquote(&quoted),
            Some((path.as_bytes().to_vec(), &b""[..]))
        );
    }
    assert_eq!(forward_target(b"#!/bin/sh\nexec '/x' \"$@\"\n"), None);
}

// What the layout is, read more thoroughly than [`check`] does (git asked for the section and
// for `linked.config`'s value): what the tests hold `sync` and `include` to.

/// The whole layout as the tests read it: the section, `linked.config` as git reads it, and
/// what a [`sync`] to the current D would change.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LinkedState {
    /// `<common>/config` holds git-hand's section.
    pub included: bool,
    /// `linked.config` sets `core.hooksPath` to L.
    pub points_at_l: bool,
    /// `linked.config` records the current D and common dir.
    pub records_current: bool,
    /// D as the main worktree sees it now ([`main_hooks_dir`]).
    pub d: PathBuf,
    /// What D and common dir `linked.config` records, when it can be read.
    pub recorded: Option<(PathBuf, PathBuf)>,
    /// What a [`sync`] would change now (L's stale entries and `linked.config`); empty when L
    /// matches D.
    pub stale: Vec<LinkedChange>,
    /// Entries of L git-hand did not write (a tool's installer run in a slot writes into L, an
    /// edited forwarder, a directory): [`sync`] leaves them, so they are not what L should be.
    pub foreign: Vec<PathBuf>,
}

/// [`LinkedState`] now, asking git where it can (the section, `linked.config`'s value).
fn state(common: &Path, reftx_shim: &str) -> Result<LinkedState, LinkedError> {
    let paths = Paths::of(&canonical(common)?);
    let included = matches!(section(&paths)?, Section::Ours);
    let d = main_hooks_dir(&paths.common)?;
    let plan = plan(&paths, &d, reftx_shim)?;
    let text = fs::read(&paths.config).ok();
    let recorded = text.as_deref().and_then(parse_record);
    let points_at_l = text.is_some() && hooks_path_of(&paths)?.as_deref() == Some(&paths.hooks);
    let records_current = recorded.as_ref() == Some(&(d.clone(), paths.common.clone()));
    let foreign = plan
        .entries
        .iter()
        .filter(|s| s.is_foreign())
        .map(|s| s.path.clone())
        .collect();
    let mut stale: Vec<LinkedChange> = plan
        .entries
        .iter()
        .filter(|s| !s.matches() && !s.is_foreign())
        .map(|s| LinkedChange {
            path: s.path.clone(),
            change: s.change,
        })
        .collect();
    if text.as_deref() != Some(plan.config.as_slice()) {
        stale.push(LinkedChange {
            path: paths.config.clone(),
            change: EntryChange::Config,
        });
    }
    Ok(LinkedState {
        included,
        points_at_l,
        records_current,
        d,
        recorded,
        stale,
        foreign,
    })
}

/// The D and common dir `linked.config`'s first line records.
fn parse_record(text: &[u8]) -> Option<(PathBuf, PathBuf)> {
    let line = text.split(|b| *b == b'\n').next()?;
    let rest = line.strip_prefix(RECORD_PREFIX.as_bytes())?;
    let (d, rest) = config_unquote(rest)?;
    let rest = rest.strip_prefix(b" and common dir ")?;
    let (common, rest) = config_unquote(rest)?;
    rest.is_empty().then(|| {
        (
            PathBuf::from(OsString::from_vec(d)),
            PathBuf::from(OsString::from_vec(common)),
        )
    })
}

/// `core.hooksPath` as `linked.config` sets it, read by git.
fn hooks_path_of(paths: &Paths) -> Result<Option<PathBuf>, LinkedError> {
    let file = paths.config.as_os_str();
    let args: [&OsStr; 5] = [
        "config".as_ref(),
        "-f".as_ref(),
        file,
        "--get".as_ref(),
        "core.hooksPath".as_ref(),
    ];
    let out = git_output(&paths.common, &args)
        .map_err(|source| git_err("read", &paths.config, source))?;
    let mut value = out.stdout;
    if value.last() == Some(&b'\n') {
        value.pop();
    }
    Ok(out
        .status
        .success()
        .then(|| PathBuf::from(OsString::from_vec(value))))
}
