//! A hook manager's installer run inside a slot (issue 25), with each real tool: what
//! `lefthook install`, `pre-commit install` and git-lfs's installers do to the main
//! worktree's hooks directory (D, `.git/hooks`) and to git-hand's hooks directory for linked
//! worktrees (L, `.git/git-hand/hooks`), whether the manager's hooks then run in slots, whether a
//! superseded holder (a zombie) is still refused there, what `git hand doctor` says, and the way
//! out: the installer run in the main worktree, as `git hand install --manual` says. A file such
//! an installer wrote into L unfences slots only until the next sync of L (`git hand install`, a
//! spawn, `doctor --repair`), which moves it aside (`<name>.git-hand-displaced`, byte for byte)
//! and puts git-hand's entry back.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::managers_lefthook::{lefthook_ran, lefthook_repo};
use crate::managers_lfs::stored;
use crate::support::{
    Run, TestEnv, cred, git_with, hooks_dir, leased_again, push, remote_oid, tool, tree,
};

/// L: git-hand's hooks directory for linked worktrees.
fn linked_dir(repo: &Path) -> PathBuf {
    repo.join(".git/git-hand/hooks")
}

/// A directory's files as [`tree`] gives them: relative path to (mode, bytes or link target).
type Tree = BTreeMap<PathBuf, (u32, Vec<u8>)>;

/// D and L, every entry (a link as its target), so "untouched" can be asserted.
fn both(repo: &Path) -> (Tree, Tree) {
    (tree(&hooks_dir(repo)), tree(&linked_dir(repo)))
}

/// The text of `path`, which must be there.
fn text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Whether `path` is git-hand's forwarder (or link) to `target`.
fn forwards_to(path: &Path, target: &Path) -> bool {
    match std::fs::read_link(path) {
        Ok(to) => to == target,
        Err(_) => std::fs::read(path)
            .is_ok_and(|b| git_hand::hooks::linked::forward_target(&b).as_deref() == Some(target)),
    }
}

/// Where a recording hook ran, one line per run: `<what> <dir>`.
fn ran(env: &TestEnv) -> String {
    std::fs::read_to_string(env.path("ran")).unwrap_or_default()
}

/// A sh line appending `<what> $PWD` to the env's record.
fn record(env: &TestEnv, what: &str) -> String {
    format!("echo \"{what} $PWD\" >> '{}'", env.path("ran").display())
}

/// A repository with `files` committed and pushed (so every slot has them).
fn repo_with(env: &TestEnv, files: &[(&str, String)]) -> (PathBuf, PathBuf) {
    let repo = env.repo("app");
    for (name, content) in files {
        std::fs::write(repo.join(name), content).unwrap();
        env.git(&repo, &["add", name]);
    }
    env.git(&repo, &["commit", "-q", "-m", "tooling"]);
    env.git(&repo, &["push", "-q", "origin", "main"]);
    (repo, env.path("work/app-origin.git"))
}

/// A repository whose committed lefthook.yml runs one job for `hook` (recording `lefthook-<hook>`
/// and the worktree it ran in), lefthook not installed yet, git-hand installed: the repository and
/// its origin.
fn lefthook_job_installed(env: &TestEnv, hook: &str) -> (PathBuf, PathBuf) {
    let yml = format!(
        "{hook}:\n  commands:\n    team:\n      run: {}\n",
        record(env, &format!("lefthook-{hook}"))
    );
    let (repo, origin) = repo_with(env, &[("lefthook.yml", yml)]);
    env.hand(&repo, &["install"]).ok();
    (repo, origin)
}

/// The zombie `a` (its lease ended, its slot leased again to `b`) commits in `slot` with its
/// credential: refused by git-hand's reference-transaction shim in L, no ref moved. The file
/// stays staged for [`zombie_push`].
fn zombie_commit_is_refused(env: &TestEnv, slot: &Path, a: &Value) {
    crate::support::assert_zombie_commit_refused(env, slot, a, "zombie.txt");
}

/// The zombie's work committed in `slot` without a credential (a commit nothing refuses), then
/// pushed with `a`'s credential to `branch`.
fn zombie_push(env: &TestEnv, slot: &Path, a: &Value, branch: &str) -> Run {
    if env.git_run(slot, &["diff", "--cached", "--quiet"]).code != 0 {
        env.git(slot, &["commit", "-q", "-m", "zombie"]);
    }
    push(
        env,
        slot,
        &cred(a),
        &["origin", &format!("HEAD:refs/heads/{branch}")],
    )
}

/// [`zombie_push`], refused by git-hand's pre-push: `branch` does not reach `origin`.
#[track_caller]
fn zombie_push_is_refused(env: &TestEnv, slot: &Path, a: &Value, origin: &Path, branch: &str) {
    let run = zombie_push(env, slot, a, branch);
    assert_ne!(
        run.code, 0,
        "the zombie's push went through:\n{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("git-hand: push refused (stale)"),
        "{}",
        run.stderr
    );
    assert_eq!(remote_oid(env, origin, branch), None);
}

/// `git hand doctor --json` in `dir`: its problems (exit 3 when there are some, else 0).
fn doctor(env: &TestEnv, dir: &Path) -> Vec<Value> {
    let run = env.hand(dir, &["doctor", "--json"]);
    let v = run.json();
    let problems = v["problems"].as_array().cloned().unwrap_or_default();
    let want = if problems.is_empty() { 0 } else { 3 };
    assert_eq!(run.code, want, "{}{}", run.stdout, run.stderr);
    problems
}

/// The one problem about `subject` whose detail ends with the lapse kind `(kind)` and says
/// `saying`.
#[track_caller]
fn problem<'a>(problems: &'a [Value], subject: &Path, kind: &str, saying: &str) -> &'a Value {
    let subject = subject.display().to_string();
    let ends = format!("({kind})");
    let found: Vec<_> = problems
        .iter()
        .filter(|p| p["subject"] == subject.as_str())
        .filter(|p| {
            p["detail"]
                .as_str()
                .map(words)
                .is_some_and(|d| d.ends_with(&ends) && d.contains(saying))
        })
        .collect();
    assert_eq!(
        found.len(),
        1,
        "{kind} about {subject} saying {saying:?}: {}",
        pretty(problems)
    );
    found[0]
}

/// Problems as pretty JSON, for a failure's message.
fn pretty(problems: &[Value]) -> String {
    serde_json::to_string_pretty(problems).unwrap()
}

/// `text` with every run of whitespace one space: a message compared by its words.
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `sh -c line` in `dir`, asserting success.
fn sh(env: &TestEnv, dir: &Path, line: &str) {
    let run = tool(env, dir, "sh", &["-c", line]);
    assert_eq!(run.code, 0, "{line}:\n{}{}", run.stdout, run.stderr);
}

/// What `git hand install --manual --json` prints in `dir`: (manager, recipe).
fn manual(env: &TestEnv, dir: &Path) -> (String, String) {
    let v = env
        .hand(dir, &["install", "--manual", "--json"])
        .code(0)
        .json();
    (
        v["manager"].as_str().unwrap().to_string(),
        v["recipe"].as_str().unwrap().to_string(),
    )
}

// ---------------------------------------------------------------------------------------------
// lefthook

/// lefthook's launcher (`lefthook install` writes it for every hook its config names).
fn is_lefthook_launcher(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|t| t.contains("call_lefthook run"))
}

/// A lefthook config whose only hook is pre-commit: in a slot, `lefthook install` finds L's
/// dangling link for it and writes its launcher through the link, into D. L is untouched (the
/// link is still a link, now live), lefthook's job runs in the slot, the fence holds; doctor
/// names the live link (the fence holds) and `doctor --repair` turns it into a forwarder.
#[test]
fn lefthook_install_in_a_slot_writes_through_ls_link_into_d_and_the_fence_holds() {
    let env = TestEnv::new().with_hook_tools();
    let (repo, origin) = lefthook_job_installed(&env, "pre-commit");
    let (slot, a, _b) = leased_again(&env, &repo, "a", "b");
    let (d, l) = (hooks_dir(&repo), linked_dir(&repo));
    let (_, l_before) = both(&repo);

    tool(&env, &slot, "lefthook", &["install"]).ok();
    assert_eq!(tree(&l), l_before, "lefthook install in a slot changed L");
    assert!(
        is_lefthook_launcher(&d.join("pre-commit")),
        "lefthook's launcher is not in D"
    );
    assert_eq!(
        std::fs::read_link(l.join("pre-commit")).unwrap(),
        d.join("pre-commit"),
        "L's pre-commit is no longer the link to D's"
    );

    env.commit(&slot, "b.txt", "b\n");
    assert!(
        ran(&env).contains(&format!("lefthook-pre-commit {}", slot.display())),
        "lefthook's job did not run in the slot: {}",
        ran(&env)
    );
    zombie_commit_is_refused(&env, &slot, &a);
    zombie_push_is_refused(&env, &slot, &a, &origin, "hand/b");

    // Doctor in the main worktree: the link gone live is a lapse of L (linked-hooks), with the
    // fence holding, named once (for the main worktree; the slots share it); nothing says a push
    // is unchecked.
    let problems = doctor(&env, &repo);
    let p = problem(&problems, &repo, "linked-hooks", "no longer match");
    let detail = words(p["detail"].as_str().unwrap());
    assert!(
        detail.starts_with(&format!(
            "pre-commit no longer match the hooks of {}",
            d.display()
        )) && detail.contains("the fence holds"),
        "{p:#}"
    );
    assert_eq!(p["action"], "reinstall git-hand's hooks (git hand install)");
    assert_eq!(problems.len(), 1, "{}", pretty(&problems));
    assert!(
        !problems
            .iter()
            .any(|p| p["detail"].as_str().unwrap().contains("NOT")),
        "{}",
        pretty(&problems)
    );
    env.hand(&repo, &["doctor", "--repair"]).ok();
    assert!(
        forwards_to(&l.join("pre-commit"), &d.join("pre-commit"))
            && std::fs::read_link(l.join("pre-commit")).is_err(),
        "the repair did not make L's pre-commit a forwarder"
    );
    assert!(doctor(&env, &repo).is_empty());
}

/// A lefthook config naming pre-push (the team's own job, git-hand's recipe not in it): in a
/// slot, `lefthook install` renames L's forwarder to `pre-push.old` and puts its launcher in
/// L, which does not run git-hand. The zombie's commit is still refused (L's
/// reference-transaction is untouched) but its push goes through, until the next sync of L.
/// Doctor names it, from the main worktree as a file of L another tool wrote (repairable) and
/// for the slot as a foreign pre-push; `doctor --repair` moves lefthook's launcher aside
/// (`pre-push.git-hand-displaced`, byte for byte) and puts git-hand's forwarder back; lefthook's
/// installer run in the main worktree, as the hint says, renames D's shim as it does anywhere
/// without git-hand's recipe, and a second repair gives the fence back with lefthook's job
/// running in slots.
#[test]
fn lefthook_install_in_a_slot_over_ls_pre_push_unfences_slots_until_doctor_repair_moves_it_aside() {
    let env = TestEnv::new().with_hook_tools();
    let (repo, origin) = lefthook_job_installed(&env, "pre-push");
    let (slot, a, b) = leased_again(&env, &repo, "a", "b");
    let (d, l) = (hooks_dir(&repo), linked_dir(&repo));
    let (d_before, _) = both(&repo);

    tool(&env, &slot, "lefthook", &["install"]).ok();
    assert_eq!(tree(&d), d_before, "lefthook install in a slot changed D");
    assert!(is_lefthook_launcher(&l.join("pre-push")), "L's pre-push");
    assert!(
        forwards_to(&l.join("pre-push.old"), &d.join("pre-push")),
        "lefthook did not keep git-hand's forwarder as pre-push.old"
    );
    let launcher = std::fs::read(l.join("pre-push")).unwrap();

    zombie_commit_is_refused(&env, &slot, &a);
    let run = zombie_push(&env, &slot, &a, "hand/b");
    assert_eq!(
        run.code, 0,
        "the zombie's push was refused after all: {}",
        run.stderr
    );
    assert!(remote_oid(&env, &origin, "hand/b").is_some());
    assert!(
        ran(&env).contains(&format!("lefthook-pre-push {}", slot.display())),
        "{}",
        ran(&env)
    );

    // Doctor, in the main worktree: L's pre-push is not git-hand's (linked-hooks), which a
    // repair moves aside; the slot's pushes are not checked (foreign).
    let problems = doctor(&env, &repo);
    let in_l = problem(&problems, &repo, "linked-hooks", "not git-hand's");
    let pre_push_in_l = l.join("pre-push");
    assert_eq!(
        words(in_l["detail"].as_str().unwrap()),
        format!(
            "pre-push in {}: not git-hand's (an installer run in a slot writes there), so slots \
             run it instead of the main worktree's hook of that name; a repair moves it aside, \
             and the tool's installer belongs in the main worktree (then git hand install) \
             (linked-hooks)",
            l.display()
        )
    );
    assert_eq!(
        in_l["action"],
        "reinstall git-hand's hooks (git hand install)"
    );
    let slot_problem = problem(&problems, &slot, "foreign", "NOT checked");
    assert_eq!(
        words(slot_problem["detail"].as_str().unwrap()),
        format!(
            "{} is another tool's and does not run git-hand: a stale lease holder's push from \
             here is NOT checked (foreign)",
            pre_push_in_l.display()
        )
    );
    assert_eq!(problems.len(), 2, "{}", pretty(&problems));
    // From the slot, doctor names the same foreign pre-push.
    let from_slot = doctor(&env, &slot);
    problem(&from_slot, &slot, "foreign", "NOT checked");

    // The way out, as doctor gives it: the repair, then lefthook's installer in the main worktree.
    let repair = env.hand(&repo, &["doctor", "--repair", "--json"]).json();
    let repaired = repair["problems"].as_array().unwrap();
    problem(repaired, &repo, "linked-hooks", "not git-hand's");
    assert!(
        repaired.iter().all(|p| p["repaired"] == true),
        "{}",
        pretty(repaired)
    );
    assert!(forwards_to(&pre_push_in_l, &d.join("pre-push")));
    assert_eq!(
        std::fs::read(l.join("pre-push.git-hand-displaced")).unwrap(),
        launcher,
        "lefthook's launcher was not kept byte for byte"
    );
    assert!(doctor(&env, &repo).is_empty());
    // lefthook's installer in the main worktree renames git-hand's shim in D (as anywhere
    // without git-hand's recipe): doctor names it, and a second repair puts it back.
    tool(&env, &repo, "lefthook", &["install"]).ok();
    assert!(forwards_to(&pre_push_in_l, &d.join("pre-push")));
    assert!(is_lefthook_launcher(&d.join("pre-push")));
    let problems = doctor(&env, &repo);
    problem(&problems, &repo, "renamed", "NOT checked");
    assert_eq!(problems.len(), 1, "{}", pretty(&problems));
    env.hand(&repo, &["doctor", "--repair"]).ok();
    let problems = doctor(&env, &repo);
    assert!(problems.is_empty(), "{}", pretty(&problems));
    env.git(&slot, &["reset", "-q", "--hard", "origin/main"]);
    zombie_commit_is_refused(&env, &slot, &a);
    env.git(&slot, &["reset", "-q", "--hard"]);
    env.commit(&slot, "zombie2.txt", "later still\n");
    let run = push(
        &env,
        &slot,
        &cred(&a),
        &["origin", "HEAD:refs/heads/hand/b2"],
    );
    assert!(
        run.code != 0 && run.stderr.contains("git-hand: push refused (stale)"),
        "{}",
        run.stderr
    );
    let runs = ran(&env)
        .matches(&format!("lefthook-pre-push {}", slot.display()))
        .count();
    push(
        &env,
        &slot,
        &cred(&b),
        &["-q", "origin", "HEAD:refs/heads/hand/b2"],
    )
    .code(0);
    assert_eq!(
        ran(&env)
            .matches(&format!("lefthook-pre-push {}", slot.display()))
            .count(),
        runs + 1,
        "lefthook's job did not run in the slot after the way out"
    );
}

/// git-hand's lefthook recipe in lefthook.yml: in a slot, `lefthook install` replaces L's
/// pre-push, post-checkout and reference-transaction with its launchers (keeping git-hand's as
/// `<hook>.old`), and through the recipe's scripts the fence holds: the zombie's commit and push
/// are refused, with one verdict each. `git hand install --manual` says to run lefthook's
/// installer in the main worktree. Doctor names lefthook's files in L; `git hand install` moves
/// them aside (naming each, kept byte for byte) and gives L back to git-hand, and with
/// lefthook's installer run in the main worktree its script runs in slots and the fence holds.
#[test]
fn lefthook_install_in_a_slot_with_git_hands_recipe_replaces_ls_entries_and_still_fences() {
    let env = TestEnv::new().with_hook_tools();
    let (repo, origin) = lefthook_repo(&env, true);
    env.hand(&repo, &["install"]).ok();
    let (slot, a, b) = leased_again(&env, &repo, "a", "b");
    let (d, l) = (hooks_dir(&repo), linked_dir(&repo));
    let (d_before, _) = both(&repo);

    tool(&env, &slot, "lefthook", &["install"]).ok();
    assert_eq!(tree(&d), d_before, "lefthook install in a slot changed D");
    for hook in ["pre-push", "post-checkout", "reference-transaction"] {
        assert!(is_lefthook_launcher(&l.join(hook)), "L's {hook}");
    }
    assert!(forwards_to(&l.join("pre-push.old"), &d.join("pre-push")));
    assert!(git_hand::hooks::shim::is_ours(
        &std::fs::read(l.join("reference-transaction.old")).unwrap()
    ));

    zombie_commit_is_refused(&env, &slot, &a);
    let run = zombie_push(&env, &slot, &a, "hand/b");
    assert_ne!(
        run.code, 0,
        "the zombie's push went through:\n{}",
        run.stderr
    );
    assert_eq!(
        run.stderr.matches("git-hand: push refused (stale)").count(),
        1,
        "{}",
        run.stderr
    );
    assert_eq!(remote_oid(&env, &origin, "hand/b"), None);

    let (manager, recipe) = manual(&env, &slot);
    assert_eq!(manager, "lefthook");
    assert!(
        recipe.contains(&format!(
            "# Run `lefthook install` in the main worktree ({}): in a slot it replaces \
             git-hand's hooks.",
            repo.display()
        )),
        "{recipe}"
    );
    // Doctor names lefthook's files in L (the fence holds, so no alarm: see
    // lefthook_s_launchers_in_l_with_git_hands_recipe_are_not_called_unchecked).
    let problems = doctor(&env, &repo);
    let in_l = problem(&problems, &repo, "linked-hooks", "not git-hand's");
    assert!(
        words(in_l["detail"].as_str().unwrap()).starts_with(&format!(
            "post-checkout, pre-push, reference-transaction in {}:",
            l.display()
        )),
        "{in_l:#}"
    );
    assert_eq!(problems.len(), 1, "{}", pretty(&problems));

    // The way out: `git hand install` moves lefthook's launchers aside, byte for byte, and
    // names them; then lefthook's installer in the main worktree.
    let launchers: Vec<_> = ["post-checkout", "pre-push", "reference-transaction"]
        .iter()
        .map(|hook| (l.join(hook), std::fs::read(l.join(hook)).unwrap()))
        .collect();
    let install = env.hand(&repo, &["install", "--json"]).code(0).json();
    let mut displaced: Vec<PathBuf> = install["displaced"]
        .as_array()
        .unwrap_or_else(|| panic!("install --json names nothing displaced: {install:#}"))
        .iter()
        .map(|p| PathBuf::from(p.as_str().unwrap()))
        .collect();
    let moved: Vec<PathBuf> = launchers
        .iter()
        .map(|(path, _)| PathBuf::from(format!("{}.git-hand-displaced", path.display())))
        .collect();
    displaced.sort();
    assert_eq!(displaced, moved, "{install:#}");
    for ((_, bytes), to) in launchers.iter().zip(&moved) {
        assert_eq!(&std::fs::read(to).unwrap(), bytes, "{}", to.display());
    }
    assert!(doctor(&env, &repo).is_empty());
    tool(&env, &repo, "lefthook", &["install"]).ok();
    assert!(is_lefthook_launcher(&d.join("pre-push")));
    assert!(
        doctor(&env, &repo).is_empty(),
        "{}",
        pretty(&doctor(&env, &repo))
    );
    assert!(forwards_to(&l.join("pre-push"), &d.join("pre-push")));
    assert!(git_hand::hooks::shim::is_ours(
        &std::fs::read(l.join("reference-transaction")).unwrap()
    ));
    env.git(&slot, &["reset", "-q", "--hard", "origin/main"]);
    zombie_commit_is_refused(&env, &slot, &a);
    zombie_push_is_refused(&env, &slot, &a, &origin, "hand/b");
    env.git(&slot, &["reset", "-q", "--hard", "origin/main"]);
    env.commit(&slot, "b.txt", "b\n");
    let runs = lefthook_ran(&env).iter().filter(|d| *d == &slot).count();
    push(
        &env,
        &slot,
        &cred(&b),
        &["-q", "origin", "HEAD:refs/heads/hand/b"],
    )
    .code(0);
    assert_eq!(
        lefthook_ran(&env).iter().filter(|d| *d == &slot).count(),
        runs + 1,
        "the team's lefthook script did not run in the slot"
    );
}

// ---------------------------------------------------------------------------------------------
// pre-commit

/// pre-commit refuses in a slot (git-hand's `core.hooksPath` is set there) and changes nothing;
/// the hint it prints fails there. `git hand install --manual`, run in the slot, says to run it
/// in the main worktree, by path; run there, its hooks run in slots (pre-commit through L's
/// link, pre-push through L's forwarder to its script, which runs git-hand's shim as its legacy
/// hook), and the fence holds.
#[test]
fn pre_commit_install_refuses_in_a_slot_and_run_in_the_main_worktree_its_hooks_run_in_slots() {
    let env = TestEnv::new().with_hook_tools();
    let config = format!(
        "repos:
  - repo: local
    hooks:
      - id: record-commit
        name: record commit
        entry: sh -c '{}'
        language: system
        pass_filenames: false
        always_run: true
      - id: record-push
        name: record push
        entry: sh -c '{}'
        language: system
        stages: [pre-push]
        pass_filenames: false
        always_run: true
",
        record(&env, "pre-commit").replace('\'', ""),
        record(&env, "pre-push").replace('\'', "")
    );
    let (repo, origin) = repo_with(&env, &[(".pre-commit-config.yaml", config)]);
    env.hand(&repo, &["install"]).ok();
    let (slot, a, b) = leased_again(&env, &repo, "a", "b");
    let (d, l) = (hooks_dir(&repo), linked_dir(&repo));
    let before = both(&repo);
    let install = ["install", "-t", "pre-commit", "-t", "pre-push"];

    let run = tool(&env, &slot, "pre-commit", &install);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(
        said.contains("[ERROR] Cowardly refusing to install hooks with `core.hooksPath` set.")
            && said.contains("hint: `git config --unset-all core.hooksPath`"),
        "{said}"
    );
    assert!(
        both(&repo) == before,
        "pre-commit install in a slot changed D or L"
    );
    // Its hint cannot work there: the key is in git-hand's include file, not the repository's.
    let hint = env.git_run(&slot, &["config", "--unset-all", "core.hooksPath"]);
    assert_eq!(hint.code, 5, "{}", hint.stderr);
    assert_eq!(
        PathBuf::from(env.git(&slot, &["rev-parse", "--git-path", "hooks"])),
        l
    );

    // What git-hand says, asked in the slot.
    let (manager, recipe) = manual(&env, &slot);
    assert_eq!(manager, "pre-commit");
    assert!(
        recipe.contains(&format!(
            "# Run `pre-commit install` in the main worktree ({}): in a slot it refuses.",
            repo.display()
        )),
        "{recipe}"
    );

    let run = tool(&env, &repo, "pre-commit", &install);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        git_hand::hooks::shim::is_ours(&std::fs::read(d.join("pre-push.legacy")).unwrap()),
        "git-hand's shim is not pre-commit's legacy pre-push"
    );
    assert_eq!(
        std::fs::read_link(l.join("pre-commit")).unwrap(),
        d.join("pre-commit")
    );

    env.commit(&slot, "b.txt", "b\n");
    assert!(
        ran(&env).contains(&format!("pre-commit {}", slot.display())),
        "pre-commit's hook did not run in the slot: {}",
        ran(&env)
    );
    push(
        &env,
        &slot,
        &cred(&b),
        &["-q", "origin", "HEAD:refs/heads/hand/b"],
    )
    .code(0);
    assert!(
        ran(&env).contains(&format!("pre-push {}", slot.display())),
        "pre-commit's pre-push did not run in the slot: {}",
        ran(&env)
    );
    zombie_commit_is_refused(&env, &slot, &a);
    zombie_push_is_refused(&env, &slot, &a, &origin, "hand/zombie");
}

// ---------------------------------------------------------------------------------------------
// git-lfs

/// An env whose global git config is a real file (git-lfs writes its filters there), with a
/// repository tracking `*.bin` with LFS (`.gitattributes` written, as a clone has it: no
/// `git lfs track`, which would install git-lfs's hooks in the main worktree first).
fn lfs_repo() -> (TestEnv, PathBuf, PathBuf) {
    let mut env = TestEnv::new().with_hook_tools();
    let global = env.path("home/.gitconfig");
    std::fs::write(&global, "").unwrap();
    env.vars
        .push(("GIT_CONFIG_GLOBAL".into(), global.display().to_string()));
    let attributes = "*.bin filter=lfs diff=lfs merge=lfs -text\n".to_string();
    let (repo, origin) = repo_with(&env, &[(".gitattributes", attributes)]);
    (env, repo, origin)
}

/// What an LFS file `name` holds in these tests.
fn content(name: &str) -> String {
    format!("{name}'s large content\n")
}

/// Whether `origin`'s LFS store has the object of file `name`.
fn uploaded(origin: &Path, name: &str) -> bool {
    stored(origin, &content(name)).is_file()
}

/// Writes and stages the LFS file `name` in `slot`.
fn stage_bin(env: &TestEnv, slot: &Path, name: &str) {
    std::fs::write(slot.join(name), content(name)).unwrap();
    env.git(slot, &["add", name]);
}

/// A commit of the LFS file `name` in `slot` (no credential), its trace: which hooks git ran.
fn commit_bin_traced(env: &TestEnv, slot: &Path, name: &str) -> String {
    stage_bin(env, slot, name);
    let vars = [("GIT_TRACE".to_string(), "1".to_string())];
    let run = git_with(env, slot, &vars, &["commit", "-q", "-m", name]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.stderr
}

/// The command line of the git-lfs recipe `git hand install --manual` prints in `dir`.
fn lfs_recipe_line(env: &TestEnv, dir: &Path) -> (String, String) {
    let (manager, recipe) = manual(env, dir);
    assert_eq!(manager, "git-lfs");
    let line = recipe
        .lines()
        .find(|l| !l.starts_with('#') && !l.trim().is_empty())
        .expect("the git-lfs recipe has a command")
        .to_string();
    (recipe, line)
}

/// `git lfs install` refuses in a slot on L's forwarder for pre-push and changes no hook. The
/// recipe, asked in the slot, says to run it and git-lfs's installers in the main worktree;
/// run there, git-lfs's post-commit runs in the slot (through L), the zombie's commit and push
/// are refused, and the holder's push uploads.
#[test]
fn git_lfs_install_refuses_in_a_slot_and_the_recipe_run_in_the_main_worktree_works_in_slots() {
    let (env, repo, origin) = lfs_repo();
    env.hand(&repo, &["install"]).ok();
    let (slot, a, b) = leased_again(&env, &repo, "a", "b");
    let (d, l) = (hooks_dir(&repo), linked_dir(&repo));
    let before = both(&repo);

    let run = tool(&env, &slot, "git", &["lfs", "install", "--local"]);
    assert_ne!(run.code, 0, "git lfs install went through in a slot");
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(
        said.contains("Hook already exists: pre-push") && said.contains("git-hand-forwarder"),
        "{said}"
    );
    assert!(
        both(&repo) == before,
        "git lfs install in a slot changed D or L"
    );

    let (recipe, line) = lfs_recipe_line(&env, &slot);
    assert!(
        recipe.contains(&format!(
            "# Run it and git-lfs's installers in the main worktree ({}):",
            repo.display()
        )),
        "{recipe}"
    );
    assert_eq!(line, "git lfs update --force && git hand install");
    sh(&env, &repo, &line);
    for hook in ["pre-push", "post-checkout", "post-commit", "post-merge"] {
        assert!(
            forwards_to(&l.join(hook), &d.join(hook)),
            "L's {hook} does not forward to D's"
        );
    }

    let trace = commit_bin_traced(&env, &slot, "mine.bin");
    assert!(
        trace.contains(&format!("run_command: {}", l.join("post-commit").display()))
            || trace.contains(&format!(" {}", l.join("post-commit").display())),
        "git ran no post-commit from L:\n{trace}"
    );
    assert!(trace.contains("git-lfs post-commit"), "{trace}");

    zombie_commit_is_refused(&env, &slot, &a);
    env.git(&slot, &["reset", "-q"]);
    stage_bin(&env, &slot, "zombie.bin");
    zombie_push_is_refused(&env, &slot, &a, &origin, "hand/zombie");
    // git-lfs's pre-push is the chained hook now, and a chained hook runs before git-hand's
    // verdict (docs/hooks.md, "LFS objects"): the object is uploaded, no ref moved.
    assert!(uploaded(&origin, "zombie.bin"));
    env.git(&slot, &["reset", "-q", "--hard", "HEAD~1"]);
    commit_bin_traced(&env, &slot, "theirs.bin");
    assert!(!uploaded(&origin, "theirs.bin"));
    push(
        &env,
        &slot,
        &cred(&b),
        &["-q", "origin", "HEAD:refs/heads/hand/b"],
    )
    .code(0);
    assert!(
        uploaded(&origin, "theirs.bin"),
        "b's object was not uploaded"
    );
    assert!(doctor(&env, &repo).is_empty());
}

/// The other way git-lfs's refusal offers, `git lfs update --force`, taken in a slot: it
/// replaces L's forwarders (pre-push, post-checkout) with git-lfs's hooks and writes its
/// post-commit and post-merge through L's links into D. The slot's pushes are no longer
/// checked, until the next sync of L: the zombie's push goes through, its object uploaded.
/// Doctor says so, from the slot and from the main worktree (a repairable lapse of L); the way
/// out, `doctor --repair` (which moves git-lfs's files aside, byte for byte) and the recipe run
/// in the main worktree, puts the fence back and git-lfs's hooks run in slots.
#[test]
fn git_lfs_update_force_in_a_slot_unfences_slots_until_doctor_repair_moves_its_hooks_aside() {
    let (env, repo, origin) = lfs_repo();
    env.hand(&repo, &["install"]).ok();
    let (slot, a, b) = leased_again(&env, &repo, "a", "b");
    let (d, l) = (hooks_dir(&repo), linked_dir(&repo));
    let d_shim = std::fs::read(d.join("pre-push")).unwrap();

    // As a user meets it: `git lfs install` refuses (having configured git-lfs's filters) and
    // offers `git lfs update --force`, which they run where they are.
    let run = tool(&env, &slot, "git", &["lfs", "install", "--local"]);
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(said.contains("run `git lfs update --force`"), "{said}");
    let run = tool(&env, &slot, "git", &["lfs", "update", "--force"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    for hook in ["pre-push", "post-checkout"] {
        let bytes = text(&l.join(hook));
        assert!(
            bytes.contains(&format!("git lfs {hook}")) && std::fs::read_link(l.join(hook)).is_err(),
            "L's {hook}:\n{bytes}"
        );
    }
    for hook in ["post-commit", "post-merge"] {
        assert_eq!(std::fs::read_link(l.join(hook)).unwrap(), d.join(hook));
        assert!(
            text(&d.join(hook)).contains(&format!("git lfs {hook}")),
            "D's {hook}"
        );
    }
    assert_eq!(
        std::fs::read(d.join("pre-push")).unwrap(),
        d_shim,
        "D's pre-push changed"
    );

    zombie_commit_is_refused(&env, &slot, &a);
    env.git(&slot, &["reset", "-q"]);
    stage_bin(&env, &slot, "zombie.bin");
    let run = zombie_push(&env, &slot, &a, "hand/zombie");
    assert_eq!(
        run.code, 0,
        "the zombie's push was refused after all:\n{}",
        run.stderr
    );
    assert!(remote_oid(&env, &origin, "hand/zombie").is_some());
    assert!(uploaded(&origin, "zombie.bin"), "{}", run.stderr);

    // Doctor from the slot: its pushes are not checked (foreign).
    let from_slot = doctor(&env, &slot);
    let p = problem(&from_slot, &slot, "foreign", "NOT checked");
    assert!(
        words(p["detail"].as_str().unwrap()).contains("is NOT checked"),
        "{p:#}"
    );
    // From the main worktree: L's entries git-lfs wrote, which a repair moves aside.
    let problems = doctor(&env, &repo);
    let in_l = problem(&problems, &repo, "linked-hooks", "not git-hand's");
    assert!(
        words(in_l["detail"].as_str().unwrap())
            .starts_with(&format!("post-checkout, pre-push in {}:", l.display())),
        "{in_l:#}"
    );
    problem(&problems, &slot, "foreign", "NOT checked");

    let lfs_hooks: Vec<_> = ["pre-push", "post-checkout"]
        .iter()
        .map(|hook| (*hook, std::fs::read(l.join(hook)).unwrap()))
        .collect();
    let repair = env.hand(&repo, &["doctor", "--repair", "--json"]).json();
    let repaired = repair["problems"].as_array().unwrap();
    assert!(
        problem(repaired, &repo, "linked-hooks", "not git-hand's")["repaired"] == true,
        "{}",
        pretty(repaired)
    );
    for (hook, bytes) in &lfs_hooks {
        let kept = l.join(format!("{hook}.git-hand-displaced"));
        assert_eq!(&std::fs::read(&kept).unwrap(), bytes, "{}", kept.display());
        assert!(forwards_to(&l.join(hook), &d.join(hook)), "L's {hook}");
    }
    let (_, line) = lfs_recipe_line(&env, &repo);
    sh(&env, &repo, &line);
    assert!(doctor(&env, &repo).is_empty());
    for hook in ["pre-push", "post-checkout", "post-commit", "post-merge"] {
        assert!(forwards_to(&l.join(hook), &d.join(hook)), "L's {hook}");
    }
    stage_bin(&env, &slot, "zombie2.bin");
    zombie_push_is_refused(&env, &slot, &a, &origin, "hand/zombie2");
    env.git(&slot, &["reset", "-q", "--hard", "origin/main"]);
    commit_bin_traced(&env, &slot, "mine.bin");
    push(
        &env,
        &slot,
        &cred(&b),
        &["-q", "origin", "HEAD:refs/heads/hand/b"],
    )
    .code(0);
    assert!(uploaded(&origin, "mine.bin"), "b's object was not uploaded");
}

/// A repository whose lefthook config names pre-push (no git-hand recipe in it), git-hand
/// installed, and `lefthook install` run in a slot: L's pre-push is lefthook's launcher, which
/// does not run git-hand. Gives the repository, its origin, the slot and its zombie `a`.
fn lefthook_pre_push_in_l() -> (TestEnv, PathBuf, PathBuf, PathBuf, Value) {
    let env = TestEnv::new().with_hook_tools();
    let (repo, origin) = lefthook_job_installed(&env, "pre-push");
    let (slot, a, _) = leased_again(&env, &repo, "a", "b");
    tool(&env, &slot, "lefthook", &["install"]).ok();
    assert!(is_lefthook_launcher(&linked_dir(&repo).join("pre-push")));
    (env, repo, origin, slot, a)
}

/// A spawn syncs L (its fast path sees the foreign pre-push as not current): it moves
/// lefthook's launcher aside, keeping it byte for byte as `pre-push.git-hand-displaced`, puts
/// git-hand's forwarder back, and the slot's zombie push is refused again.
#[test]
fn spawn_moves_a_foreign_pre_push_in_l_aside_and_the_slots_zombie_push_is_refused_again() {
    let (env, repo, origin, slot, a) = lefthook_pre_push_in_l();
    let l = linked_dir(&repo);
    let launcher = std::fs::read(l.join("pre-push")).unwrap();
    let run = env.hand(&repo, &["spawn", "c", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        forwards_to(&l.join("pre-push"), &hooks_dir(&repo).join("pre-push")),
        "spawn left L's pre-push another tool's"
    );
    // Said, not silent: lefthook's pre-push job stops running in slots until lefthook is
    // installed from the main worktree.
    let moved = format!(
        "moved aside {}",
        l.join("pre-push.git-hand-displaced").display()
    );
    assert!(run.stderr.contains(&moved), "{}", run.stderr);
    assert_eq!(
        std::fs::read(l.join("pre-push.git-hand-displaced")).unwrap(),
        launcher,
        "lefthook's launcher was not kept byte for byte"
    );
    zombie_push_is_refused(&env, &slot, &a, &origin, "hand/zombie");
    assert!(doctor(&env, &repo).is_empty());
}

/// `doctor --repair` mends a foreign pre-push in L (moved aside, git-hand's forwarder back):
/// each problem it calls repaired is gone when doctor looks again, and nothing is left.
#[test]
fn doctor_repair_mends_a_foreign_pre_push_in_l_and_the_lapse_is_gone_afterwards() {
    let (env, repo, origin, slot, a) = lefthook_pre_push_in_l();
    let repair = env.hand(&repo, &["doctor", "--repair", "--json"]).json();
    let repaired = repair["problems"].as_array().unwrap();
    let in_l = problem(repaired, &repo, "linked-hooks", "not git-hand's");
    assert_eq!(in_l["repaired"], true, "{in_l:#}");
    // The slot's foreign pre-push is that same file: gone by the time doctor looks at the slot.
    assert_eq!(repaired.len(), 1, "{}", pretty(repaired));
    let left = doctor(&env, &repo);
    assert!(left.is_empty(), "{}", pretty(&left));
    zombie_push_is_refused(&env, &slot, &a, &origin, "hand/zombie");
}

/// `git hand install` in the main worktree names the foreign pre-push it moved aside out of L,
/// and says where the tool's installer belongs.
#[test]
fn install_names_the_foreign_pre_push_it_moved_aside_out_of_l() {
    let (env, repo, _, _, _) = lefthook_pre_push_in_l();
    let l = linked_dir(&repo);
    let run = env.hand(&repo, &["install"]).code(0);
    assert!(
        words(&run.stdout).contains(&format!(
            "moved aside {} (another tool wrote it where slots run git-hand's hooks: run that \
             tool's installer in the main worktree, then git hand install)",
            l.join("pre-push.git-hand-displaced").display()
        )),
        "{}",
        run.stdout
    );
    assert!(forwards_to(
        &l.join("pre-push"),
        &hooks_dir(&repo).join("pre-push")
    ));
}

/// With git-hand's lefthook recipe in lefthook.yml, lefthook's launchers in L run git-hand
/// (lefthook_install_in_a_slot_with_git_hands_recipe_replaces_ls_entries_and_still_fences: the
/// zombie is refused), and doctor says so: no alarm that the slot's pushes are NOT checked or
/// its commits not refused.
#[test]
fn lefthook_s_launchers_in_l_with_git_hands_recipe_are_not_called_unchecked() {
    let env = TestEnv::new().with_hook_tools();
    let (repo, _) = lefthook_repo(&env, true);
    env.hand(&repo, &["install"]).ok();
    let (slot, _, _) = leased_again(&env, &repo, "a", "b");
    tool(&env, &slot, "lefthook", &["install"]).ok();
    assert!(is_lefthook_launcher(&linked_dir(&repo).join("pre-push")));
    let problems = doctor(&env, &repo);
    let alarms: Vec<String> = problems
        .iter()
        .map(|p| words(p["detail"].as_str().unwrap()))
        .filter(|d| d.contains("NOT checked") || d.contains("is not refused"))
        .collect();
    assert!(alarms.is_empty(), "{}", alarms.join("\n"));
}
