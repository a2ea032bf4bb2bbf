//! What users type, configure and export, checked before anything is written (issue 10): branch
//! names as git judges them, `hand.*` values that do not parse, credentials that do not parse,
//! usage errors that leave no trace, argument errors under `--json`, paths and names that would
//! break a line format or spoof a message, and a slot git refuses to remove.

use std::path::{Path, PathBuf};

use crate::support::{GitPause, Run, TestEnv, finish, path_of, spawn};

/// What a command left behind that it should not have: the ledger file, the pool directory.
fn traces(env: &TestEnv) -> Vec<PathBuf> {
    [env.ledger(), env.path("data/git-hand")]
        .into_iter()
        .filter(|p| p.exists())
        .collect()
}

/// Removes whatever a failed case left, so the next case is again the first command.
fn wipe(env: &TestEnv) {
    for p in traces(env) {
        let _ = std::fs::remove_dir_all(&p).or_else(|_| std::fs::remove_file(&p));
    }
    for ext in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{ext}", env.ledger().display()));
    }
}

/// A command: where it runs, its arguments, extra environment variables.
type Case<'a> = (&'a Path, Vec<&'a str>, Vec<(&'a str, &'a str)>);

/// Runs each case as the first command of a fresh world and returns every case that did not
/// exit 2 or left a ledger or a pool behind, with what it printed.
fn first_commands_that_left_traces(env: &TestEnv, cases: &[Case<'_>]) -> Vec<String> {
    let mut wrong = vec![];
    for (dir, args, vars) in cases {
        wipe(env);
        let run = env.hand_env(dir, args, vars);
        let left = traces(env);
        if run.code != 2 || !left.is_empty() {
            wrong.push(format!(
                "{args:?} {vars:?}: exit {}, left {left:?}\n  {}",
                run.code,
                run.stderr.trim()
            ));
        }
    }
    wipe(env);
    wrong
}

#[test]
fn spawn_refuses_a_branch_git_would_refuse_with_exit_2_before_anything_is_written() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let cases: Vec<_> = [
        "HEAD",
        "@",
        "-x",
        "a..b",
        "a.lock",
        "refs/heads/x",
        "x/",
        "a b",
        "a\tb",
        "a\u{202E}b",
        "@{-1}",
        "",
    ]
    .into_iter()
    .map(|b| (repo.as_path(), vec!["spawn", "t", "--branch", b], vec![]))
    .collect();
    let wrong = first_commands_that_left_traces(&env, &cases);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let run = env.hand(&repo, &["spawn", "t", "--branch", "HEAD"]).code(2);
    assert!(
        run.stderr.contains("\"HEAD\" is not a valid branch name"),
        "{}",
        run.stderr
    );
    // What git accepts still works, including what looks odd.
    spawn(&env, &repo, "t", &["--branch", "feature/x-1"]);
}

/// A task name the name rules take (`x.lock`, `a..b`) can still make a default branch
/// (`hand/<task>`) git refuses: spawn used to lease, claim and create a slot before `git switch`
/// failed on it (issue 22 item 10).
#[test]
fn a_task_name_whose_default_branch_git_refuses_is_a_usage_error_before_anything_is_written() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let cases: Vec<_> = ["x.lock", "a..b", "a.lock"]
        .into_iter()
        .map(|t| (repo.as_path(), vec!["spawn", t], vec![]))
        .collect();
    let wrong = first_commands_that_left_traces(&env, &cases);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let run = env.hand(&repo, &["spawn", "x.lock"]).code(2);
    assert!(
        run.stderr
            .contains("\"hand/x.lock\" is not a valid branch name")
            && run.stderr.contains("--branch"),
        "{}",
        run.stderr
    );
    // Such a name with a branch git takes still spawns.
    spawn(&env, &repo, "x.lock", &["--branch", "x-lock"]);
}

#[test]
fn usage_errors_leave_no_ledger_and_no_pool_behind() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let outside = env.path("work");
    let r = repo.as_path();
    let o = outside.as_path();
    let cases: Vec<Case<'_>> = vec![
        (r, vec!["spawn", "t", "--base", "deadbeef"], vec![]),
        (r, vec!["spawn", "bad name"], vec![]),
        (r, vec!["spawn", "t", "--issue", "a b"], vec![]),
        (r, vec!["spawn", "t", "--holder", ""], vec![]),
        (r, vec!["spawn", "t", "--ttl", "5x"], vec![]),
        (r, vec!["lease", "acquire", "a b"], vec![]),
        (
            r,
            vec!["lease", "acquire", "42", "--holder", "x\ny"],
            vec![],
        ),
        (
            r,
            vec!["lease", "acquire", "42"],
            vec![("GIT_HAND_HOLDER", "x\u{7}")],
        ),
        (r, vec!["lease", "renew", "a b"], vec![]),
        (r, vec!["lease", "release", "a b"], vec![]),
        (r, vec!["lease", "renew", "42", "--lease", "nothex"], vec![]),
        (
            r,
            vec!["lease", "release", "42", "--lease", "nothex"],
            vec![],
        ),
        (r, vec!["renew", "bad/name"], vec![]),
        (r, vec!["env", "bad/name"], vec![]),
        (r, vec!["teardown", "bad/name"], vec![]),
        (r, vec!["teardown", "t", "--bogus"], vec![]),
        (o, vec!["spawn", "t"], vec![]),
        (o, vec!["prune"], vec![]),
        (o, vec!["doctor"], vec![]),
        (o, vec!["renew", "t"], vec![]),
        (o, vec!["teardown", "t"], vec![]),
        (o, vec!["lease", "acquire", "42"], vec![]),
    ];
    let wrong = first_commands_that_left_traces(&env, &cases);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn argument_errors_print_the_json_error_object_when_json_is_anywhere_in_argv() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    for args in [
        &["spawn", "--json", "t", "--bogus"][..],
        &["spawn", "t", "--ttl", "5x", "--json"],
        &["lease", "acquire", "--json"],
        // `--json` is one global flag: before the verb it is taken, and the error is the verb's.
        &["--json", "list", "--bogus"],
    ] {
        let run = env.hand(&repo, args).code(2);
        let v = run.json();
        assert_eq!(v["error"]["kind"], "usage", "{args:?}: {v}");
        let message = v["error"]["message"].as_str().unwrap();
        assert!(
            !message.is_empty() && !message.contains('\n'),
            "{args:?}: {v}"
        );
        assert!(v["error"]["hints"].is_array(), "{args:?}: {v}");
        // People still read clap's own message on stderr (there it may span lines).
        let start: String = message.chars().take(30).collect();
        assert!(
            run.stderr.starts_with("error: ") && run.stderr.contains(&start),
            "{args:?}: {}",
            run.stderr
        );
    }
    // After `--` it is the command's argument, not ours.
    let run = env
        .hand(
            &repo,
            &["spawn", "t", "--bogus", "--exec", "--", "echo", "--json"],
        )
        .code(2);
    assert_eq!(run.stdout, "");
    // Help is no error.
    let run = env.hand(&repo, &["spawn", "--help", "--json"]).code(0);
    assert!(run.stdout.contains("Usage"), "{}", run.stdout);
}

#[test]
fn a_bad_hand_value_in_a_verb_exits_2_naming_the_key_the_value_and_the_fix() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    for (key, value) in [
        ("hand.maxSlots", "0"),
        ("hand.maxSlots", "-1"),
        ("hand.maxSlots", "abc"),
        ("hand.maxSlots", "99999999999999999999999"),
        ("hand.root", "relative/pools"),
        ("hand.root", "/tmp/a\nb"),
        ("hand.ledger", "relative.sqlite"),
    ] {
        env.git(&repo, &["config", key, value]);
        let run = env.hand_env(&repo, &["spawn", "t"], &[("GIT_HAND_LEDGER", "")]);
        assert_eq!(run.code, 2, "{key}={value:?}: {}", run.stderr);
        assert!(run.stderr.contains(key), "{key}: {}", run.stderr);
        assert!(
            run.stderr.contains(&format!("{value:?}")),
            "{key}={value:?}: {}",
            run.stderr
        );
        assert!(
            run.stderr.contains(&format!("hint: git config {key} ")),
            "{key}: {}",
            run.stderr
        );
        assert!(
            traces(&env).is_empty(),
            "{key}={value:?}: {:?}",
            traces(&env)
        );
        assert!(
            !env.path("state/git-hand").exists() && !repo.join("relative.sqlite").exists(),
            "{key}={value:?} left a ledger"
        );
        env.git(&repo, &["config", "--unset", key]);
    }
    env.git(&repo, &["config", "hand.requireCredential", "maybe"]);
    let run = env.hand(&repo, &["status"]).code(2);
    assert!(
        run.stderr.contains("hand.requireCredential") && run.stderr.contains("\"maybe\""),
        "{}",
        run.stderr
    );
    env.git(&repo, &["config", "--unset", "hand.requireCredential"]);
    env.git(&repo, &["config", "hand.issueNamespace", "team\u{202E}x"]);
    let run = env.hand(&repo, &["lease", "acquire", "42"]).code(2);
    assert!(run.stderr.contains("hand.issueNamespace"), "{}", run.stderr);
    assert!(traces(&env).is_empty(), "{:?}", traces(&env));
}

#[test]
fn a_bad_hand_value_refuses_the_push_and_only_warns_on_checkout() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.hand(&repo, &["install"]).ok();
    let slot = path_of(&spawn(&env, &repo, "t1", &[]));
    env.commit(&slot, "a.txt", "x\n");
    for (key, value) in [
        ("hand.requireCredential", "maybe"),
        ("hand.fenceBranches", "perhaps"),
    ] {
        env.git(&repo, &["config", key, value]);
        let run = env.git_run(&slot, &["push", "-q", "origin", "hand/t1"]);
        assert_ne!(run.code, 0, "{key}={value}: the push went through");
        assert!(
            run.stderr.contains("push refused") && run.stderr.contains(key),
            "{key}: {}",
            run.stderr
        );
        assert!(run.stderr.contains(&format!("{value:?}")), "{}", run.stderr);
        env.git(&repo, &["config", "--unset", key]);
    }
    env.git(&repo, &["config", "hand.adoptWorktrees", "sometimes"]);
    let x = env.path("work/x");
    let run = env.git_run(&repo, &["worktree", "add", "-q", x.to_str().unwrap()]);
    assert_eq!(run.code, 0, "the checkout failed: {}", run.stderr);
    assert!(
        run.stderr.contains("hand.adoptWorktrees") && run.stderr.contains("\"sometimes\""),
        "{}",
        run.stderr
    );
    env.git(&repo, &["config", "--unset", "hand.adoptWorktrees"]);
    env.git_run(&slot, &["push", "-q", "origin", "hand/t1"])
        .ok();
}

#[test]
fn a_credential_that_does_not_parse_is_unknown_lease_and_says_which_variable() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.hand(&repo, &["install"]).ok();
    let a = spawn(&env, &repo, "t1", &[]);
    let slot = path_of(&a);
    let lease = a["lease_id"].as_str().unwrap();
    let status = |vars: &[(&str, &str)]| env.hand_env(&slot, &["status", "--json"], vars).json();
    assert_eq!(
        status(&[("GIT_HAND_LEASE", lease), ("GIT_HAND_TOKEN", "1")])["verdict"],
        "current"
    );
    let huge = "1".repeat(23);
    for (lease_var, token_var, names) in [
        (Some(lease), Some("abc"), "GIT_HAND_TOKEN"),
        (Some(lease), Some(""), "GIT_HAND_TOKEN"),
        (Some(lease), Some(huge.as_str()), "GIT_HAND_TOKEN"),
        (Some(lease), Some("-1"), "GIT_HAND_TOKEN"),
        (Some(lease), Some("0"), "GIT_HAND_TOKEN"),
        (Some(lease), Some(" 1"), "GIT_HAND_TOKEN"),
        (Some("zz"), Some("1"), "GIT_HAND_LEASE"),
        (Some(&lease[..31]), None, "GIT_HAND_LEASE"),
        (Some(""), Some("1"), "GIT_HAND_LEASE"),
        (None, Some("1"), "GIT_HAND_LEASE"),
    ] {
        let mut vars = vec![];
        vars.extend(lease_var.map(|v| ("GIT_HAND_LEASE", v)));
        vars.extend(token_var.map(|v| ("GIT_HAND_TOKEN", v)));
        let v = status(&vars);
        assert_eq!(v["verdict"], "unknown-lease", "{vars:?}: {v}");
        let why = v["credential_error"].as_str().unwrap_or_default();
        assert!(why.contains(names), "{vars:?}: {v}");
    }
    let run = env
        .command("git", &slot)
        .args(["push", "-q", "origin", "hand/t1"])
        .env("GIT_HAND_LEASE", lease)
        .env("GIT_HAND_TOKEN", "abc")
        .output()
        .unwrap();
    let run = Run::from(run);
    assert_ne!(run.code, 0, "the push went through");
    assert!(
        run.stderr.contains("push refused (unknown-lease)")
            && run.stderr.contains("GIT_HAND_TOKEN"),
        "{}",
        run.stderr
    );
}

#[test]
fn paths_with_control_characters_are_refused_before_anything_is_written() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let odd = env.path("work/a\nb");
    std::fs::create_dir_all(&odd).unwrap();
    env.git(&odd, &["init", "-q", "-b", "main"]);
    env.commit(&odd, "f", "x\n");
    let ledger_nl = env.path("state/x\ny/ledger.sqlite");
    let data_nl = env.path("data/x\ny");
    let cases: Vec<Case<'_>> = vec![
        (
            repo.as_path(),
            vec!["spawn", "t"],
            vec![("GIT_HAND_LEDGER", ledger_nl.to_str().unwrap())],
        ),
        (
            repo.as_path(),
            vec!["lease", "acquire", "42"],
            vec![("GIT_HAND_LEDGER", ledger_nl.to_str().unwrap())],
        ),
        (
            repo.as_path(),
            vec!["spawn", "t"],
            vec![("XDG_DATA_HOME", data_nl.to_str().unwrap())],
        ),
        (odd.as_path(), vec!["spawn", "t"], vec![]),
    ];
    let wrong = first_commands_that_left_traces(&env, &cases);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(!env.path("state/x\ny").exists() && !data_nl.exists());
}

#[test]
fn holders_that_could_spoof_a_refusal_message_are_refused() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let r = repo.as_path();
    let holders: Vec<String> = [
        "\u{202A}",
        "\u{202B}",
        "\u{202C}",
        "\u{202D}",
        "\u{202E}",
        "\u{2066}",
        "\u{2067}",
        "\u{2068}",
        "\u{2069}",
        "\u{200E}",
        "\u{200F}",
        "\u{061C}",
        "\u{1b}[2K",
    ]
    .into_iter()
    .map(|c| format!("agent{c}a"))
    .collect();
    let cases: Vec<Case<'_>> = holders
        .iter()
        .flat_map(|h| {
            [
                (r, vec!["spawn", "t", "--holder", h.as_str()], vec![]),
                (
                    r,
                    vec!["lease", "acquire", "42"],
                    vec![("GIT_HAND_HOLDER", h.as_str())],
                ),
            ]
        })
        .collect();
    let wrong = first_commands_that_left_traces(&env, &cases);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Letters from any script are fine.
    spawn(&env, &repo, "t", &["--holder", "agent-ü-日本"]);
}

#[test]
fn prune_keeps_a_slot_git_refuses_to_remove_with_gits_reason_and_exits_0() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let slot = path_of(&spawn(&env, &repo, "a", &[]));
    env.hand(&repo, &["teardown", "a"]).ok();
    // Prune proved the slot clean; a file appears before git removes it.
    let pause = GitPause::new(&env, "remove", "worktree remove");
    let prune = pause.start(&env, &repo, &["prune", "--yes", "--json"]);
    pause.wait_until_paused();
    std::fs::write(slot.join("late.txt"), "x\n").unwrap();
    pause.release();
    let run = finish(prune).code(0);
    let v = run.json();
    assert_eq!(v["removed"], serde_json::json!([]), "{v}");
    let kept = &v["kept"][0];
    assert_eq!(kept["path"], slot.to_str().unwrap(), "{v}");
    let why = kept["why"][0].as_str().unwrap();
    assert!(why.starts_with("git refused to remove it: "), "{v}");
    assert!(why.contains("untracked"), "{v}");
    assert!(!why.contains('\n'), "{v}");
    assert!(kept["hint"].as_str().unwrap().contains("git -C"), "{v}");
    assert!(slot.join(".git").is_file(), "the slot is gone");
    // The slot is still a free slot of the pool, and goes once it is clean.
    std::fs::remove_file(slot.join("late.txt")).unwrap();
    let text = env.hand(&repo, &["prune", "--yes"]).ok();
    assert!(
        text.contains(&format!("removed: {}", slot.display())),
        "{text}"
    );
    assert!(!slot.exists());
}

#[test]
fn prune_prints_a_kept_slot_on_one_line_with_a_hint() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let slot = path_of(&spawn(&env, &repo, "a", &[]));
    env.hand(&repo, &["teardown", "a"]).ok();
    let pause = GitPause::new(&env, "remove", "worktree remove");
    let prune = pause.start(&env, &repo, &["prune", "--yes"]);
    pause.wait_until_paused();
    std::fs::write(slot.join("late.txt"), "x\n").unwrap();
    pause.release();
    let out = finish(prune).ok();
    let kept: Vec<&str> = out.lines().filter(|l| l.starts_with("kept: ")).collect();
    assert_eq!(kept.len(), 1, "{out}");
    assert!(kept[0].contains("git refused to remove it"), "{out}");
    assert!(out.contains("  hint: git -C"), "{out}");
}

/// Whether git-hand refuses a branch name on purpose although git takes it: `@` (git's
/// shorthand for HEAD), a name under `refs/` (it would become `refs/heads/refs/...`) and
/// bidirectional-formatting characters (they can make a message read as something else).
fn stricter_than_git(name: &str) -> bool {
    name == "@"
        || name.starts_with("refs/")
        || name.chars().any(|c| {
            matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
        })
}

#[test]
fn branch_names_are_judged_as_git_check_ref_format_branch_judges_them() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let mut names: Vec<String> = [
        "HEAD",
        "@",
        "-x",
        "-",
        "a..b",
        "a.lock",
        "a.lock/b",
        "a/b.lock",
        "refs/heads/x",
        "refs/x",
        "x/",
        "/x",
        "a//b",
        ".a",
        "a/.b",
        "a.",
        "a b",
        "a\tb",
        "a\u{7f}b",
        "a~b",
        "a^b",
        "a:b",
        "a?b",
        "a[b",
        "a*b",
        "a\\b",
        "a@{b",
        "@{-1}",
        "",
        "x/HEAD",
        "HEAD/x",
        "@/x",
        "a/@",
        "a@b",
        "a{b",
        "a}b",
        "h-",
        "a/-b",
        "heads/x",
        "origin/main",
        "feature/x-1",
        "é",
        "日本",
        "a\u{202E}b",
        "a\u{2066}b",
        "a\u{200F}",
        "\u{061C}a",
        "a.b",
        "a/b/c",
        "_",
        "a!b",
        "a#b",
        "a'b",
        "a\"b",
        "HEAD.lock",
        "a..",
        "..",
        "a/..",
        "a/./b",
    ]
    .into_iter()
    .map(str::to_string)
    .collect();
    // Every name of up to three of these pieces, so the rules meet each other.
    let pieces = ["a", ".", "/", "-", "@", "{", ".lock", "HEAD"];
    let mut level = vec![String::new()];
    for _ in 0..3 {
        level = level
            .iter()
            .flat_map(|prefix| pieces.iter().map(move |p| format!("{prefix}{p}")))
            .collect();
        names.extend(level.iter().cloned());
    }
    names.sort();
    names.dedup();
    let mut disagree = vec![];
    for name in &names {
        let git = env
            .git_run(&repo, &["check-ref-format", "--branch", name])
            .code
            == 0;
        let ours = git_hand::ops::repo::names::branch(name).is_ok();
        let stricter = stricter_than_git(name);
        if stricter && !git {
            disagree.push(format!(
                "{name:?}: listed as stricter, but git refuses it too"
            ));
        }
        if ours != (git && !stricter) {
            disagree.push(format!("{name:?}: git says {git}, git-hand says {ours}"));
        }
    }
    assert!(disagree.is_empty(), "{}", disagree.join("\n"));
}

#[test]
fn hand_booleans_and_integers_parse_as_git_config_parses_them() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let config = repo.join(".git/config");
    let base = std::fs::read_to_string(&config).unwrap();
    // The raw line, so "no value" and odd quoting reach both parsers exactly as written.
    let set = |line: &str| std::fs::write(&config, format!("{base}[hand]\n\t{line}\n")).unwrap();
    let mut disagree = vec![];
    for line in [
        "v = true",
        "v = yes",
        "v = on",
        "v = 1",
        "v = false",
        "v = no",
        "v = off",
        "v = 0",
        "v =",
        "v",
        "v = 2",
        "v = -1",
        "v = 10",
        "v = TRUE",
        "v = Yes",
        "v = maybe",
        "v = tru",
        "v = 1k",
        "v = 0x1",
        "v = \" 1\"",
        "v = \" 0\"",
        "v = \" true\"",
        "v = \"true \"",
        "v = 01",
        "v = \"\"",
    ] {
        set(line);
        let run = env.git_run(&repo, &["config", "--type=bool", "--get", "hand.v"]);
        let git = (run.code == 0).then(|| run.stdout.trim() == "true");
        let r = git_hand::git::Repo::discover(&repo).unwrap();
        let ours = r.config_bool("hand.v", false).ok();
        if git != ours {
            disagree.push(format!("bool {line:?}: git {git:?}, git-hand {ours:?}"));
        }
    }
    for line in [
        "v = 16",
        "v = 1k",
        "v = 1m",
        "v = 1g",
        "v = 1K",
        "v = -1",
        "v = 0",
        "v = abc",
        "v = 99999999999999999999",
        "v = 1.5",
        "v = +5",
        "v = \" 5\"",
        "v = \"5 \"",
        "v = 08",
        "v = 9223372036854775807",
        "v = 9007199254740993k",
    ] {
        set(line);
        let run = env.git_run(&repo, &["config", "--type=int", "--get", "hand.v"]);
        let git = (run.code == 0).then(|| run.stdout.trim().parse::<i64>().unwrap());
        let r = git_hand::git::Repo::discover(&repo).unwrap();
        let ours = r.config_int("hand.v").ok().flatten();
        if git != ours {
            disagree.push(format!("int {line:?}: git {git:?}, git-hand {ours:?}"));
        }
    }
    assert!(disagree.is_empty(), "{}", disagree.join("\n"));
}

#[test]
fn spawning_an_open_task_again_still_needs_no_base() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let a = spawn(&env, &repo, "t", &[]);
    // The base is checked before the ledger is opened, but resuming never used it.
    let again = spawn(&env, &repo, "t", &["--base", "no-such-rev"]);
    assert_eq!(again["slot_source"], "existing");
    assert_eq!(again["lease_id"], a["lease_id"]);
    env.hand(&repo, &["spawn", "u", "--base", "no-such-rev"])
        .code(2);
}

/// git reads an empty `GIT_CONFIG_COUNT` as no entries; gix refused to open any repository
/// over it, so every verb said "not in a git repository" and the pre-push hook refused pushes
/// from the main worktree (issue 22 item 10).
#[test]
fn an_empty_git_config_count_is_read_as_no_entries_as_git_reads_it() {
    let (env, repo) = crate::support::installed();
    let empty = [("GIT_CONFIG_COUNT", "")];
    let run = env.hand_env(&repo, &["status"], &empty);
    assert_eq!(run.code, 0, "{run:?}");
    env.commit(&repo, "f", "x\n");
    let pushed = crate::support::push(
        &env,
        &repo,
        &[("GIT_CONFIG_COUNT".into(), String::new())],
        &["-q", "origin", "main"],
    );
    assert_eq!(pushed.code, 0, "{pushed:?}");
    let run = env.hand_env(&repo, &["spawn", "t", "--json"], &empty);
    assert_eq!(run.code, 0, "{run:?}");
}

/// A SHA-256 repository is not "not in a git repository": the error names the object format
/// and says git-hand does not support it yet (issue 22 item 10).
#[test]
fn a_sha256_repository_is_refused_naming_its_object_format() {
    let env = TestEnv::new();
    let work = env.path("work");
    std::fs::create_dir_all(&work).unwrap();
    env.git(&work, &["init", "-q", "--object-format=sha256", "s"]);
    let repo = work.join("s");
    env.git(&repo, &["commit", "-q", "--allow-empty", "-m", "i"]);
    for args in [&["status"][..], &["spawn", "t"]] {
        let run = env.hand(&repo, args);
        assert_ne!(run.code, 0, "{args:?} {run:?}");
        assert!(
            run.stderr.contains("is a sha256 repository")
                && run.stderr.contains("does not support yet")
                && !run.stderr.contains("not in a git repository"),
            "{args:?} {}",
            run.stderr
        );
    }
    assert!(traces(&env).is_empty(), "{:?}", traces(&env));
}

/// A remote added as a relative path (`../app-origin.git`) is resolved by git against the top
/// of the worktree it runs in, so from a slot under the pool every push went elsewhere while
/// `status` said it would be allowed (issue 22 item 11). spawn pins it, saying so, and the push
/// from the slot reaches the origin the main worktree pushes to.
#[test]
fn a_push_from_a_slot_reaches_an_origin_added_as_a_relative_path() {
    let (env, repo) = crate::support::installed();
    env.git(&repo, &["remote", "set-url", "origin", "../app-origin.git"]);
    let run = env.hand(&repo, &["spawn", "t", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr
            .contains("remote.origin.url is the relative path")
            && run.stderr.contains("insteadOf"),
        "{}",
        run.stderr
    );
    let v = run.json();
    let slot = path_of(&v);
    let commit = env.commit(&slot, "f", "x\n");
    let pushed = crate::support::push(
        &env,
        &slot,
        &crate::support::cred(&v),
        &["-q", "origin", "HEAD:hand/t"],
    );
    assert_eq!(pushed.code, 0, "{pushed:?}");
    let origin = env.path("work/app-origin.git");
    assert_eq!(
        crate::support::remote_oid(&env, &origin, "hand/t").as_deref(),
        Some(commit.as_str())
    );
    // The main worktree still pushes where it always did, and the user's setting is untouched.
    env.commit(&repo, "g", "y\n");
    let pushed = crate::support::push(&env, &repo, &[], &["-q", "origin", "main"]);
    assert_eq!(pushed.code, 0, "{pushed:?}");
    assert_eq!(
        env.git(&repo, &["config", "remote.origin.url"]),
        "../app-origin.git"
    );
    // A second spawn pins nothing again, and status in the slot has nothing to say.
    let run = env.hand(&repo, &["spawn", "u"]);
    assert!(!run.stderr.contains("relative path"), "{}", run.stderr);
    let run = env.hand(&slot, &["status"]);
    assert!(!run.stderr.contains("relative path"), "{}", run.stderr);
    // A relative URL set after the spawn: status in the slot says where its pushes would go.
    env.git(
        &repo,
        &["remote", "set-url", "--push", "origin", "../elsewhere.git"],
    );
    let run = env.hand(&slot, &["status"]);
    assert!(
        run.stderr
            .contains("remote.origin.pushurl is the relative path")
            && run.stderr.contains("goes somewhere else"),
        "{}",
        run.stderr
    );
}
