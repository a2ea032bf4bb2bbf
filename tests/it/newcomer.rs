//! A newcomer's first ten minutes, the way README.md tells them: `./install.sh` (the real script
//! and the real `cargo install`) into a fresh HOME and a temporary PREFIX, `git hand --help`
//! opening the installed man page, `git hand <TAB>` completing the verbs, the README's quick start
//! blocks run as written against a temporary repository, the zombie's push refused, and
//! `./install.sh --uninstall` removing exactly what was installed. The README's code is read from
//! README.md itself, so the two cannot drift apart.
//!
//! To stay quick, install.sh is run with `GIT_HAND_INSTALL_DEBUG=1` and this test's own
//! `CARGO_TARGET_DIR`: `cargo install --debug` then finds the binary `cargo test` already built
//! and only copies it. A tool this machine lacks (man, bash) skips only the assertion that needs
//! it, with a note on stderr.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::support::{BIN, Run, SYSTEM_PATH, TestEnv};

/// The checkout the newcomer cloned.
const CHECKOUT: &str = env!("CARGO_MANIFEST_DIR");

struct Newcomer {
    env: TestEnv,
    prefix: PathBuf,
    /// The directory of the cargo running this test, which install.sh must find on PATH.
    toolchain: PathBuf,
}

impl Newcomer {
    fn new() -> Self {
        let env = TestEnv::new();
        let prefix = env.path("prefix");
        let cargo = std::env::var_os("CARGO")
            .map(PathBuf::from)
            .or_else(|| which::which("cargo").ok())
            .expect("cargo runs this test, so it can be found");
        let toolchain = cargo.parent().unwrap().to_path_buf();
        Self {
            env,
            prefix,
            toolchain,
        }
    }

    /// PATH as the newcomer's shell has it: the installed bin dir (when `installed`), the
    /// toolchain, the system. Never the test build's own directory.
    fn path_var(&self, installed: bool) -> OsString {
        let mut dirs = vec![];
        if installed {
            dirs.push(self.prefix.join("bin"));
        }
        dirs.push(self.toolchain.clone());
        dirs.extend(std::env::split_paths(SYSTEM_PATH));
        std::env::join_paths(dirs).unwrap()
    }

    /// A command in the newcomer's environment: TestEnv's hermetic one (killed after its
    /// timeout), with the default ledger location (no `GIT_HAND_LEDGER`) and the newcomer's PATH.
    fn command(&self, program: &str, dir: &Path, installed: bool) -> Command {
        let mut cmd = self.env.timed(program, dir);
        cmd.env_remove("GIT_HAND_LEDGER")
            .env("PATH", self.path_var(installed));
        cmd
    }

    fn run(&self, mut cmd: Command) -> Run {
        let out = cmd.output().unwrap();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// `./install.sh ARGS` run from `dir`, as the README says, with the test knobs.
    fn install_sh(&self, dir: &Path, args: &[&str]) -> Run {
        self.install_sh_with(dir, args, &[])
    }

    /// [`Newcomer::install_sh`] with `vars` (PATH among them, say) set last.
    fn install_sh_with(&self, dir: &Path, args: &[&str], vars: &[(&str, OsString)]) -> Run {
        let mut cmd = self.command(&format!("{CHECKOUT}/install.sh"), dir, false);
        cmd.args(args)
            .env("PREFIX", &self.prefix)
            .env("GIT_HAND_INSTALL_DEBUG", "1")
            .env("CARGO_TARGET_DIR", target_dir())
            // Everything `cargo test` needed is already downloaded; never reach for the network.
            .env("CARGO_NET_OFFLINE", "true");
        // The toolchain's own settings, so cargo finds its registry cache and builds exactly
        // what `cargo test` built (anything else would rebuild from scratch).
        for (key, value) in std::env::vars_os() {
            let k = key.to_string_lossy();
            if ["CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "RUSTFLAGS"].contains(&&*k)
                || k.starts_with("CARGO_BUILD_")
                || k.starts_with("CARGO_PROFILE_")
            {
                cmd.env(&key, value);
            }
        }
        for (key, value) in vars {
            cmd.env(key, value);
        }
        self.run(cmd)
    }

    /// `git ARGS` in `dir` with git-hand installed on PATH.
    fn git(&self, dir: &Path, args: &[&str]) -> Run {
        let mut cmd = self.command("git", dir, true);
        cmd.args(args);
        self.run(cmd)
    }

    fn sh(&self, dir: &Path, script: &str, extra: &[(&str, &str)]) -> Run {
        let mut cmd = self.command("sh", dir, true);
        cmd.args(["-c", script]).envs(extra.iter().copied());
        self.run(cmd)
    }
}

/// The target directory this test was built in: the binary is `<target>/debug/git-hand`.
fn target_dir() -> PathBuf {
    Path::new(BIN)
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The `sh` code blocks of README.md's section `heading`, up to the next `## ` heading.
fn readme_blocks(heading: &str) -> Vec<String> {
    let readme = std::fs::read_to_string(Path::new(CHECKOUT).join("README.md")).unwrap();
    let start = readme
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("README.md has no {heading:?} section"));
    let section = &readme[start + heading.len() + 2..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    section
        .split("```sh\n")
        .skip(1)
        .map(|block| block[..block.find("```").unwrap()].to_string())
        .collect()
}

fn have(tool: &str) -> bool {
    which::which(tool).is_ok()
}

fn skip(what: &str, why: &str) {
    eprintln!("note: newcomer test: skipped {what}: {why}");
}

/// Every file and directory under `root`, relative, sorted.
fn tree(root: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            out.push(path.strip_prefix(root).unwrap().display().to_string());
            if path.is_dir() && !path.is_symlink() {
                walk(root, &path, out);
            }
        }
    }
    let mut out = vec![];
    if root.exists() {
        walk(root, root, &mut out);
    }
    out.sort();
    out
}

#[test]
fn a_newcomer_installs_from_the_readme_runs_the_quick_start_and_uninstalls_cleanly() {
    let started = Instant::now();
    let n = Newcomer::new();
    let checkout = Path::new(CHECKOUT);

    // Set up: `./install.sh` with nothing of git-hand on PATH.
    assert_eq!(
        readme_blocks("## Set up").first().map(String::as_str),
        Some("./install.sh\ncargo test --locked\n"),
        "README.md's set up is the two commands"
    );
    let install = n.install_sh(checkout, &[]);
    assert_eq!(install.code, 0, "install.sh failed:\n{install:?}");
    let bin_dir = n.prefix.join("bin");
    assert!(
        install
            .stdout
            .contains(&format!("export PATH=\"{}:$PATH\"", bin_dir.display())),
        "install.sh should say how to put {} on PATH:\n{}",
        bin_dir.display(),
        install.stdout
    );
    let installed = tree(&n.prefix);
    for file in [
        "bin/git-hand",
        "share/man/man1/git-hand.1",
        "share/bash-completion/completions/git-hand",
        "share/zsh/site-functions/_git-hand",
        "share/fish/vendor_completions.d/git-hand.fish",
        "share/fish/vendor_conf.d/git-hand.fish",
        "share/git-hand/install-manifest",
        "share/doc/git-hand/README.md",
        "share/doc/git-hand/docs/cli.md",
    ] {
        assert!(
            installed.contains(&file.to_string()),
            "{file} missing: {installed:?}"
        );
    }
    eprintln!("newcomer: install.sh took {:?}", started.elapsed());
    crate::manpage::assert_names_only_installed_files(&n.prefix);

    let home = n.env.path("home");
    let version = n.git(&home, &["hand", "--version"]).ok();
    assert!(version.starts_with("git-hand "), "{version}");

    // `git hand --help`: git runs `man git-hand`, which must find the installed page.
    let page = n.prefix.join("share/man/man1/git-hand.1");
    if have("man") && (have("nroff") || have("groff")) {
        let mut man = n.command("man", &home, true);
        man.args(["-l", page.to_str().unwrap()])
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "100");
        let rendered = n.run(man).ok();
        for want in [
            "GIT-HAND(1)",
            "git hand spawn",
            "EXIT STATUS",
            "hand.maxSlots",
        ] {
            assert!(
                rendered.contains(want),
                "man -l lacks {want:?}:\n{rendered}"
            );
        }
        let mut help = n.command("git", &home, true);
        help.args(["hand", "--help"])
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .env("MANWIDTH", "100");
        let help = n.run(help);
        assert!(
            help.code == 0 && help.stdout.contains("git hand teardown"),
            "git hand --help did not show the installed man page:\n{help:?}"
        );
    } else {
        skip("the man page checks", "man or nroff is not installed");
    }

    // `git hand <TAB>` in bash, through git's own completion when it is installed.
    if have("bash") {
        let framework = if let Some(git_completion) = crate::support::git_bash_completion() {
            format!(
                ". {}\ncomplete_git() {{\n  COMP_LINE=\"$1\"; COMP_POINT=${{#COMP_LINE}}\n  \
                 read -ra COMP_WORDS <<< \"$COMP_LINE\"; COMP_WORDS+=(\"\")\n  \
                 COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 )); COMPREPLY=()\n  \
                 __git_wrap__git_main git \"\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"\n}}\n",
                git_completion.display()
            )
        } else {
            skip(
                "git's own bash completion",
                "git's bash completion is not installed; using a stand-in",
            );
            // What git's completion sets before it calls _git_hand.
            "complete_git() {\n  read -ra words <<< \"$1\"; words+=(\"\")\n  \
             cword=$(( ${#words[@]} - 1 )); cur=\"\"; prev=${words[cword-1]}\n  \
             __git_cmd_idx=1; COMPREPLY=(); _git_hand\n}\n"
                .to_string()
        };
        let script = format!(
            "{framework}. {}\ncomplete_git 'git hand'; echo \"verbs: ${{COMPREPLY[*]}}\"\n\
             complete_git 'git hand lease'; echo \"lease: ${{COMPREPLY[*]}}\"\n",
            n.prefix
                .join("share/bash-completion/completions/git-hand")
                .display()
        );
        let mut bash = n.command("bash", &home, true);
        bash.args(["--norc", "--noprofile", "-c", &script]);
        let out = n.run(bash).ok();
        let verbs = out
            .lines()
            .find_map(|l| l.strip_prefix("verbs: "))
            .unwrap_or("");
        for verb in ["spawn", "teardown", "list", "status", "install"] {
            assert!(
                verbs.split(' ').any(|v| v == verb),
                "{verb} not offered: {out}"
            );
        }
        assert!(!verbs.contains("generate"), "hidden verbs offered: {out}");
        assert!(out.contains("acquire"), "lease verbs not offered: {out}");
    } else {
        skip("the bash completion check", "bash is not installed");
    }

    // The quick start, in a repository of the newcomer's own: first the README's own blocks, as
    // written (its placeholder for work becomes a commit, `my-agent` a script that reports).
    let repo = n.env.repo("app");
    let none = n.git(&repo, &["hand"]).ok();
    assert!(none.contains("verdict: unmanaged"), "{none}");
    let agent_bin = n.env.path("agent-bin");
    std::fs::create_dir_all(&agent_bin).unwrap();
    let my_agent = agent_bin.join("my-agent");
    std::fs::write(
        &my_agent,
        "#!/bin/sh\necho \"my-agent: task=$GIT_HAND_TASK token=$GIT_HAND_TOKEN in $PWD\"\n",
    )
    .unwrap();
    std::fs::set_permissions(
        &my_agent,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let blocks = readme_blocks("## Quick start");
    assert!(blocks.len() >= 3, "README.md's quick start: {blocks:?}");
    let mut said = String::new();
    for block in &blocks {
        let script = block.replace(
            "# ... work, commit ...",
            "echo fixed > login.txt && git add login.txt && git commit -q -m 'fix login'",
        );
        let mut sh = n.command("sh", &repo, true);
        let path = format!(
            "{}:{}",
            agent_bin.display(),
            n.path_var(true).to_string_lossy()
        );
        sh.args(["-ec", &script]).env("PATH", path);
        let run = n.run(sh);
        assert_eq!(run.code, 0, "README.md block failed:\n{script}\n{run:?}");
        said.push_str(&run.stdout);
        said.push_str(&run.stderr);
    }
    for want in [
        "task fix-login done",
        "my-agent: task=issue-42 token=",
        "task issue-42 done",
        "task-spawned",
    ] {
        assert!(
            said.contains(want),
            "the quick start did not say {want:?}:\n{said}"
        );
    }

    // Then the details a newcomer relies on.
    let spawn = n.git(&repo, &["hand", "spawn", "fix-signup"]);
    let slot = PathBuf::from(spawn.stdout.trim());
    assert_eq!(spawn.code, 0, "{spawn:?}");
    assert!(
        spawn.stderr.contains("git hand env fix-signup"),
        "{spawn:?}"
    );
    assert!(
        slot.starts_with(n.env.path("data/git-hand/pools")),
        "the pool lives under $XDG_DATA_HOME/git-hand/pools: {}",
        slot.display()
    );
    n.env.commit(&slot, "signup.txt", "fixed\n");
    n.git(&slot, &["push", "-q", "-u", "origin", "HEAD"]).ok();
    let here = n.git(&slot, &["hand"]).ok();
    assert!(here.contains("verdict: current"), "{here}");
    assert!(here.contains("fix-signup"), "{here}");
    let done = n.git(&repo, &["hand", "teardown", "fix-signup"]).ok();
    assert!(done.contains("is free"), "{done}");
    assert!(
        n.env.path("state/git-hand/ledger.sqlite").is_file(),
        "the ledger lives at $XDG_STATE_HOME/git-hand/ledger.sqlite"
    );

    // An agent launched with --exec gets its credential in the environment.
    let agent = "echo \"task=$GIT_HAND_TASK token=$GIT_HAND_TOKEN\"; echo a > a.txt && \
                 git add a.txt && git commit -q -m agent && git push -q -u origin HEAD";
    let exec = n.git(
        &repo,
        &[
            "hand", "spawn", "agent-1", "--ttl", "30m", "--exec", "--", "sh", "-c", agent,
        ],
    );
    assert_eq!(exec.code, 0, "{exec:?}");
    assert!(exec.stdout.contains("task=agent-1 token="), "{exec:?}");

    // The story: agent-1 stalls, an operator ends its task, agent-2 gets the slot; agent-1
    // wakes up with its old credential, commits and pushes. git refuses the commit (the
    // reference-transaction hook), so agent-2's branch never carries it.
    let creds = n.git(&repo, &["hand", "env", "agent-1"]).ok();
    n.git(&repo, &["hand", "teardown", "agent-1"]).ok();
    let slot2 = n.git(&repo, &["hand", "spawn", "agent-2"]).ok();
    assert_eq!(slot2.trim(), slot.to_str().unwrap(), "the slot is reused");
    let zombie = n.sh(
        &slot,
        &format!(
            "{creds}echo late > late.txt && git add late.txt && git commit -q -m late && \
             git push origin HEAD:refs/heads/hand/agent-1"
        ),
        &[],
    );
    assert_ne!(
        zombie.code, 0,
        "the zombie's commit went through: {zombie:?}"
    );
    assert!(
        zombie.stderr.contains("ref update refused (stale)"),
        "{zombie:?}"
    );
    let pushed = n.sh(
        &slot,
        &format!("{creds}git push origin HEAD:refs/heads/hand/agent-1"),
        &[],
    );
    assert!(pushed.stderr.contains("push refused (stale)"), "{pushed:?}");

    // Outside a repository, `git hand` points the way.
    let outside = n.git(&home, &["hand"]).code(2);
    assert!(outside.stderr.contains("git hand --help"), "{outside:?}");

    // Running install.sh again (this time with --hooks, from inside the repository) is safe.
    let manifest =
        std::fs::read_to_string(n.prefix.join("share/git-hand/install-manifest")).unwrap();
    let again = n.install_sh(&repo, &["--hooks"]);
    assert_eq!(again.code, 0, "second install.sh failed:\n{again:?}");
    let manifest2 =
        std::fs::read_to_string(n.prefix.join("share/git-hand/install-manifest")).unwrap();
    assert_eq!(
        manifest2,
        format!("{manifest}hooks {}\n", repo.display()),
        "a second run records only the hooks it added"
    );
    assert_eq!(
        tree(&n.prefix),
        installed,
        "a second run installs the same files"
    );

    // `./install.sh --uninstall` removes exactly what it installed: here, all of PREFIX, and
    // git-hand's hooks from the repository.
    let un = n.install_sh(checkout, &["--uninstall"]);
    assert_eq!(un.code, 0, "uninstall failed:\n{un:?}");
    assert!(!n.prefix.exists(), "left behind: {:?}", tree(&n.prefix));
    assert!(
        !repo.join(".git/hooks/pre-push").exists(),
        "the hook stayed"
    );
    let again = n.install_sh(checkout, &["--uninstall"]);
    assert_eq!(again.code, 0, "{again:?}");
    eprintln!("newcomer: the whole story took {:?}", started.elapsed());
}

/// `./install.sh --uninstall` removes only the hooks of `--hooks`; those `git hand install` and
/// `spawn` left in other repositories stay, after which every checkout there warns and pushes
/// from slots are refused: it says so and names the command that removes them (issue 22 item
/// 15). Run over a manifest of one file, so no build is needed.
#[test]
fn uninstall_says_the_hooks_left_in_repositories_stay_and_names_git_hand_uninstall() {
    let n = Newcomer::new();
    let state = n.prefix.join("share/git-hand");
    std::fs::create_dir_all(&state).unwrap();
    let file = n.prefix.join("share/doc.txt");
    std::fs::write(&file, "x").unwrap();
    std::fs::write(
        state.join("install-manifest"),
        format!("file {}\ndir {}\n", file.display(), state.display()),
    )
    .unwrap();
    let un = n.install_sh(&n.env.path("home"), &["--uninstall"]);
    assert_eq!(un.code, 0, "{un:?}");
    assert!(!file.exists());
    assert!(
        un.stdout.contains("hooks stay in every repository")
            && un.stdout.contains("`git hand uninstall` in each"),
        "{un:?}"
    );
}

/// install.sh's advice compares directories, not their spellings: with PREFIX reached through a
/// symlink (as macOS reaches /var and /tmp through /private) and PATH, MANPATH and
/// XDG_DATA_DIRS naming the same directories by their real paths, it asks for none of them to
/// be added, and it still does when they are missing.
#[test]
fn install_sh_finds_its_prefix_on_path_however_either_spells_it() {
    let mut n = Newcomer::new();
    let real = n.env.path("real-prefix");
    std::fs::create_dir(&real).unwrap();
    let link = n.env.path("prefix-link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    n.prefix = link;
    let real = real.canonicalize().unwrap();
    let mut path = std::env::split_paths(&n.path_var(false)).collect::<Vec<_>>();
    path.insert(0, real.join("bin"));
    let listed = [
        ("PATH", std::env::join_paths(path).unwrap()),
        ("MANPATH", real.join("share/man").into_os_string()),
        (
            "XDG_DATA_DIRS",
            format!("{}/share/:/usr/share", real.display()).into(),
        ),
    ];
    let install = n.install_sh_with(&n.env.path("home"), &[], &listed);
    assert_eq!(install.code, 0, "install.sh failed:\n{install:?}");
    for advice in [
        "is not on your PATH",
        "MANPATH is set",
        "bash-completion does not look",
    ] {
        assert!(
            !install.stdout.contains(advice),
            "{advice:?}, of a directory listed by its real path:\n{}",
            install.stdout
        );
    }
    let unlisted = [("MANPATH", OsString::from("/usr/share/man"))];
    let again = n.install_sh_with(&n.env.path("home"), &[], &unlisted);
    assert_eq!(again.code, 0, "install.sh failed:\n{again:?}");
    for advice in ["is not on your PATH", "MANPATH is set"] {
        assert!(
            again.stdout.contains(advice),
            "no {advice:?}:\n{}",
            again.stdout
        );
    }
}
