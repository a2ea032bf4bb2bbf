//! `git hand install --server` where the server runs a `pre-receive.d/` directory itself (issue
//! 15, item 2): Gitea's and Forgejo's generated `hooks/pre-receive` runs every executable there
//! with the same stdin, and GitLab runs `custom_hooks/pre-receive.d/`. git-hand's shim goes into
//! that directory as `00-git-hand`, the dispatcher stays byte for byte as it was (Gitea rewrites
//! it on every resynchronize), and `git hand uninstall` in the bare repository takes git-hand's
//! file away again, in either layout. Real git, real pushes over `file://`, contained.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::pre_receive::{options, push_past_hooks, refused_by_remote};
use crate::support::{
    Run, SYSTEM_PATH, Shown, TestEnv, leased_again, remote_oid, shot, tree, write_hook,
};

/// A dispatcher as Gitea and Forgejo generate one (written here, not copied): every executable
/// file in `hooks/pre-receive.d/`, in name order, each fed the same stdin; all of them run, and
/// the first failure's status is the hook's.
const DISPATCHER: &str = r#"#!/bin/sh
# the server's pre-receive dispatcher (as Gitea's: runs ${hookname}.d/*)
data=$(cat)
status=0
for hook in "${GIT_DIR:-.}"/hooks/pre-receive.d/*; do
	[ -f "$hook" ] && [ -x "$hook" ] || continue
	printf '%s\n' "$data" | "$hook"
	code=$?
	[ "$status" -ne 0 ] || status=$code
done
exit "$status"
"#;

/// The server's own hook beside git-hand's (Gitea's `pre-receive.d/gitea`): it appends what it
/// read to `sibling-saw` in the repository, once per run.
const SIBLING: &str =
    "#!/bin/sh\ncat >> \"$GIT_DIR/sibling-saw\"\necho --- >> \"$GIT_DIR/sibling-saw\"\n";

/// `app` with git-hand's client hooks, and its bare origin laid out as Gitea lays one out.
fn gitea_like() -> (TestEnv, PathBuf, PathBuf) {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.hand(&repo, &["install"]).ok();
    let origin = env.path("work/app-origin.git").canonicalize().unwrap();
    write_hook(&origin.join("hooks/pre-receive"), DISPATCHER, 0o755);
    write_hook(&origin.join("hooks/pre-receive.d/gitea"), SIBLING, 0o755);
    (env, repo, origin)
}

/// The hooks directory's files other than git-hand's own and git's samples.
fn theirs(origin: &Path) -> BTreeMap<PathBuf, (u32, Vec<u8>)> {
    let mut files = tree(&origin.join("hooks"));
    files.retain(|p, _| !p.ends_with("00-git-hand") && !p.to_string_lossy().ends_with(".sample"));
    files
}

fn sibling_runs(origin: &Path) -> usize {
    std::fs::read_to_string(origin.join("sibling-saw"))
        .map(|s| s.matches("---").count())
        .unwrap_or(0)
}

#[test]
fn install_server_goes_into_pre_receive_d_and_leaves_the_dispatcher_byte_identical() {
    let (env, _repo, origin) = gitea_like();
    let before = theirs(&origin);

    let out = env.hand(&origin, &["install", "--server", "--json"]).json();
    assert_eq!(out["outcome"], "installed", "{out}");
    assert_eq!(out["layout"], "dispatched", "{out}");
    let shim = origin.join("hooks/pre-receive.d/00-git-hand");
    assert_eq!(out["hooks"][0]["path"], shim.to_str().unwrap(), "{out}");
    assert_eq!(out["hooks"][0]["change"], "installed");
    assert_eq!(out["advertised_push_options"], true);
    assert_eq!(theirs(&origin), before, "the dispatcher and its siblings");
    assert!(!origin.join("hooks/pre-receive.git-hand-chained").exists());
    assert_eq!(crate::support::mode(&shim), 0o755);

    let again = env.hand(&origin, &["install", "--server", "--json"]).json();
    assert_eq!(again["outcome"], "unchanged", "{again}");
    assert_eq!(again["hooks"][0]["change"], "unchanged", "{again}");
    let forced = env.hand(&origin, &["install", "--server", "--force"]).ok();
    assert!(forced.contains("rewritten"), "{forced}");
    assert!(forced.contains("git-hand chains nothing"), "{forced}");
    assert_eq!(theirs(&origin), before);
}

#[test]
fn through_the_dispatcher_a_zombie_is_refused_the_sibling_runs_and_other_pushes_pass() {
    let (env, repo, origin) = gitea_like();
    env.hand(&origin, &["install", "--server"]).ok();
    let (slot, a, b) = leased_again(&env, &repo, "a", "b");
    env.commit(&slot, "z.txt", "written by a's zombie\n");

    let refused = push_past_hooks(
        &env,
        &slot,
        &origin,
        &options(&a, "a"),
        &["HEAD:refs/heads/hand/b"],
    );
    refused_by_remote(
        &refused,
        "remote: git-hand: push refused by the remote (stale)",
    );
    assert_eq!(remote_oid(&env, &origin, "hand/b"), None);
    assert_eq!(
        sibling_runs(&origin),
        1,
        "the sibling runs once, refused or not"
    );
    let saw = std::fs::read_to_string(origin.join("sibling-saw")).unwrap();
    assert!(saw.contains("refs/heads/hand/b"), "same stdin: {saw}");

    // Gitea's "resynchronize hooks" writes its dispatcher again: git-hand's file is untouched.
    write_hook(&origin.join("hooks/pre-receive"), DISPATCHER, 0o755);
    let still = push_past_hooks(
        &env,
        &slot,
        &origin,
        &options(&a, "a"),
        &["HEAD:refs/heads/hand/b"],
    );
    assert_ne!(still.code, 0, "after a resync: {}", still.stderr);

    push_past_hooks(&env, &slot, &origin, &[], &["HEAD:refs/heads/elsewhere"]).ok();
    push_past_hooks(
        &env,
        &slot,
        &origin,
        &options(&b, "b"),
        &["HEAD:refs/heads/hand/b"],
    )
    .ok();
    assert!(remote_oid(&env, &origin, "hand/b").is_some());
    assert_eq!(sibling_runs(&origin), 4);
}

#[test]
fn a_file_named_like_a_chained_hook_in_pre_receive_d_runs_once_from_the_dispatcher() {
    let (env, repo, origin) = gitea_like();
    env.hand(&origin, &["install", "--server"]).ok();
    // In pre-receive.d the dispatcher runs every executable file; git-hand, started from there,
    // must not take one of them for its chained hook and run it a second time.
    let chained = origin.join("hooks/pre-receive.d/pre-receive.git-hand-chained");
    let counter = "#!/bin/sh\ncat >/dev/null\necho ran >> \"$GIT_DIR/chained-ran\"\n";
    write_hook(&chained, counter, 0o755);
    push_past_hooks(&env, &repo, &origin, &[], &["HEAD:refs/heads/elsewhere"]).ok();
    assert_eq!(sibling_runs(&origin), 1, "the dispatcher ran once");
    let runs = std::fs::read_to_string(origin.join("chained-ran")).unwrap();
    assert_eq!(
        runs.lines().count(),
        1,
        "run by the dispatcher only: {runs}"
    );
}

#[test]
fn the_dispatched_fence_fails_closed_when_git_hand_is_gone() {
    let (env, repo, origin) = gitea_like();
    // Installed by a copy of git-hand that is then removed: neither PATH nor the recorded path
    // reaches one.
    let copy = env.path("gone/git-hand");
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    std::fs::copy(crate::support::BIN, &copy).unwrap();
    let mut install = env.command(&copy, &origin);
    install.args(["install", "--server"]);
    Run::from(crate::support::output_of_fresh_executable(&mut install)).ok();
    assert!(origin.join("hooks/pre-receive.d/00-git-hand").exists());
    std::fs::remove_file(&copy).unwrap();

    let mut cmd = env.contained("git", &repo);
    cmd.args(["push", "--no-verify", "-q"])
        .arg(format!("file://{}", origin.display()))
        .arg("HEAD:refs/heads/elsewhere")
        .env("PATH", SYSTEM_PATH);
    let run = Run::from(cmd.output().unwrap());
    refused_by_remote(&run, "the remote cannot check leases: push refused");
    assert_eq!(remote_oid(&env, &origin, "elsewhere"), None);
    assert_eq!(sibling_runs(&origin), 1);
}

#[test]
fn uninstall_in_the_bare_repository_removes_only_git_hands_file() {
    let (env, _repo, origin) = gitea_like();
    let before = theirs(&origin);
    env.hand(&origin, &["install", "--server"]).ok();

    let out = env.hand(&origin, &["uninstall", "--json"]).json();
    assert_eq!(out["outcome"], "uninstalled", "{out}");
    let removed: Vec<_> = out["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["change"] == "removed")
        .collect();
    assert_eq!(removed.len(), 1, "{out}");
    assert!(
        removed[0]["path"]
            .as_str()
            .unwrap()
            .ends_with("hooks/pre-receive.d/00-git-hand")
    );
    assert!(!origin.join("hooks/pre-receive.d/00-git-hand").exists());
    assert_eq!(theirs(&origin), before);

    // A file of someone else's under git-hand's name is refused at install and kept at uninstall.
    let foreign = "#!/bin/sh\nexit 0\n";
    write_hook(
        &origin.join("hooks/pre-receive.d/00-git-hand"),
        foreign,
        0o755,
    );
    let refused = env.hand(&origin, &["install", "--server"]).code(3);
    assert!(
        refused.stderr.contains("is not git-hand's"),
        "{}",
        refused.stderr
    );
    let kept = env.hand(&origin, &["uninstall", "--json"]).json();
    assert_eq!(kept["outcome"], "nothing-installed", "{kept}");
    assert_eq!(
        std::fs::read_to_string(origin.join("hooks/pre-receive.d/00-git-hand")).unwrap(),
        foreign
    );
}

#[test]
fn uninstall_in_the_bare_repository_puts_back_the_pre_receive_it_chained() {
    let env = TestEnv::new();
    env.repo("app");
    let origin = env.path("work/app-origin.git").canonicalize().unwrap();
    let checker = "#!/bin/sh\ncat >/dev/null\n";
    write_hook(&origin.join("hooks/pre-receive"), checker, 0o750);
    let out = env.hand(&origin, &["install", "--server", "--json"]).json();
    assert_eq!(out["layout"], "chained", "{out}");

    let text = env.hand(&origin, &["uninstall"]).ok();
    assert!(text.contains("pre-receive"), "{text}");
    assert_eq!(
        std::fs::read_to_string(origin.join("hooks/pre-receive")).unwrap(),
        checker
    );
    assert_eq!(
        crate::support::mode(&origin.join("hooks/pre-receive")),
        0o750
    );
    assert!(!origin.join("hooks/pre-receive.git-hand-chained").exists());
}

#[test]
fn a_dispatcher_an_earlier_install_chained_is_put_back_and_git_hand_moves_into_pre_receive_d() {
    let (env, _repo, origin) = gitea_like();
    let before = theirs(&origin);
    // What the chained layout made of a Gitea repository: the dispatcher kept under the chained
    // name, git-hand's shim in its place.
    let hooks = origin.join("hooks");
    std::fs::rename(
        hooks.join("pre-receive"),
        hooks.join("pre-receive.git-hand-chained"),
    )
    .unwrap();
    let older = git_hand::hooks::shim::content_for(git_hand::hooks::HookName::PreReceive, None);
    write_hook(&hooks.join("pre-receive"), &older, 0o755);
    let shim = hooks.join("pre-receive.d/00-git-hand");

    let out = env.hand(&origin, &["install", "--server", "--json"]).json();
    assert_eq!(out["layout"], "dispatched", "{out}");
    assert_eq!(out["hooks"][0]["change"], "restored", "{out}");
    assert_eq!(out["hooks"][1]["change"], "installed", "{out}");
    assert_eq!(
        theirs(&origin),
        before,
        "the dispatcher is back, byte for byte"
    );
    assert!(shim.exists());
}

#[test]
fn a_gitlab_repository_gets_the_shim_in_custom_hooks_pre_receive_d() {
    let env = TestEnv::new();
    env.repo("app");
    let origin = env.path("work/app-origin.git").canonicalize().unwrap();
    std::fs::create_dir(origin.join("custom_hooks")).unwrap();

    let out = env.hand(&origin, &["install", "--server", "--json"]).json();
    assert_eq!(out["layout"], "dispatched", "{out}");
    let shim = origin.join("custom_hooks/pre-receive.d/00-git-hand");
    assert_eq!(out["hooks"][0]["path"], shim.to_str().unwrap(), "{out}");
    assert!(shim.exists());
    assert!(
        !origin.join("hooks/pre-receive").exists(),
        "Gitaly never runs it"
    );

    // GitLab's global custom_hooks_dir, named explicitly.
    let global = env.path("gitaly/custom_hooks");
    let named = env
        .hand(
            &origin,
            &[
                "install",
                "--server",
                "--json",
                "--hooks-dir",
                global.to_str().unwrap(),
            ],
        )
        .json();
    assert_eq!(named["layout"], "dispatched", "{named}");
    assert!(global.join("pre-receive.d/00-git-hand").exists());

    let gone = env.hand(&origin, &["uninstall", "--json"]).json();
    assert_eq!(gone["outcome"], "uninstalled", "{gone}");
    assert!(!shim.exists());
}

/// A bare repository on its own, with nothing of git-hand's run yet (no ledger either).
fn bare(env: &TestEnv, rel: &str) -> PathBuf {
    let path = env.path(rel);
    std::fs::create_dir_all(&path).unwrap();
    env.git(&path, &["init", "-q", "--bare"]);
    path.canonicalize().unwrap()
}

#[test]
fn install_server_opens_the_ledger_the_hook_reads_and_says_which() {
    let env = TestEnv::new();
    let origin = bare(&env, "srv/app.git");
    assert!(!env.ledger().exists());

    let out = env.hand(&origin, &["install", "--server", "--json"]).json();
    assert_eq!(out["ledger"], env.ledger().to_str().unwrap(), "{out}");
    assert_eq!(out["ledger_source"], "GIT_HAND_LEDGER", "{out}");
    assert!(
        env.ledger().is_file(),
        "created, as a writing verb creates it"
    );

    let text = env.hand(&origin, &["install", "--server"]).ok();
    let named = format!("ledger: {} (from GIT_HAND_LEDGER)", env.ledger().display());
    assert!(text.contains(&named), "{text}");
    assert!(
        text.contains("this repository's own hand.ledger only"),
        "{text}"
    );
    let fix = format!(
        "git -C {} config hand.ledger <path-or-url>",
        origin.display()
    );
    assert!(text.contains(&fix), "{text}");
}

#[test]
fn install_server_with_a_ledger_it_cannot_open_fails_and_changes_nothing() {
    let env = TestEnv::new();
    let origin = bare(&env, "srv/app.git");
    let before = tree(&origin);
    let file = env.path("srv/not-a-dir");
    std::fs::write(&file, "").unwrap();
    let unusable = file.join("ledger.sqlite");

    let run = env
        .hand_env(
            &origin,
            &["install", "--server"],
            &[("GIT_HAND_LEDGER", unusable.to_str().unwrap())],
        )
        .code(3);
    assert!(
        run.stderr
            .contains(&format!("cannot open the ledger at {}", unusable.display())),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("nothing was installed"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("config hand.ledger <path-or-url>"),
        "{}",
        run.stderr
    );
    assert_eq!(tree(&origin), before, "no hook written, no setting changed");
    let advertised = env.git_run(&origin, &["config", "receive.advertisePushOptions"]);
    assert_ne!(advertised.code, 0, "{}", advertised.stdout);
}

#[test]
fn a_gitlab_repository_without_custom_hooks_gets_them_and_never_the_chained_layout() {
    let env = TestEnv::new();
    // Gitaly writes the project's path into the repository's configuration.
    let named = bare(&env, "git-data/repositories/team/app.git");
    env.git(&named, &["config", "gitlab.fullpath", "team/app"]);
    // Hashed storage: where every GitLab project lives since 14.0.
    let hashed = bare(&env, "git-data/repositories/@hashed/6b/86/6b86b273.git");
    for origin in [named, hashed] {
        let out = env.hand(&origin, &["install", "--server", "--json"]).json();
        assert_eq!(out["layout"], "dispatched", "{out}");
        let shim = origin.join("custom_hooks/pre-receive.d/00-git-hand");
        assert_eq!(out["hooks"][0]["path"], shim.to_str().unwrap(), "{out}");
        assert_eq!(crate::support::mode(&shim), 0o755);
        assert!(
            !origin.join("hooks/pre-receive").exists(),
            "Gitaly never runs the repository's hooks/"
        );
        let gone = env.hand(&origin, &["uninstall", "--json"]).json();
        assert_eq!(gone["outcome"], "uninstalled", "{gone}");
        assert!(!shim.exists());
    }
}

/// A repository copied from GitLab into Gitea keeps `gitlab.fullpath` and gets Gitea's
/// dispatcher: only one of the two layouts runs, and a fence written to the other would never
/// run. Refused, nothing written, both `--hooks-dir` commands named; `--hooks-dir` then decides.
#[test]
fn a_gitlab_sign_beside_a_gitea_dispatcher_is_refused_until_hooks_dir_says_which() {
    let (env, _repo, origin) = gitea_like();
    env.git(&origin, &["config", "gitlab.fullpath", "team/app"]);
    let before = tree(&origin);
    let out = env.hand(&origin, &["install", "--server"]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("looks like a GitLab repository (gitlab.fullpath is set in its config)"),
        "{}",
        out.stderr
    );
    let hooks = origin.join("hooks");
    assert!(
        out.stderr
            .contains(&format!("--hooks-dir {}", hooks.display())),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("custom_hooks"), "{}", out.stderr);
    assert_eq!(tree(&origin), before, "something was written");
    let chosen = env
        .hand(
            &origin,
            &[
                "install",
                "--server",
                "--hooks-dir",
                hooks.to_str().unwrap(),
                "--json",
            ],
        )
        .json();
    assert_eq!(chosen["layout"], "dispatched", "{chosen}");
    assert!(hooks.join("pre-receive.d/00-git-hand").exists());
}

#[test]
fn a_new_file_that_cannot_be_written_leaves_the_old_chained_fence_in_place() {
    let (env, repo, origin) = gitea_like();
    // What an older git-hand made of this repository: the dispatcher chained, its shim in front.
    let hooks = origin.join("hooks");
    std::fs::rename(
        hooks.join("pre-receive"),
        hooks.join("pre-receive.git-hand-chained"),
    )
    .unwrap();
    let bin = Path::new(crate::support::BIN);
    let shim = git_hand::hooks::shim::content_for(git_hand::hooks::HookName::PreReceive, Some(bin));
    write_hook(&hooks.join("pre-receive"), &shim, 0o755);
    env.git(&origin, &["config", "receive.advertisePushOptions", "true"]);
    // The server's own ledger, as the admin names it after upgrading (issue 22).
    let ledger = env.ledger();
    env.git(
        &origin,
        &["config", "hand.ledger", ledger.to_str().unwrap()],
    );
    let (slot, a, _b) = leased_again(&env, &repo, "a", "b");
    env.commit(&slot, "z.txt", "written by a's zombie\n");
    let ours = hooks.join("pre-receive.d/00-git-hand");

    // Someone else's file under git-hand's name (refused, exit 3), then a directory there.
    write_hook(&ours, "#!/bin/sh\nexit 0\n", 0o755);
    let taken = env.hand(&origin, &["install", "--server"]);
    assert_eq!(taken.code, 3, "{}", taken.stderr);
    std::fs::remove_file(&ours).unwrap();
    std::fs::create_dir(&ours).unwrap();
    let not_a_file = env.hand(&origin, &["install", "--server"]).code(1);
    assert!(
        not_a_file.stderr.contains("is not a regular file"),
        "{}",
        not_a_file.stderr
    );

    assert_eq!(
        std::fs::read_to_string(hooks.join("pre-receive")).unwrap(),
        shim
    );
    assert_eq!(
        std::fs::read_to_string(hooks.join("pre-receive.git-hand-chained")).unwrap(),
        DISPATCHER
    );
    let refused = push_past_hooks(
        &env,
        &slot,
        &origin,
        &options(&a, "a"),
        &["HEAD:refs/heads/hand/b"],
    );
    assert_ne!(
        refused.code, 0,
        "the old fence still judges: {}",
        refused.stderr
    );
    assert!(refused.stderr.contains("(stale)"), "{}", refused.stderr);
    assert_eq!(remote_oid(&env, &origin, "hand/b"), None);
}

#[test]
fn uninstall_removes_git_hands_file_past_a_stale_chained_copy_of_the_dispatcher() {
    let (env, _repo, origin) = gitea_like();
    env.hand(&origin, &["install", "--server"]).ok();
    // An older git-hand chained an older dispatcher; the server has since written its new one.
    let older = DISPATCHER.replace("data=$(cat)", "data=$(cat) # older");
    let chained = origin.join("hooks/pre-receive.git-hand-chained");
    write_hook(&chained, &older, 0o755);

    let out = env.hand(&origin, &["uninstall", "--json"]).json();
    assert_eq!(out["outcome"], "uninstalled", "{out}");
    assert!(!origin.join("hooks/pre-receive.d/00-git-hand").exists());
    let left: Vec<_> = out["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["change"] == "stale-chained")
        .collect();
    assert_eq!(left.len(), 1, "{out}");
    assert_eq!(left[0]["chained"], chained.to_str().unwrap(), "{out}");
    assert_eq!(std::fs::read_to_string(&chained).unwrap(), older);
    assert_eq!(
        std::fs::read_to_string(origin.join("hooks/pre-receive")).unwrap(),
        DISPATCHER
    );

    let text = env.hand(&origin, &["uninstall"]).ok();
    assert!(text.contains("nothing to uninstall"), "{text}");
    assert!(
        text.contains(&format!("rm {}", chained.display())),
        "{text}"
    );
}

#[test]
fn pinned_install_server_names_the_ledger_and_uninstall_the_copy_it_leaves() {
    let (env, _repo, origin) = gitea_like();
    let unusable = env.path("work/app-origin.git/HEAD/ledger.sqlite");
    let refused = env.hand_env(
        &origin,
        &["install", "--server"],
        &[("GIT_HAND_LEDGER", unusable.to_str().unwrap())],
    );
    let installed = env.hand(&origin, &["install", "--server"]);
    let older = DISPATCHER.replace("data=$(cat)", "data=$(cat) # older");
    write_hook(
        &origin.join("hooks/pre-receive.git-hand-chained"),
        &older,
        0o755,
    );
    let uninstalled = env.hand(&origin, &["uninstall"]);
    insta::assert_snapshot!(
        [
            shot(
                &env,
                "git hand install --server  # a ledger it cannot open",
                &refused,
                Shown::Text
            ),
            shot(&env, "git hand install --server", &installed, Shown::Text),
            shot(
                &env,
                "git hand uninstall  # past a stale chained dispatcher",
                &uninstalled,
                Shown::Text
            ),
        ]
        .join("\n")
    );
}

#[test]
fn install_server_names_a_team_ledger_without_its_password() {
    let db = crate::pg::database();
    let url = db.tcp_url();
    let (userinfo, rest) = url["postgres://".len()..].split_once('@').unwrap();
    let (role, password) = userinfo.split_once(':').unwrap();
    let env = TestEnv::on_team_ledger(&url);
    let origin = bare(&env, "srv/app.git");
    env.git(&origin, &["config", "hand.machine", "server"]);

    let out = env.hand(&origin, &["install", "--server", "--json"]).json();
    assert_eq!(out["ledger"], format!("postgres://{role}@{rest}"), "{out}");
    let text = env.hand(&origin, &["install", "--server"]).ok();
    assert!(!text.contains(password), "{text}");
    assert!(
        text.contains(&format!(
            "ledger: postgres://{role}@{rest} (from GIT_HAND_LEDGER)"
        )),
        "{text}"
    );
    // Opened as a writing verb opens it: the schema is there for the hook to read.
    assert!(!db.psql("SELECT count(*) FROM clock").trim().is_empty());
}

/// Run as root for a repository of the git server's user (the usual way an admin installs),
/// the ledger `install --server` opens from root's environment or default place is one the hook,
/// run as that user, may never read: said, with the setting that fixes it; not said once the
/// repository's own configuration names the ledger.
#[test]
fn install_server_for_another_users_repository_warns_that_its_default_ledger_is_not_the_hooks() {
    use std::os::unix::fs::MetadataExt;
    let env = TestEnv::new();
    let origin = bare(&env, "srv/app.git");
    // This process made the env's directory: its owner is this process's uid (no `/proc/self`).
    let me = std::fs::metadata(env.root.path()).unwrap().uid();
    let own = env.hand(&origin, &["install", "--server"]);
    assert!(!own.stderr.contains("belongs to uid"), "{}", own.stderr);
    if me != 0 {
        // Only root can give a repository to another user: the warning itself is not reached.
        return;
    }
    let nobody = 65534;
    std::os::unix::fs::chown(&origin, Some(nobody), Some(nobody)).unwrap();
    // git refuses another user's repository unless told it is safe (as an admin must).
    let safe = [
        ("GIT_CONFIG_COUNT", "1"),
        ("GIT_CONFIG_KEY_0", "safe.directory"),
        ("GIT_CONFIG_VALUE_0", "*"),
    ];
    let theirs = env.hand_env(&origin, &["install", "--server"], &safe);
    assert!(
        theirs
            .stderr
            .contains(&format!("belongs to uid {nobody}, not to you (uid 0)")),
        "{}",
        theirs.stderr
    );
    assert!(
        theirs.stderr.contains("config hand.ledger"),
        "{}",
        theirs.stderr
    );
    let ledger = env.path("state/git-hand/ledger.sqlite");
    let set = ["-c", "safe.directory=*", "config", "hand.ledger"];
    env.git(&origin, &[&set[..], &[ledger.to_str().unwrap()]].concat());
    // This shell's GIT_HAND_LEDGER is the test's; without it the repository's setting is read.
    let unset = [&safe[..], &[("GIT_HAND_LEDGER", "")]].concat();
    let named = env.hand_env(&origin, &["install", "--server"], &unset);
    assert!(!named.stderr.contains("belongs to uid"), "{}", named.stderr);
}
