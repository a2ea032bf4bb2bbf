//! Pushes that carry their lease (issue 15, item 1): with `hand.remoteFence`, the credential
//! `git hand env` prints and `spawn --exec` sets makes every push present `hand.lease`,
//! `hand.token` and `hand.task` as push options, appended to the configuration entries the
//! environment already carries; without it nothing is added. The remote is a real bare
//! repository whose pre-receive hook writes what a push presented.

use std::path::{Path, PathBuf};

use crate::support::{Shown, TestEnv, installed, path_of, remote_oid, shot, spawn};

/// The pre-receive hook of the test's origin: `count=<GIT_PUSH_OPTION_COUNT>` (or `unset`), then
/// each option, one a line, in the file `presented` of the bare repository.
const RECORDING_HOOK: &str = r#"#!/bin/sh
{
	echo "count=${GIT_PUSH_OPTION_COUNT-unset}"
	i=0
	while [ "$i" -lt "${GIT_PUSH_OPTION_COUNT:-0}" ]; do
		eval "echo \"\$GIT_PUSH_OPTION_$i\""
		i=$((i + 1))
	done
} > presented
"#;

/// `app` with its hooks installed, `hand.remoteFence` set to `fence` (unset when `None`), and its
/// origin recording what each push presents, advertising push options when `advertise`.
/// Returns (env, repo, origin).
fn world(fence: Option<&str>, advertise: bool) -> (TestEnv, PathBuf, PathBuf) {
    let (env, repo) = installed();
    let origin = env.path("work/app-origin.git");
    let hook = origin.join("hooks/pre-receive");
    crate::support::write_hook(&hook, RECORDING_HOOK, 0o755);
    if advertise {
        env.git(&origin, &["config", "receive.advertisePushOptions", "true"]);
    }
    if let Some(value) = fence {
        env.git(&repo, &["config", "hand.remoteFence", value]);
    }
    (env, repo, origin)
}

/// What the last push to `origin` presented.
fn presented(origin: &Path) -> String {
    std::fs::read_to_string(origin.join("presented")).unwrap_or_default()
}

/// The lines the hook writes for a push presenting `options`.
fn lines(options: &[&str]) -> String {
    let mut out = format!("count={}\n", options.len());
    for option in options {
        out += &format!("{option}\n");
    }
    out
}

/// `shell -c script` in `dir` (zsh and fish without their startup files), with `vars`.
fn in_shell(
    env: &TestEnv,
    dir: &Path,
    shell: &str,
    script: &str,
    vars: &[(&str, &str)],
) -> crate::support::Run {
    let mut cmd = env.contained(shell, dir);
    match shell {
        "zsh" => drop(cmd.arg("-f")),
        "fish" => drop(cmd.arg("--no-config")),
        _ => {}
    }
    cmd.args(["-c", script]);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    crate::support::Run::from(cmd.output().unwrap())
}

/// The three options of a spawn's task, as its JSON names them.
fn options_of(v: &serde_json::Value) -> [String; 3] {
    let task = v["task"].as_str().unwrap();
    crate::pre_receive::options(v, task).try_into().unwrap()
}

const SHELLS: [&str; 3] = ["sh", "bash", "zsh"];

/// Entries a shell already carries when it evaluates its credential: a push option and another
/// setting, under a count with a leading zero, as git (strtoul) reads it.
const CARRIED: [(&str, &str); 5] = [
    ("GIT_CONFIG_COUNT", "02"),
    ("GIT_CONFIG_KEY_0", "push.pushOption"),
    ("GIT_CONFIG_VALUE_0", "ci.skip"),
    ("GIT_CONFIG_KEY_1", "test.probe"),
    ("GIT_CONFIG_VALUE_1", "kept"),
];

#[test]
fn a_push_under_env_presents_its_lease_as_push_options_in_sh_bash_and_zsh() {
    let (env, repo, origin) = world(Some("true"), true);
    let t1 = spawn(&env, &repo, "t1", &[]);
    let slot = path_of(&t1);
    let [lease, token, task] = options_of(&t1);
    for shell in SHELLS {
        env.commit(&slot, "f", shell);
        let run = in_shell(
            &env,
            &slot,
            shell,
            r#"eval "$(git hand env t1)" && git push -q origin HEAD"#,
            &[],
        );
        assert_eq!(run.code, 0, "{shell}: {}", run.stderr);
        assert_eq!(
            presented(&origin),
            lines(&[&lease, &token, &task]),
            "{shell}"
        );
    }
    assert_eq!(
        remote_oid(&env, &origin, "hand/t1").as_deref(),
        Some(env.git(&slot, &["rev-parse", "HEAD"]).as_str())
    );
}

#[test]
fn entries_the_environment_already_carries_survive_and_still_apply() {
    let (env, repo, origin) = world(Some("true"), true);
    let t1 = spawn(&env, &repo, "t1", &[]);
    let slot = path_of(&t1);
    let [lease, token, task] = options_of(&t1);
    let seen = env.path("work/seen");
    // Evaluated twice, as a shell that asks for the credential again does: the second rewrites
    // the first's options instead of presenting them twice.
    let script = format!(
        r#"eval "$(git hand env t1)" && eval "$(git hand env t1)" &&
        printf '%s\n' "$GIT_CONFIG_COUNT" "$(git config --get test.probe)" "${{git_hand_n-none}}${{git_hand_i-none}}" > {seen} &&
        git push -q origin HEAD"#,
        seen = seen.display()
    );
    for shell in SHELLS {
        env.commit(&slot, "f", shell);
        let run = in_shell(&env, &slot, shell, &script, &CARRIED);
        assert_eq!(run.code, 0, "{shell}: {}", run.stderr);
        let want = lines(&["ci.skip", &lease, &token, &task]);
        assert_eq!(presented(&origin), want, "{shell}");
        let seen = std::fs::read_to_string(&seen).unwrap();
        assert_eq!(seen, "5\nkept\nnonenone\n", "{shell}");
    }
}

/// fish reads none of the POSIX code: `--shell fish` speaks its language, with the same
/// rules (after the entries already there, an earlier credential's rewritten in place, its own
/// variables gone afterwards).
#[test]
fn in_fish_env_shell_fish_presents_the_lease_after_the_entries_already_there() {
    let (env, repo, origin) = world(Some("true"), true);
    let t1 = spawn(&env, &repo, "t1", &[]);
    let slot = path_of(&t1);
    let [lease, token, task] = options_of(&t1);
    let seen = env.path("work/seen");
    let script = format!(
        "git hand env --shell fish t1 | source; and git hand env --shell fish t1 | source; and \
         printf '%s\\n' $GIT_CONFIG_COUNT (git config --get test.probe) (set -q n i k v; or echo clean) > {seen}; and \
         git push -q origin HEAD",
        seen = seen.display()
    );
    env.commit(&slot, "f", "fish");
    let run = in_shell(&env, &slot, "fish", &script, &CARRIED);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        presented(&origin),
        lines(&["ci.skip", &lease, &token, &task])
    );
    assert_eq!(std::fs::read_to_string(&seen).unwrap(), "5\nkept\nclean\n");
}

#[test]
fn spawn_exec_sets_the_same_options_after_the_entries_already_there() {
    let (env, repo, origin) = world(None, true);
    // The team's setting, committed in `.handconfig`, turns it on as git's configuration does.
    std::fs::write(repo.join(".handconfig"), "[hand]\n\tremoteFence = true\n").unwrap();
    env.git(&repo, &["add", ".handconfig"]);
    env.git(&repo, &["commit", "-q", "-m", "the remote checks leases"]);
    let seen = env.path("work/seen");
    let script = format!(
        r#"printf '%s\n' "$GIT_HAND_LEASE" "$GIT_HAND_TOKEN" > {} && git push -q origin HEAD"#,
        seen.display()
    );
    let run = env.hand_env(
        &repo,
        &["spawn", "t2", "--exec", "--", "sh", "-c", &script],
        &[
            ("GIT_CONFIG_COUNT", "1"),
            ("GIT_CONFIG_KEY_0", "push.pushOption"),
            ("GIT_CONFIG_VALUE_0", "ci.skip"),
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let seen = std::fs::read_to_string(&seen).unwrap();
    let (lease, token) = seen.trim().split_once('\n').unwrap();
    let want = lines(&[
        "ci.skip",
        &format!("hand.lease={lease}"),
        &format!("hand.token={token}"),
        "hand.task=t2",
    ]);
    assert_eq!(presented(&origin), want);
}

#[test]
fn with_the_remote_fence_off_nothing_is_added_and_a_remote_without_push_options_takes_pushes() {
    let (env, repo, origin) = world(None, false);
    let t1 = spawn(&env, &repo, "t1", &[]);
    let slot = path_of(&t1);
    let exports = env.hand(&slot, &["env", "t1"]).ok();
    assert!(!exports.contains("GIT_CONFIG"), "{exports}");
    env.commit(&slot, "f", "1");
    let script = r#"eval "$(git hand env t1)" && git push -q origin HEAD"#;
    let run = in_shell(&env, &slot, "sh", script, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(presented(&origin), "count=0\n");

    let seen = env.path("work/seen");
    let script = format!(
        r#"echo "${{GIT_CONFIG_COUNT-unset}}" > {} && git push -q origin HEAD"#,
        seen.display()
    );
    let run = env.hand(&repo, &["spawn", "t2", "--exec", "--", "sh", "-c", &script]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(&seen).unwrap(), "unset\n");
    assert!(remote_oid(&env, &origin, "hand/t2").is_some());
}

/// What docs/team.md says: with the fence on, a remote that does not advertise push options
/// refuses the push before any ref moves (git's own "the receiving end does not support push
/// options"); `-c push.pushOption=` (an empty value clears the list) pushes without them.
#[test]
fn with_the_remote_fence_on_a_remote_without_push_options_refuses_and_nothing_lands() {
    let (env, repo, origin) = world(Some("true"), false);
    let slot = path_of(&spawn(&env, &repo, "t1", &[]));
    env.commit(&slot, "f", "1");
    let run = in_shell(
        &env,
        &slot,
        "sh",
        r#"eval "$(git hand env t1)" && git push -q origin HEAD"#,
        &[],
    );
    assert_ne!(run.code, 0);
    assert!(
        run.stderr
            .contains("the receiving end does not support push options"),
        "{}",
        run.stderr
    );
    assert_eq!(remote_oid(&env, &origin, "hand/t1"), None);
    assert_eq!(presented(&origin), "");

    let run = in_shell(
        &env,
        &slot,
        "sh",
        r#"eval "$(git hand env t1)" && git -c push.pushOption= push -q origin HEAD"#,
        &[],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(remote_oid(&env, &origin, "hand/t1").is_some());
}

#[test]
fn pinned_env_with_the_remote_fence() {
    let (env, repo, _origin) = world(Some("true"), true);
    let slot = path_of(&spawn(&env, &repo, "t1", &[]));
    let run = env.hand(&slot, &["env"]);
    insta::assert_snapshot!(shot(&env, "git hand env", &run, Shown::Text));
    let run = env.hand(&slot, &["env", "--shell", "fish"]);
    insta::assert_snapshot!(
        "pinned_env_with_the_remote_fence_in_fish",
        shot(&env, "git hand env --shell fish", &run, Shown::Text)
    );
}

/// The options are the process's own: a zombie that evaluated its credential before its slot was
/// leased again presents its own stale lease (the remote's to refuse), never the current one.
#[test]
fn a_zombie_presents_its_own_stale_lease_not_the_slots_current_one() {
    let (env, repo, origin) = world(Some("true"), true);
    let a = spawn(&env, &repo, "a", &[]);
    let slot = path_of(&a);
    let exports = env.hand(&slot, &["env", "a"]).ok();
    env.hand(&repo, &["teardown", "a", "--force"]).ok();
    let b = spawn(&env, &repo, "b", &[]);
    assert_eq!(path_of(&b), slot, "b got a's slot");
    env.commit(&slot, "f", "b's work");
    // Past the client's hooks, as `--no-verify` gets: only the remote sees the lease.
    let script = format!("{exports}git push --no-verify -q origin HEAD:refs/heads/hand/b");
    let run = in_shell(&env, &slot, "sh", &script, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let [lease, token, task] = options_of(&a);
    assert_eq!(presented(&origin), lines(&[&lease, &token, &task]));
    assert_eq!(token, "hand.token=1");
    assert_eq!(b["token"], 2);
}

/// `--exec` and `--json` hand out a credential, which a bad value would leave without the push
/// options the remote wants: refused before anything is leased.
#[test]
fn spawn_exec_or_json_with_a_bad_remote_fence_value_leases_nothing() {
    let (env, repo, _origin) = world(Some("maybe"), true);
    for args in [
        &["spawn", "t1", "--exec", "--", "true"][..],
        &["spawn", "t1", "--json"],
    ] {
        let run = env.hand(&repo, args);
        assert_eq!(run.code, 2, "{args:?}");
        assert!(run.stderr.contains("hand.remoteFence"), "{}", run.stderr);
        let list = env.hand(&repo, &["list", "--json"]).ok();
        assert!(!list.contains("\"t1\""), "{list}");
    }
}

/// What a runner that reads JSON does with `env --json` or `spawn --json`'s `env`: it starts
/// the command from its own environment (`base`, which `git hand` ran in too) with the object's
/// variables on top; here the command is `git push origin HEAD` in `dir`.
fn push_with(
    env: &TestEnv,
    dir: &Path,
    base: &[(&str, &str)],
    vars: &serde_json::Value,
) -> crate::support::Run {
    let mut cmd = env.command("git", dir);
    cmd.args(["push", "-q", "origin", "HEAD"]);
    for (k, v) in base {
        cmd.env(k, v);
    }
    let vars = vars.as_object().expect("an object of variables");
    for (k, v) in vars {
        cmd.env(k, v.as_str().expect("every value a string"));
    }
    crate::support::Run::from(cmd.output().unwrap())
}

/// The runner's own configuration entries, which must keep applying.
const BASE: [(&str, &str); 3] = [
    ("GIT_CONFIG_COUNT", "1"),
    ("GIT_CONFIG_KEY_0", "push.pushOption"),
    ("GIT_CONFIG_VALUE_0", "ci.skip"),
];

#[test]
fn env_json_applied_on_top_of_the_runners_environment_presents_the_lease() {
    let (env, repo, origin) = world(Some("true"), true);
    let t1 = spawn(&env, &repo, "t1", &[]);
    let slot = path_of(&t1);
    let [lease, token, task] = options_of(&t1);
    let vars = env.hand_env(&slot, &["env", "--json", "t1"], &BASE).code(0);
    let vars = vars.json();
    assert_eq!(vars["GIT_HAND_LEASE"], t1["lease_id"], "{vars}");
    env.commit(&slot, "f", "1");
    let run = push_with(&env, &slot, &BASE, &vars);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        presented(&origin),
        lines(&["ci.skip", &lease, &token, &task])
    );
}

#[test]
fn spawn_json_lists_the_push_options_and_its_env_presents_them() {
    let (env, repo, origin) = world(Some("true"), true);
    let v = env
        .hand_env(&repo, &["spawn", "t1", "--json"], &BASE)
        .code(0);
    let v = v.json();
    let [lease, token, task] = options_of(&v);
    assert_eq!(v["push_options"], serde_json::json!([lease, token, task]));
    let slot = path_of(&v);
    env.commit(&slot, "f", "1");
    let run = push_with(&env, &slot, &BASE, &v["env"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        presented(&origin),
        lines(&["ci.skip", &lease, &token, &task])
    );
}

#[test]
fn with_the_remote_fence_off_the_json_credential_carries_no_push_options() {
    let (env, repo, origin) = world(None, false);
    let v = env
        .hand_env(&repo, &["spawn", "t1", "--json"], &BASE)
        .code(0);
    let v = v.json();
    assert_eq!(v["push_options"], serde_json::json!([]));
    let slot = path_of(&v);
    let vars = env.hand_env(&slot, &["env", "--json", "t1"], &BASE).code(0);
    let vars = vars.json();
    for credential in [&vars, &v["env"]] {
        let keys: Vec<&String> = credential.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 3, "{credential}");
        assert!(keys.iter().all(|k| k.starts_with("GIT_HAND_")), "{keys:?}");
    }
    // A remote without push options takes the push of a runner that applied it.
    env.commit(&slot, "f", "1");
    let run = push_with(&env, &slot, &[], &vars);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(presented(&origin), "count=0\n");
}

#[test]
fn pinned_env_and_spawn_json_with_the_remote_fence() {
    let (env, repo, _origin) = world(Some("true"), true);
    let spawned = env.hand_env(&repo, &["spawn", "t1", "--json"], &BASE);
    let slot = path_of(&spawned.json());
    let vars = env.hand_env(&slot, &["env", "--json"], &BASE);
    insta::assert_snapshot!(
        shot(
            &env,
            "git hand spawn t1 --json   # GIT_CONFIG_COUNT=1",
            &spawned,
            Shown::Json
        ) + &shot(
            &env,
            "git hand env --json   # GIT_CONFIG_COUNT=1",
            &vars,
            Shown::Json
        )
    );
}
