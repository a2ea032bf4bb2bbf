//! git-hand beside pre-commit, the real tool (PyPI `pre-commit`, in its own virtualenv): both
//! install orders and a re-sync, the manager's hooks running in the main worktree and in slots,
//! a stale push refused, uninstall leaving pre-commit's setup byte-identical. pre-commit runs
//! `<hook>.legacy` before its own hooks, so git-hand's hook lives there whichever came first.
//! Test configs use `repo: local` hooks with `language: system`: no network.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::support::{Run, TestEnv, cred, path_of, push, spawn, tree};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Order {
    PreCommitFirst,
    GitHandFirst,
}

struct PreCommit {
    env: TestEnv,
    repo: PathBuf,
    /// Every run of the config's own pre-push and post-checkout hooks appends a line here.
    ran: PathBuf,
}

impl PreCommit {
    fn new() -> Self {
        let env = TestEnv::new().with_hook_tools();
        let repo = env.repo("app");
        let ran = env.path("pre-commit-ran");
        let config = format!(
            "repos:
  - repo: local
    hooks:
      - id: record-push
        name: record push
        entry: sh -c 'echo \"pre-push $PWD\" >> {ran}'
        language: system
        stages: [pre-push]
        pass_filenames: false
        always_run: true
      - id: record-checkout
        name: record checkout
        entry: sh -c 'echo \"post-checkout $PWD\" >> {ran}'
        language: system
        stages: [post-checkout]
        pass_filenames: false
        always_run: true
",
            ran = ran.display()
        );
        fs::write(repo.join(".pre-commit-config.yaml"), config).unwrap();
        env.git(&repo, &["add", ".pre-commit-config.yaml"]);
        env.git(&repo, &["commit", "-q", "-m", "pre-commit"]);
        env.git(&repo, &["push", "-q", "origin", "main"]);
        Self { env, repo, ran }
    }

    fn install(&self) -> Run {
        let run = Run::from(
            self.env
                .command("pre-commit", &self.repo)
                .args(["install", "-t", "pre-push", "-t", "post-checkout"])
                .output()
                .unwrap(),
        );
        assert_eq!(
            run.code, 0,
            "pre-commit install: {}{}",
            run.stdout, run.stderr
        );
        run
    }

    fn hooks(&self) -> PathBuf {
        self.repo.join(".git/hooks")
    }

    fn ran(&self) -> String {
        fs::read_to_string(&self.ran).unwrap_or_default()
    }
}

/// `.git/hooks` without the `<hook>.legacy` files, which must be git-hand's shims: what
/// pre-commit alone would have left.
fn without_our_legacy(
    mut files: BTreeMap<PathBuf, (u32, Vec<u8>)>,
) -> BTreeMap<PathBuf, (u32, Vec<u8>)> {
    for hook in ["pre-push", "post-checkout"] {
        let legacy = PathBuf::from(format!("{hook}.legacy"));
        let (_, bytes) = files
            .remove(&legacy)
            .expect("git-hand's shim as the legacy hook");
        assert!(
            git_hand::hooks::shim::is_ours(&bytes),
            "{hook}.legacy is not git-hand's"
        );
    }
    // pre-commit installs no reference-transaction script: git-hand's shim sits there plainly.
    if let Some((_, bytes)) = files.remove(&PathBuf::from("reference-transaction")) {
        assert!(git_hand::hooks::shim::is_ours(&bytes));
    }
    files
}

fn assert_no_chain(hooks: &Path) {
    for hook in ["pre-push", "post-checkout"] {
        assert!(
            !hooks.join(format!("{hook}.git-hand-chained")).exists(),
            "git-hand chained pre-commit's {hook} script"
        );
    }
}

fn pre_commit_row(order: Order) {
    let p = PreCommit::new();
    let (env, repo) = (&p.env, &p.repo);
    let before = match order {
        Order::PreCommitFirst => {
            p.install();
            let before = tree(&p.hooks());
            let run = env.hand(repo, &["install", "--json"]).code(0).json();
            let paths: Vec<&str> = run["hooks"]
                .as_array()
                .unwrap()
                .iter()
                // pre-commit installs no reference-transaction script: git-hand's shim is plain.
                .filter(|h| h["hook"] != "reference-transaction")
                .map(|h| h["path"].as_str().unwrap())
                .collect();
            assert!(paths.iter().all(|p| p.ends_with(".legacy")), "{run}");
            before
        }
        Order::GitHandFirst => {
            env.hand(repo, &["install"]).ok();
            p.install();
            without_our_legacy(tree(&p.hooks()))
        }
    };
    assert_no_chain(&p.hooks());
    // pre-commit re-syncs; git-hand's install (and spawn's) then finds its hooks in force.
    p.install();
    let again = env.hand(repo, &["install", "--json"]).code(0).json();
    assert_eq!(again["outcome"], "unchanged", "{again}");
    assert_no_chain(&p.hooks());

    let a = spawn(env, repo, "a", &[]);
    let slot = path_of(&a);
    assert_no_chain(&p.hooks());
    assert!(
        p.ran()
            .contains(&format!("post-checkout {}", slot.display())),
        "pre-commit's post-checkout did not run in the slot:\n{}",
        p.ran()
    );
    env.commit(&slot, "a.txt", "a\n");
    push(env, &slot, &cred(&a), &["-q", "origin", "hand/a"]).ok();
    assert!(
        p.ran().contains(&format!("pre-push {}", slot.display())),
        "pre-commit's pre-push did not run in the slot:\n{}",
        p.ran()
    );

    env.hand(repo, &["teardown", "a"]).ok();
    let b = spawn(env, repo, "b", &[]);
    assert_eq!(path_of(&b), slot, "b reuses a's slot");
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
    assert!(
        !zombie.stderr.contains("migration mode"),
        "{}",
        zombie.stderr
    );
    push(env, &slot, &cred(&b), &["-q", "origin", "hand/b"]).ok();

    env.commit(repo, "main.txt", "m\n");
    let main = push(env, repo, &[], &["origin", "main"]);
    assert_eq!(main.code, 0, "{}", main.stderr);
    assert!(!main.stderr.contains("migration mode"), "{}", main.stderr);
    assert!(
        p.ran().contains(&format!("pre-push {}", repo.display())),
        "{}",
        p.ran()
    );

    env.hand(repo, &["teardown", "b"]).ok();
    env.hand(repo, &["uninstall"]).ok();
    assert!(
        tree(&p.hooks()) == before,
        "uninstall did not leave pre-commit's setup as it was"
    );
}

#[test]
fn pre_commit_first_then_git_hand_runs_as_its_legacy_hook_and_fences_slots() {
    pre_commit_row(Order::PreCommitFirst);
}

#[test]
fn git_hand_first_then_pre_commit_needs_no_chain_and_fences_slots() {
    pre_commit_row(Order::GitHandFirst);
}

#[test]
fn a_copy_of_pre_commit_s_script_an_older_git_hand_chained_is_dropped_not_run_again() {
    let p = PreCommit::new();
    let (env, repo) = (&p.env, &p.repo);
    env.hand(repo, &["install"]).ok();
    p.install();
    let before = without_our_legacy(tree(&p.hooks()));
    // What an older git-hand left: pre-commit's script chained, then taken back by pre-commit.
    fs::copy(
        p.hooks().join("pre-push"),
        p.hooks().join("pre-push.git-hand-chained"),
    )
    .unwrap();
    env.hand(repo, &["install"]).ok();
    assert_no_chain(&p.hooks());
    env.commit(repo, "main.txt", "m\n");
    let main = push(env, repo, &[], &["origin", "main"]);
    assert_eq!(main.code, 0, "{}", main.stderr);
    assert!(!main.stderr.contains("migration mode"), "{}", main.stderr);
    env.hand(repo, &["uninstall"]).ok();
    assert!(tree(&p.hooks()) == before);
}

#[test]
fn install_manual_prints_the_pre_commit_recipe_alone() {
    let p = PreCommit::new();
    let json = p
        .env
        .hand(&p.repo, &["install", "--manual", "--json"])
        .code(0)
        .json();
    assert_eq!(json["manager"], "pre-commit", "{json}");
    let recipe = json["recipe"].as_str().unwrap();
    assert!(recipe.lines().any(|l| l == "git hand install"), "{recipe}");
    assert!(
        !recipe.contains("husky") && !recipe.contains("lefthook"),
        "{recipe}"
    );
}
