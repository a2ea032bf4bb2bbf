//! git-hand beside husky 9, the real tool (`husky`, npm): both install orders and a re-sync; the
//! recipe `git hand install --manual` prints, committed as written; slots running husky's hooks
//! and the fence; uninstall leaving husky's files byte-identical; teammates without git-hand.
//! Every push runs contained (its own PID namespace, under a kill timeout).

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{Run, SYSTEM_PATH, TestEnv, cred, path_of, push, spawn, tree};

pub fn push_with(
    env: &TestEnv,
    dir: &Path,
    cred: &[(String, String)],
    extra: &[(&str, &str)],
    args: &[&str],
) -> Run {
    let mut cmd = env.contained("git", dir);
    cmd.arg("push").args(args);
    for (k, v) in cred {
        cmd.env(k, v);
    }
    for (k, v) in extra {
        cmd.env(k, v);
    }
    Run::from(cmd.output().unwrap())
}

/// A `PATH` with the hook managers and the system, but no git-hand.
pub fn path_without_hand() -> String {
    let dirs: Vec<PathBuf> = crate::support::hook_tools()
        .iter()
        .cloned()
        .chain(std::env::split_paths(SYSTEM_PATH))
        .collect();
    for dir in &dirs {
        assert!(
            !dir.join("git-hand").exists(),
            "{} holds a git-hand: these tests need a PATH without one",
            dir.display()
        );
    }
    std::env::join_paths(dirs)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// The lines between the recipe's comments: what a user pastes.
fn recipe_block(recipe: &str, file: &str) -> String {
    // The husky recipe: a comment naming the file, then its lines up to the next comment.
    let mut out = String::new();
    let mut on = false;
    for line in recipe.lines() {
        if line.starts_with('#') {
            if line.contains(".husky/") {
                on = line.contains(file);
            }
            continue;
        }
        if on {
            out.push_str(line);
            out.push('\n');
        }
    }
    assert!(!out.is_empty(), "no lines for {file} in:\n{recipe}");
    out
}

/// Which install comes first.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Order {
    HuskyFirst,
    GitHandFirst,
}

struct Husky {
    env: TestEnv,
    repo: PathBuf,
    /// Every run of husky's own pre-push and post-checkout scripts appends a line here.
    ran: PathBuf,
}

impl Husky {
    fn husky(&self, dir: &Path) {
        let run = Run::from(self.env.command("husky", dir).output().unwrap());
        assert_eq!(run.code, 0, "husky failed: {}{}", run.stdout, run.stderr);
        assert_eq!(
            self.env.git(dir, &["config", "core.hooksPath"]),
            ".husky/_",
            "husky 9 sets a relative core.hooksPath"
        );
    }

    fn ran(&self) -> String {
        fs::read_to_string(&self.ran).unwrap_or_default()
    }

    fn snapshot(&self) -> [BTreeMap<PathBuf, (u32, Vec<u8>)>; 2] {
        [
            tree(&self.repo.join(".git/hooks")),
            tree(&self.repo.join(".husky")),
        ]
    }
}

/// A repository with a package.json and committed `.husky/pre-push` and `.husky/post-checkout`
/// scripts: git-hand's recipe (from `git hand install --manual`) followed by a line recording
/// that husky ran the script, where, and with which arguments.
fn husky_repo(recipe: &str) -> Husky {
    let env = TestEnv::new().with_hook_tools();
    let repo = env.repo("app");
    let ran = env.path("husky-ran");
    fs::write(
        repo.join("package.json"),
        "{\"name\": \"app\", \"private\": true}\n",
    )
    .unwrap();
    fs::create_dir_all(repo.join(".husky")).unwrap();
    for hook in ["pre-push", "post-checkout"] {
        let script = format!(
            "{}echo \"{hook} $PWD $#\" >> {}\n",
            recipe_block(recipe, &format!(".husky/{hook}")),
            ran.display()
        );
        fs::write(repo.join(".husky").join(hook), script).unwrap();
    }
    env.git(&repo, &["add", "package.json", ".husky"]);
    env.git(&repo, &["commit", "-q", "-m", "husky"]);
    env.git(&repo, &["push", "-q", "origin", "main"]);
    Husky { env, repo, ran }
}

/// The recipe git-hand prints for husky, from a scratch repository where husky already runs.
fn printed_husky_recipe() -> String {
    let env = TestEnv::new().with_hook_tools();
    let repo = env.repo("scratch");
    fs::write(repo.join("package.json"), "{\"name\": \"s\"}\n").unwrap();
    let run = Run::from(env.command("husky", &repo).output().unwrap());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json = env
        .hand(&repo, &["install", "--manual", "--json"])
        .code(0)
        .json();
    assert_eq!(json["manager"], "husky", "{json}");
    json["recipe"].as_str().unwrap().to_string()
}

fn husky_row(order: Order) {
    let recipe = printed_husky_recipe();
    let h = husky_repo(&recipe);
    let (env, repo) = (&h.env, &h.repo);

    let before = match order {
        Order::HuskyFirst => {
            h.husky(repo);
            let before = h.snapshot();
            // Plain install will not write into husky's directory: it prints husky's recipe only.
            let run = env.hand(repo, &["install"]).code(3);
            assert!(run.stdout.contains(".husky/pre-push"), "{}", run.stdout);
            assert!(!run.stdout.contains("lefthook"), "{}", run.stdout);
            assert!(!run.stdout.contains("pre-commit"), "{}", run.stdout);
            before
        }
        Order::GitHandFirst => {
            let hooks_before = tree(&repo.join(".git/hooks"));
            env.hand(repo, &["install"]).ok();
            h.husky(repo);
            [hooks_before, tree(&repo.join(".husky"))]
        }
    };
    // husky re-syncs (every `npm install` runs it).
    h.husky(repo);

    // A first task pushes from its slot: husky's script and the fence both run there.
    let a = spawn(env, repo, "a", &[]);
    let slot = path_of(&a);
    // husky's committed recipe calls git-hand: spawn says nothing is unenforced.
    assert_eq!(a["hooks"]["in_force"], true, "{a:#}");
    assert!(
        slot.join(".husky/_/h").is_file(),
        "the slot has no .husky/_"
    );
    assert_eq!(env.git(&slot, &["status", "--porcelain"]), "");
    env.commit(&slot, "a.txt", "a\n");
    push(env, &slot, &cred(&a), &["-q", "origin", "hand/a"]).ok();
    assert!(
        h.ran().contains(&format!("pre-push {} 2", slot.display())),
        "husky's pre-push did not run in the slot:\n{}",
        h.ran()
    );

    // The slot goes to b; a's late push is refused by the fence in husky's script.
    env.hand(repo, &["teardown", "a"]).ok();
    let b = spawn(env, repo, "b", &[]);
    assert_eq!(path_of(&b), slot, "b reuses a's slot");
    assert!(
        h.ran()
            .contains(&format!("post-checkout {} 3", slot.display())),
        "husky's post-checkout did not run in the slot:\n{}",
        h.ran()
    );
    env.commit(&slot, "zombie.txt", "late\n");
    let zombie = push(env, &slot, &cred(&a), &["origin", "HEAD:refs/heads/hand/b"]);
    assert_ne!(
        zombie.code, 0,
        "a stale push went through:\n{}",
        zombie.stderr
    );
    assert!(
        zombie.stderr.contains("git-hand: push refused (stale)"),
        "{}",
        zombie.stderr
    );
    push(env, &slot, &cred(&b), &["-q", "origin", "hand/b"]).ok();

    // The main worktree: husky's hook runs, the push is unmanaged and allowed.
    env.commit(repo, "main.txt", "m\n");
    push(env, repo, &[], &["-q", "origin", "main"]).ok();
    assert!(
        h.ran().contains(&format!("pre-push {} 2", repo.display())),
        "{}",
        h.ran()
    );
    env.git(repo, &["checkout", "-q", "-b", "side"]);
    assert!(
        h.ran()
            .contains(&format!("post-checkout {} 3", repo.display())),
        "{}",
        h.ran()
    );

    env.hand(repo, &["teardown", "b"]).ok();
    env.hand(repo, &["uninstall"]).ok();
    assert!(
        h.snapshot() == before,
        "uninstall changed husky's setup or .git/hooks"
    );
}

#[test]
fn husky_first_then_git_hand_fences_slots_and_husky_still_runs_everywhere() {
    husky_row(Order::HuskyFirst);
}

#[test]
fn git_hand_first_then_husky_fences_slots_and_husky_still_runs_everywhere() {
    husky_row(Order::GitHandFirst);
}

#[test]
fn install_hooks_path_refuses_husky_s_directory_and_points_at_the_recipe() {
    let h = husky_repo(&printed_husky_recipe());
    h.husky(&h.repo);
    let before = h.snapshot();
    let run = h.env.hand(&h.repo, &["install", "--hooks-path"]).code(3);
    assert!(run.stderr.contains("husky"), "{}", run.stderr);
    assert!(
        run.stderr.contains("git hand install --manual"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.contains(".husky/pre-push"), "{}", run.stdout);
    assert!(
        h.snapshot() == before,
        "--hooks-path wrote into husky's setup"
    );
    // husky's own hook still runs.
    h.env.commit(&h.repo, "x", "x\n");
    push(&h.env, &h.repo, &[], &["-q", "origin", "main"]).ok();
    assert!(h.ran().contains("pre-push"), "{}", h.ran());
}

#[test]
fn a_teammate_without_git_hand_pushes_through_the_committed_recipe() {
    let h = husky_repo(&printed_husky_recipe());
    let env = &h.env;
    // A clone on a machine without git-hand: husky installed, the recipe committed.
    let clone = env.path("work/teammate");
    env.git(
        &env.path("work"),
        &[
            "clone",
            "-q",
            env.path("work/app-origin.git").to_str().unwrap(),
            clone.to_str().unwrap(),
        ],
    );
    let clone = fs::canonicalize(clone).unwrap();
    h.husky(&clone);
    env.commit(&clone, "t.txt", "t\n");
    let no_hand = path_without_hand();
    let run = push_with(
        env,
        &clone,
        &[],
        &[("PATH", &no_hand)],
        &["-q", "origin", "main"],
    );
    assert_eq!(
        run.code, 0,
        "the recipe blocked a teammate:\n{}",
        run.stderr
    );
    assert!(
        h.ran().contains(&format!("pre-push {} 2", clone.display())),
        "{}",
        h.ran()
    );
    // A checkout there is not disturbed either.
    let co = Run::from(
        env.command("git", &clone)
            .args(["checkout", "-q", "-b", "t"])
            .env("PATH", &no_hand)
            .output()
            .unwrap(),
    );
    assert_eq!(co.code, 0, "{}", co.stderr);
    assert!(co.stderr.is_empty(), "{}", co.stderr);
}

#[test]
fn a_clone_where_husky_has_not_run_yet_already_gets_husky_s_recipe() {
    let h = husky_repo(&printed_husky_recipe());
    // .husky/ is committed, npm install has not run: core.hooksPath is unset.
    let json = h
        .env
        .hand(&h.repo, &["install", "--manual", "--json"])
        .code(0)
        .json();
    assert_eq!(json["hooks_path"], Value::Null);
    assert_eq!(json["manager"], "husky", "{json}");
}

#[test]
fn a_leased_slot_fails_closed_through_the_recipe_when_git_hand_cannot_be_found() {
    let h = husky_repo(&printed_husky_recipe());
    let (env, repo) = (&h.env, &h.repo);
    h.husky(repo);
    let a = spawn(env, repo, "a", &[]);
    let slot = path_of(&a);
    env.commit(&slot, "a.txt", "a\n");
    let no_hand = path_without_hand();
    // No credential in the environment: the stamp alone says the slot is leased.
    let run = push_with(
        env,
        &slot,
        &[],
        &[("PATH", &no_hand)],
        &["origin", "hand/a"],
    );
    assert_ne!(
        run.code, 0,
        "a leased slot pushed unchecked:\n{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("git-hand: this worktree is leased by git-hand"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("--no-verify"), "{}", run.stderr);
}

#[test]
fn a_slot_is_not_given_a_hooks_directory_git_would_show_as_untracked() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    // A relative core.hooksPath that nothing ignores: copying it would make every slot unclean.
    fs::create_dir_all(repo.join("local-hooks")).unwrap();
    fs::write(repo.join("local-hooks/pre-push"), "#!/bin/sh\nexit 0\n").unwrap();
    env.git(&repo, &["config", "core.hooksPath", "local-hooks"]);
    let run = env.hand(&repo, &["spawn", "a"]);
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert!(run.stderr.contains(".gitignore"), "{}", run.stderr);
    // Ignored: the slot gets its copy and stays clean.
    fs::write(repo.join(".gitignore"), "/local-hooks/\n").unwrap();
    env.git(&repo, &["add", ".gitignore"]);
    env.git(&repo, &["commit", "-q", "-m", "ignore"]);
    let a = spawn(&env, &repo, "a", &[]);
    let slot = path_of(&a);
    assert_eq!(
        fs::read(slot.join("local-hooks/pre-push")).unwrap(),
        b"#!/bin/sh\nexit 0\n"
    );
    assert_eq!(env.git(&slot, &["status", "--porcelain"]), "");
}

/// The hand-written recipe, as `--manual` prints it for a tracked `core.hooksPath` directory,
/// pasted into executable hook files: slots (which check the directory out) are fenced, and a
/// clone without git-hand pushes as before.
#[test]
fn the_hand_written_recipe_as_printed_fences_a_slot_and_spares_a_teammate() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let hooks = repo.join(".githooks");
    fs::create_dir_all(&hooks).unwrap();
    env.git(&repo, &["config", "core.hooksPath", ".githooks"]);
    let json = env
        .hand(&repo, &["install", "--manual", "--json"])
        .code(0)
        .json();
    assert_eq!(json["manager"], "hand-written", "{json}");
    let recipe = json["recipe"].as_str().unwrap();
    let ran = env.path("ran");
    for hook in ["pre-push", "post-checkout"] {
        let mut lines = String::new();
        let mut on = false;
        for line in recipe.lines() {
            if line.starts_with('#') {
                on = line.ends_with(&format!("/{hook}:"));
                continue;
            }
            if on {
                lines.push_str(line);
                lines.push('\n');
            }
        }
        assert!(!lines.is_empty(), "{recipe}");
        let script = format!(
            "#!/bin/sh\n{lines}echo \"{hook} $PWD\" >> {}\n",
            ran.display()
        );
        fs::write(hooks.join(hook), script).unwrap();
        fs::set_permissions(hooks.join(hook), fs::Permissions::from_mode(0o755)).unwrap();
    }
    env.git(&repo, &["add", ".githooks"]);
    env.git(&repo, &["commit", "-q", "-m", "hooks"]);
    env.git(&repo, &["push", "-q", "origin", "main"]);

    let a = spawn(&env, &repo, "a", &[]);
    let slot = path_of(&a);
    env.commit(&slot, "a.txt", "a\n");
    push(&env, &slot, &cred(&a), &["-q", "origin", "hand/a"]).ok();
    env.hand(&repo, &["teardown", "a"]).ok();
    let b = spawn(&env, &repo, "b", &[]);
    assert_eq!(path_of(&b), slot);
    env.commit(&slot, "late.txt", "late\n");
    let zombie = push(
        &env,
        &slot,
        &cred(&a),
        &["origin", "HEAD:refs/heads/hand/b"],
    );
    assert_ne!(zombie.code, 0, "{}", zombie.stderr);
    assert!(
        zombie.stderr.contains("git-hand: push refused (stale)"),
        "{}",
        zombie.stderr
    );
    let log = fs::read_to_string(&ran).unwrap();
    assert!(
        log.contains(&format!("pre-push {}", slot.display())),
        "{log}"
    );

    env.commit(&repo, "m.txt", "m\n");
    let run = push_with(
        &env,
        &repo,
        &[],
        &[("PATH", SYSTEM_PATH)],
        &["-q", "origin", "main"],
    );
    assert_eq!(
        run.code, 0,
        "the recipe blocked a push without git-hand:\n{}",
        run.stderr
    );
}

#[test]
fn doctor_repair_gives_a_slot_without_the_generated_hooks_directory_its_copy() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    fs::create_dir_all(repo.join("local-hooks")).unwrap();
    fs::write(repo.join("local-hooks/pre-push"), "#!/bin/sh\nexit 0\n").unwrap();
    fs::write(repo.join(".gitignore"), "/local-hooks/\n").unwrap();
    env.git(&repo, &["add", ".gitignore"]);
    env.git(&repo, &["commit", "-q", "-m", "ignore"]);
    env.git(&repo, &["config", "core.hooksPath", "local-hooks"]);
    let slot = path_of(&spawn(&env, &repo, "a", &[]));
    // As a slot leased before slots got the repository's hooks directory.
    fs::remove_dir_all(slot.join("local-hooks")).unwrap();
    let doctor = env.hand(&repo, &["doctor", "--repair", "--json"]).json();
    let copied = doctor["problems"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["kind"] == "hooks-not-in-force" && p["repaired"] == true);
    assert!(copied, "{doctor:#}");
    assert!(slot.join("local-hooks/pre-push").is_file());
}
