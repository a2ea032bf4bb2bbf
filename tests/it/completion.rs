//! Completions that know the repository (issue 13, item 5), driven through the real shells: bash
//! (git's own completion loaded, the completion function called as readline would, COMPREPLY
//! read), zsh (an interactive zsh in a pseudo-terminal, `zsh/zpty`, pressing <TAB> with
//! `compadd` recording what it is given) and fish (`complete -C`, fish's own non-interactive
//! completion). Each shell gets the script `git-hand generate completion <shell>` prints, placed
//! where `install.sh` puts it, and completes both `git-hand ...` and `git hand ...`.
//!
//! zsh and fish come from `build-support/test-tools` (through [`hook_tools`]); every shell runs
//! [`TestEnv::contained`].

use std::path::{Path, PathBuf};

use crate::support::{TestEnv, hook_tools};

/// A repository `app` with tags and branches, two open tasks and a done one; a second
/// repository whose task must never be offered in `app`.
struct World {
    env: TestEnv,
    app: PathBuf,
}

fn world() -> World {
    hook_tools(); // zsh and fish
    let env = TestEnv::new();
    let app = env.repo("app");
    env.git(&app, &["tag", "v1.0"]);
    env.git(&app, &["branch", "feature/search"]);
    for task in ["fix-login", "add-search", "old-task"] {
        env.hand(&app, &["spawn", task]).ok();
    }
    env.hand(&app, &["teardown", "old-task"]).ok();
    let other = env.repo("other");
    env.hand(&other, &["spawn", "elsewhere"]).ok();
    World { env, app }
}

/// Each line, completed by one shell: `line<TAB>` and what the shell offered, sorted, with the
/// repository's path written `<app>`.
fn render(w: &World, lines: &[&str], offered: Vec<Vec<String>>) -> String {
    let mut out = String::new();
    for (line, mut found) in lines.iter().zip(offered) {
        found.sort();
        out += &format!("{line}<TAB>\n");
        match found.is_empty() {
            true => out += "    (nothing)\n",
            false => out += &format!("    {}\n", found.join(" ")),
        }
    }
    out.replace(w.app.to_str().unwrap(), "<app>")
}

/// What each shell is asked in `app`.
fn lines(w: &World) -> Vec<String> {
    let app = w.app.display();
    [
        "git-hand teardown ",
        "git-hand done f",
        "git-hand env ",
        "git-hand renew --ttl 1h ",
        "git-hand spawn new --base ",
        "git hand teardown ",
        "git hand env a",
        "git hand spawn new --base o",
        "git hand te",
    ]
    .iter()
    .map(|l| l.to_string())
    .chain([format!("git-hand -C {app} teardown ")])
    .collect()
}

/// What each shell is asked outside any repository: there is nothing to offer but flags and no
/// error to show, unless a `-C` (git-hand's, or git's before `hand`) names the repository.
fn outside(w: &World) -> Vec<String> {
    let app = w.app.display();
    vec![
        "git-hand teardown ".into(),
        "git-hand spawn new --base ".into(),
        format!("git -C {app} hand env "),
        format!("git-hand -C {app} spawn new --base m"),
    ]
}

/// A completion script written where install.sh puts it under `prefix/share`.
fn install_script(w: &World, shell: &str, rel: &str) -> PathBuf {
    let script = w
        .env
        .hand(&w.env.path("work"), &["generate", "completion", shell])
        .ok();
    let path = w.env.path(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, script).unwrap();
    path
}

/// Splits a shell's output into one list per line: lines of candidates, each group ended by a
/// line `--end--`.
fn groups(out: &str) -> Vec<Vec<String>> {
    let mut all = vec![];
    let mut group = vec![];
    for line in out.lines() {
        if line == "--end--" {
            all.push(std::mem::take(&mut group));
        } else if !line.is_empty() {
            group.push(line.to_string());
        }
    }
    all
}

// --- bash ------------------------------------------------------------------------------------

/// Completes each line in bash with git's completion and ours loaded, as readline would: for
/// `git ...` through git's `__git_wrap__git_main` (which calls `_git_hand`), for `git-hand ...`
/// through the function `complete -F` names.
fn bash(w: &World, dir: &Path, lines: &[String]) -> Vec<Vec<String>> {
    let git = crate::support::git_bash_completion().expect(
        "git's bash completion is missing: apt-get install -y git (macOS: brew install git)",
    );
    let ours = install_script(
        w,
        "bash",
        "prefix/share/bash-completion/completions/git-hand",
    );
    let mut script = format!(
        ". {}\n. {}\n{}",
        git.display(),
        ours.display(),
        r#"
comp() {
    COMP_LINE=$1; COMP_POINT=${#1}
    read -ra COMP_WORDS <<<"$1"
    [[ $1 == *' ' ]] && COMP_WORDS+=('')
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    local fn=$(complete -p "${COMP_WORDS[0]}" | sed -E 's/.*-F ([^ ]+).*/\1/')
    "$fn" "${COMP_WORDS[0]}" "$cur" "$prev"
    printf '%s\n' "${COMPREPLY[@]}" --end--
}
"#
    );
    for line in lines {
        script += &format!("comp '{line}'\n");
    }
    let out = w
        .env
        .contained("bash", dir)
        .args(["--norc", "--noprofile", "-c", &script])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.is_empty(), "bash: {stderr}");
    groups(&String::from_utf8_lossy(&out.stdout))
}

#[test]
fn bash_completes_task_names_and_refs_through_git_hand_and_git() {
    let w = world();
    let lines = lines(&w);
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    insta::assert_snapshot!("bash", render(&w, &refs, bash(&w, &w.app, &lines)));
    let outside = outside(&w);
    let asked: Vec<&str> = outside.iter().map(String::as_str).collect();
    let offered = bash(&w, &w.env.path("work"), &outside);
    insta::assert_snapshot!("bash_outside", render(&w, &asked, offered));
}

// --- zsh -------------------------------------------------------------------------------------

/// Presses <TAB> after each line in an interactive `zsh -f` (a pseudo-terminal of `zsh/zpty`)
/// with compinit loaded and our `_git-hand` on `fpath`, as install.sh's `share/zsh/site-functions`
/// would be: `compadd` records the candidates it is given, and the completion ends the shell.
const ZSH_DRIVER: &str = r#"
zmodload zsh/zpty
for line in "${@:2}"; do
    zpty z zsh -f -i
    zpty -w z "fpath=(${(q)1} \$fpath); PROMPT=; autoload -U compinit; compinit -u -D"
    zpty -w z 'bindkey "^I" complete-word; zstyle ":completion:*" list-grouped false'
    zpty -w z 'compadd() {
        if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return $?; fi
        typeset -a hits; builtin compadd -A hits "$@"; local r=$?
        (( $#hits )) && print -rl -- "C""AND:"${^hits} >/dev/tty
        return r
    }'
    zpty -w z '_capture_end() { print -r -- "CAPTURE""-END" >/dev/tty; exit }'
    zpty -w z 'comppostfuncs=(_capture_end)'
    zpty -n -w z "$line"$'\t'
    while zpty -r z out; do
        [[ $out == *CAPTURE-END* ]] && break
        [[ $out == *CAND:* ]] && print -r -- ${${out#*CAND:}%$'\r'}
    done
    zpty -d z
    print -r -- --end--
done
"#;

fn zsh(w: &World, dir: &Path, lines: &[String]) -> Vec<Vec<String>> {
    let ours = install_script(w, "zsh", "prefix/share/zsh/site-functions/_git-hand");
    let out = w
        .env
        .contained("zsh", dir)
        .args(["-f", "-c", ZSH_DRIVER, "zsh"])
        .arg(ours.parent().unwrap())
        .args(lines)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.is_empty(), "zsh: {stderr}");
    groups(&String::from_utf8_lossy(&out.stdout))
}

#[test]
fn zsh_completes_task_names_and_refs_through_git_hand_and_git() {
    let w = world();
    let lines = lines(&w);
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    insta::assert_snapshot!("zsh", render(&w, &refs, zsh(&w, &w.app, &lines)));
    let outside = outside(&w);
    let asked: Vec<&str> = outside.iter().map(String::as_str).collect();
    let offered = zsh(&w, &w.env.path("work"), &outside);
    insta::assert_snapshot!("zsh_outside", render(&w, &asked, offered));
}

// --- fish ------------------------------------------------------------------------------------

/// `complete -C LINE` in fish for each line, with our script in `vendor_completions.d` and its
/// `git hand` part in `vendor_conf.d` under `$XDG_DATA_HOME/fish`, where fish looks and where
/// install.sh (with its default prefix) puts them.
fn fish(w: &World, dir: &Path, lines: &[String]) -> Vec<Vec<String>> {
    let ours = install_script(w, "fish", "data/fish/vendor_completions.d/git-hand.fish");
    let script = std::fs::read_to_string(&ours).unwrap();
    let bridge = &script[script
        .find("# `git hand <TAB>`")
        .expect("the git hand part")..];
    let conf = w.env.path("data/fish/vendor_conf.d/git-hand.fish");
    std::fs::create_dir_all(conf.parent().unwrap()).unwrap();
    std::fs::write(conf, bridge).unwrap();
    let out = w
        .env
        .contained("fish", dir)
        .args([
            "-c",
            "for line in $argv; complete -C $line | string replace -r '\\t.*' ''; echo --end--; end",
        ])
        .args(lines)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.is_empty(), "fish: {stderr}");
    groups(&String::from_utf8_lossy(&out.stdout))
}

#[test]
fn fish_completes_task_names_and_refs_through_git_hand_and_git() {
    let w = world();
    let lines = lines(&w);
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    insta::assert_snapshot!("fish", render(&w, &refs, fish(&w, &w.app, &lines)));
    let outside = outside(&w);
    let asked: Vec<&str> = outside.iter().map(String::as_str).collect();
    let offered = fish(&w, &w.env.path("work"), &outside);
    insta::assert_snapshot!("fish_outside", render(&w, &asked, offered));
}

// --- the verb the scripts call -----------------------------------------------------------------

/// `path` is added beside this work: once it is there, each shell offers it the task names too.
#[test]
fn a_path_verb_is_completed_with_task_names_in_every_shell() {
    let w = world();
    if w.env.hand(&w.app, &["path", "--help"]).code != 0 {
        return; // no `path` verb in this build
    }
    let line = vec!["git-hand path ".to_string(), "git hand path ".to_string()];
    for (shell, offered) in [
        ("bash", bash(&w, &w.app, &line)),
        ("zsh", zsh(&w, &w.app, &line)),
        ("fish", fish(&w, &w.app, &line)),
    ] {
        for found in offered {
            for task in ["fix-login", "add-search"] {
                assert!(found.iter().any(|c| c == task), "{shell}: {found:?}");
            }
        }
    }
}

#[test]
fn complete_prints_open_task_names_and_refs_and_writes_nothing() {
    let w = world();
    let ledger = w.env.ledger();
    let files = || ["", "-wal"].map(|ext| std::fs::read(format!("{}{ext}", ledger.display())).ok());
    let before = files();
    let tasks = w.env.hand(&w.app, &["complete", "tasks"]);
    assert_eq!(tasks.stderr, "");
    assert_eq!(tasks.ok(), "fix-login\nadd-search\n");
    let refs = w.env.hand(&w.app, &["complete", "refs"]).ok();
    assert_eq!(
        refs,
        "feature/search\nhand/add-search\nhand/fix-login\nhand/old-task\nmain\n\
         origin/main\nv1.0\n"
    );
    assert!(files() == before, "completing wrote to the ledger");
}

#[test]
fn complete_fails_silently_to_nothing() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    // No ledger: none is created.
    let run = env.hand(&repo, &["complete", "tasks"]);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (0, "", "")
    );
    assert!(!env.ledger().exists(), "completing created a ledger");
    // Outside a repository, and with a file that is no ledger (left as it was).
    let run = env.hand(&env.path("work"), &["complete", "refs"]);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (0, "", "")
    );
    std::fs::create_dir_all(env.ledger().parent().unwrap()).unwrap();
    std::fs::write(env.ledger(), "not a ledger").unwrap();
    let run = env.hand(&repo, &["complete", "tasks"]);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (0, "", "")
    );
    assert_eq!(std::fs::read(env.ledger()).unwrap(), b"not a ledger");
}
