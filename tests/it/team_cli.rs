//! Every verb on a team ledger given by URL (issue 14, items 1 and 5), through the binary: the
//! verbs on a PostgreSQL database of the harness (`crate::pg`), two "machines" (two `TestEnv`
//! HOMEs, two clones of one origin) on one database, pre-push's fencing there, and a server that
//! cannot be reached (exit 3, naming host, port and database; pre-push refusing from a slot and
//! allowing an unmanaged worktree with a warning). The URLs carry a password, and no output of
//! any verb may show it.

use std::path::Path;

use crate::pg;
use crate::support::{
    Run, TestEnv, cred, installed_on, leased_again, path_of, push, remote_oid, shot, spawn,
};
use crate::team_machines::{Machines, two_machines};

/// The password of the harness's superuser, in every TCP URL these tests use.
const PASSWORD: &str = pg::SUPERUSER_PASSWORD;

/// Asserts that nothing a command printed shows the password.
#[track_caller]
fn no_password(what: &str, run: &Run) {
    for (stream, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
        assert!(
            !text.contains(PASSWORD),
            "{what}: the password is on {stream}:\n{text}"
        );
    }
}

/// Runs `git hand <args>` and checks that neither stream shows the password.
#[track_caller]
fn hand(env: &TestEnv, dir: &Path, args: &[&str]) -> Run {
    let run = env.hand(dir, args);
    no_password(&args.join(" "), &run);
    run
}

/// The redacted URL git-hand shows for `db` over TCP.
fn shown_url(db: &pg::Database) -> String {
    format!(
        "postgres://{}@127.0.0.1:{}/{}",
        pg::SUPERUSER,
        pg::cluster().port,
        db.name
    )
}

/// A snapshot's text with what varies per database (its name, the cluster's port) named.
fn stable(text: &str, db_name: &str, port: u16) -> String {
    text.replace(db_name, "[db]")
        .replace(&format!(":{port}"), ":[port]")
}

#[test]
fn spawn_list_status_lease_and_teardown_work_on_a_team_ledger() {
    let db = pg::database();
    let (env, repo) = installed_on(&db.tcp_url());
    let spawned = hand(&env, &repo, &["spawn", "t1", "--json"]).ok();
    let spawned: serde_json::Value = serde_json::from_str(&spawned).unwrap();
    let slot = path_of(&spawned);

    let list = hand(&env, &repo, &["list", "--json"]).ok();
    assert!(list.contains("\"t1\""), "{list}");
    let tasks = db.psql("SELECT name || ':' || state FROM tasks");
    assert_eq!(tasks, "t1:active", "the task is on the server");
    assert!(
        !env.ledger().exists(),
        "no SQLite ledger was made beside the team ledger"
    );

    // The stamp names the team ledger by its URL without the password.
    let admin = env.git(&slot, &["rev-parse", "--absolute-git-dir"]);
    let stamp = std::fs::read_to_string(Path::new(&admin).join("git-hand-stamp")).unwrap();
    assert!(
        stamp.contains(&format!("ledger={}\n", shown_url(&db))),
        "{stamp}"
    );
    assert!(!stamp.contains(PASSWORD), "{stamp}");

    let status = hand(&env, &slot, &["status"]).ok();
    assert!(status.contains("verdict: current"), "{status}");
    assert!(
        status.contains(&format!("ledger:  team ledger {}\n", shown_url(&db))),
        "{status}"
    );
    let json = hand(&env, &slot, &["status", "--json"]).json();
    assert_eq!(json["ledger"], shown_url(&db));

    let held = hand(
        &env,
        &repo,
        &["lease", "acquire", "42", "--holder", "alice", "--json"],
    )
    .code(0)
    .json();
    assert_eq!(held["token"], 1);
    let current = hand(&env, &repo, &["lease", "current", "42", "--json"])
        .code(0)
        .json();
    assert_eq!(current["holder"], "alice");

    for read_only in [
        &["log", "--json"][..],
        &["log"],
        &["doctor"],
        &["doctor", "--json"],
        &["config"],
        &["config", "--json"],
        &["check"],
        &[],
        &["path", "t1"],
        &["env", "t1"],
    ] {
        let run = hand(&env, &slot, read_only);
        assert_eq!(run.code, 0, "{read_only:?}: {}{}", run.stdout, run.stderr);
    }
    hand(&env, &repo, &["teardown", "t1"]).ok();
    let tasks = db.psql("SELECT name || ':' || state FROM tasks");
    assert_eq!(tasks, "t1:done");
    let doctor = hand(&env, &repo, &["doctor", "--backup", "copy.sqlite"]).code(2);
    assert!(doctor.stderr.contains("pg_dump"), "{}", doctor.stderr);
}

#[test]
fn two_machines_on_one_database_see_each_others_issue_lease() {
    let db = pg::database();
    let Machines {
        laptop,
        repo,
        runner,
        clone,
        ..
    } = two_machines(&db.tcp_url());

    hand(
        &laptop,
        &repo,
        &["lease", "acquire", "42", "--holder", "alice"],
    )
    .ok();
    let refused = hand(
        &runner,
        &clone,
        &["lease", "acquire", "42", "--holder", "bob", "--json"],
    )
    .code(3)
    .json();
    assert_eq!(refused["outcome"], "held");
    assert_eq!(refused["holder"], "alice");
    let text = hand(
        &runner,
        &clone,
        &["lease", "acquire", "42", "--holder", "bob"],
    )
    .code(3);
    assert!(text.stderr.contains("alice"), "{}", text.stderr);

    // Released on the laptop, the runner gets the next token: one sequence for the team.
    hand(
        &laptop,
        &repo,
        &["lease", "release", "42", "--holder", "alice"],
    )
    .ok();
    let next = hand(
        &runner,
        &clone,
        &["lease", "acquire", "42", "--holder", "bob", "--json"],
    )
    .code(0)
    .json();
    assert_eq!(next["token"], 2);
}

/// Branch fencing is team-wide: a live task's branch, spawned on one machine, cannot be pushed
/// over from another machine's clone of the same origin until the task is torn down.
#[test]
fn a_live_tasks_branch_spawned_on_one_machine_is_fenced_on_another() {
    let db = pg::database();
    let Machines {
        laptop,
        repo,
        runner,
        clone,
        origin,
    } = two_machines(&db.tcp_url());

    spawn(&laptop, &repo, "feat", &[]);
    runner.git(&clone, &["switch", "-q", "-c", "hand/feat"]);
    runner.commit(&clone, "runner.txt", "from the runner\n");
    let refused = runner.git_run(&clone, &["push", "origin", "hand/feat"]);
    no_password("the runner's push", &refused);
    assert_ne!(
        refused.code, 0,
        "the push went through:\n{}",
        refused.stderr
    );
    assert!(
        refused
            .stderr
            .contains("branch hand/feat belongs to live task feat"),
        "{}",
        refused.stderr
    );
    assert_eq!(remote_oid(&runner, &origin, "hand/feat"), None);
    // Each machine's log shows the refusal: the runner's, of the push it made (before, it was
    // logged under the laptop's slot alone, which the runner's log never reads), and the
    // laptop's, of a push at its task.
    for (env, dir, who) in [(&runner, &clone, "runner"), (&laptop, &repo, "laptop")] {
        let log = hand(env, dir, &["log", "--json"]).json();
        let refused = log["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["kind"] == "push-refused")
            .count();
        assert_eq!(refused, 1, "the {who}'s log: {log}");
    }

    hand(&laptop, &repo, &["teardown", "feat"]).ok();
    runner.git(&clone, &["push", "-q", "origin", "hand/feat"]);
    assert!(remote_oid(&runner, &origin, "hand/feat").is_some());
}

#[test]
fn pre_push_refuses_a_zombies_push_on_a_team_ledger() {
    let db = pg::database();
    let (env, repo) = installed_on(&db.tcp_url());
    let (slot, first, second) = leased_again(&env, &repo, "t1", "t2");
    env.commit(&slot, "zombie.txt", "from t1, late\n");
    let run = push(&env, &slot, &cred(&first), &["origin", "HEAD"]);
    no_password("the zombie's push", &run);
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
    assert_eq!(
        remote_oid(&env, &env.path("work/app-origin.git"), "hand/t2"),
        None,
        "nothing reached the remote"
    );
    let refusals = db.psql("SELECT count(*) FROM events WHERE detail LIKE 'push refused: stale%'");
    assert_eq!(refusals, "1", "the refusal is recorded on the server");
    push(&env, &slot, &cred(&second), &["-q", "origin", "HEAD"]).ok();
}

/// A TCP port on 127.0.0.1 that nothing listens on (bound, then closed).
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[test]
fn every_verb_fails_with_exit_3_naming_the_server_when_it_cannot_be_reached() {
    let port = closed_port();
    let url = format!("postgres://hand:{PASSWORD}@127.0.0.1:{port}/teamdb?connect_timeout=2");
    let env = TestEnv::on_team_ledger(&url);
    let repo = env.repo("app");
    let verbs: &[&[&str]] = &[
        &[],
        &["list"],
        &["status"],
        &["check"],
        &["spawn", "t1"],
        &["teardown", "t1"],
        &["path", "t1"],
        &["env", "t1"],
        &["renew", "t1"],
        &["log"],
        &["doctor"],
        &["prune"],
        &["lease", "acquire", "42"],
        &["lease", "current", "42"],
        &["lease", "list"],
        &["list", "--json"],
        &["status", "--json"],
        &["doctor", "--json"],
        &["log", "--json"],
        &["lease", "acquire", "42", "--json"],
    ];
    for args in verbs {
        let run = hand(&env, &repo, args);
        assert_eq!(run.code, 3, "{args:?}\n{}{}", run.stdout, run.stderr);
        let said = format!("{}{}", run.stdout, run.stderr);
        assert!(
            said.contains(&format!("127.0.0.1:{port}")) && said.contains("teamdb"),
            "{args:?} does not name host, port and database:\n{said}"
        );
        if args.contains(&"--json") {
            assert_eq!(run.json()["error"]["kind"], "precondition", "{args:?}");
        }
    }
    let text = shot(
        &env,
        "git hand list",
        &env.hand(&repo, &["list"]),
        crate::support::Shown::Text,
    );
    insta::assert_snapshot!(
        "team_unreachable",
        text.replace(&port.to_string(), "[port]")
    );
}

#[test]
fn pre_push_with_the_server_down_refuses_a_slot_and_warns_for_an_unmanaged_worktree() {
    let cluster = pg::private_cluster();
    let db = cluster.database();
    let url = format!("{}?connect_timeout=2", db.tcp_url());
    let (env, repo) = installed_on(&url);
    let slot = path_of(&spawn(&env, &repo, "t1", &[]));
    env.commit(&slot, "a.txt", "work\n");
    env.commit(&repo, "b.txt", "main work\n");
    cluster.stop();

    let from_slot = push(&env, &slot, &[], &["origin", "HEAD"]);
    no_password("a push from the slot", &from_slot);
    assert_ne!(
        from_slot.code, 0,
        "a slot pushed unchecked:\n{}",
        from_slot.stderr
    );
    assert!(
        from_slot
            .stderr
            .contains("push refused: cannot check this worktree's lease"),
        "{}",
        from_slot.stderr
    );
    assert_eq!(
        remote_oid(&env, &env.path("work/app-origin.git"), "hand/t1"),
        None
    );
    // A slot whose stamp is gone (the agent in it deleted it) is still a slot.
    let admin = env.git(&slot, &["rev-parse", "--absolute-git-dir"]);
    std::fs::remove_file(Path::new(admin.trim()).join("git-hand-stamp")).unwrap();
    let unstamped = push(&env, &slot, &[], &["origin", "HEAD"]);
    assert_ne!(
        unstamped.code, 0,
        "a slot without its stamp pushed unchecked:\n{}",
        unstamped.stderr
    );

    let from_main = push(&env, &repo, &[], &["origin", "main"]);
    no_password("a push from the main worktree", &from_main);
    assert_eq!(from_main.code, 0, "{}", from_main.stderr);
    let warned: String = from_main
        .stderr
        .lines()
        .filter(|l| l.starts_with("git-hand"))
        .map(|l| format!("{l}\n"))
        .collect();
    insta::assert_snapshot!(
        "team_unreachable_push_unmanaged",
        stable(&warned, &db.name, cluster.port)
    );
    assert!(warned.contains("warning"), "{warned}");
}

#[test]
fn status_names_the_team_ledger_without_its_password() {
    let db = pg::database();
    let (env, repo) = installed_on(&db.tcp_url());
    let slot = path_of(&spawn(&env, &repo, "t1", &["--holder", "alice"]));
    let run = hand(&env, &slot, &["status"]);
    let text = shot(&env, "git hand status", &run, crate::support::Shown::Text);
    insta::assert_snapshot!("team_status", stable(&text, &db.name, pg::cluster().port));
}

#[test]
fn a_stamp_naming_the_configured_server_is_reached_with_the_configured_password() {
    // The hook runs under another HOME with the same GIT_HAND_LEDGER: the stamp has no
    // password, the configured URL has, and the stamp's server is the configured one.
    let db = pg::database();
    let (env, repo) = installed_on(&db.tcp_url());
    let a = spawn(&env, &repo, "t1", &[]);
    let slot = path_of(&a);
    let other_home = TestEnv::on_team_ledger(&db.tcp_url());
    let run = other_home.hand(&slot, &["status", "--json"]);
    no_password("status under another HOME", &run);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.json()["verdict"], "current");
}

#[test]
fn no_panic_message_or_debug_text_shows_the_password() {
    use git_hand::ledger::{Ledger, Place, server::ServerUrl};
    let port = closed_port();
    let url = ServerUrl::parse(&format!(
        "postgres://hand:{PASSWORD}@127.0.0.1:{port}/teamdb?connect_timeout=2"
    ))
    .unwrap();
    let panicked = std::panic::catch_unwind(|| {
        Ledger::open_creating(&url).unwrap();
    })
    .unwrap_err();
    let message = panicked
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(message.contains("teamdb"), "{message}");
    assert!(!message.contains(PASSWORD), "{message}");
    let place = Place::Server(url.clone());
    for text in [format!("{place:?}"), format!("{place}"), format!("{url:?}")] {
        assert!(!text.contains(PASSWORD), "{text}");
    }
    let db = pg::database();
    let ledger = Ledger::open_creating(ServerUrl::parse(&db.tcp_url()).unwrap()).unwrap();
    for text in [format!("{ledger:?}"), ledger.place().to_string()] {
        assert!(!text.contains(PASSWORD), "{text}");
    }
}

#[test]
fn hand_ledger_in_git_config_names_a_team_ledger_and_config_hides_its_password() {
    let db = pg::database();
    let mut env = TestEnv::new();
    // An empty GIT_HAND_LEDGER means "not set": git config decides.
    env.vars.push(("GIT_HAND_LEDGER".into(), String::new()));
    let repo = env.repo("app");
    env.git(&repo, &["config", "hand.ledger", &db.tcp_url()]);
    hand(&env, &repo, &["lease", "acquire", "7", "--holder", "alice"]).ok();
    assert_eq!(db.psql("SELECT count(*) FROM tenures"), "1");
    let text = hand(&env, &repo, &["config"]).ok();
    assert!(text.contains(&shown_url(&db)), "{text}");
    let json = hand(&env, &repo, &["config", "--json"]).ok();
    assert!(json.contains(&shown_url(&db)), "{json}");
    assert!(!env.ledger().exists(), "no SQLite ledger was made");
}

/// One clock: doctor reports this machine's clock against the team ledger server's, always on
/// its first line (and `clock_skew_ms` in `--json`), and as a problem when it is more than 2 s
/// off (the server's `hand_now()` made an hour fast), with nothing to repair in the ledger.
#[test]
fn doctor_reports_this_machines_clock_against_the_servers() {
    let db = pg::database();
    let (env, repo) = installed_on(&db.tcp_url());
    spawn(&env, &repo, "t", &[]);
    let fine = hand(&env, &repo, &["doctor"]).ok();
    assert!(
        fine.starts_with("clock: this machine is ")
            && fine.contains(" the team ledger server (lease times are the server's)"),
        "{fine}"
    );
    let json = hand(&env, &repo, &["doctor", "--json"]).code(0).json();
    assert!(
        json["clock_skew_ms"].as_i64().unwrap().abs() < 2_000,
        "{json}"
    );
    assert_eq!(json["problems"], serde_json::json!([]));

    db.psql(
        "CREATE OR REPLACE FUNCTION hand_now() RETURNS BIGINT LANGUAGE sql VOLATILE AS $$ \
         SELECT CAST(floor(extract(epoch FROM clock_timestamp()) * 1000) AS BIGINT) + 3600000 $$",
    );
    let off = hand(&env, &repo, &["doctor", "--json"]).code(3).json();
    let skew = off["clock_skew_ms"].as_i64().unwrap();
    assert!((skew + 3_600_000).abs() < 2_000, "an hour behind: {skew}");
    assert_eq!(off["problems"][0]["kind"], "clock-skew", "{off}");
    assert_eq!(off["problems"][0]["command"], "timedatectl set-ntp true");
    let text = hand(&env, &repo, &["doctor"]).code(3);
    assert!(
        text.stdout.contains(
            "found: clock-skew this machine's clock: 3600.0 s behind the team ledger server's"
        ),
        "{}",
        text.stdout
    );
    // On a SQLite ledger there is no other clock: no line, no field.
    let laptop = TestEnv::new();
    let mine = laptop.repo("app");
    let plain = laptop.hand(&mine, &["doctor", "--json"]).code(0).json();
    assert!(plain.get("clock_skew_ms").is_none(), "{plain}");
}

/// A read-only role answers pre-push (docs/team.md, Roles): a zombie's push is refused with its
/// own verdict (the refusal cannot be logged with that role, and is not), and the holder's push
/// goes through.
#[test]
fn pre_push_with_a_read_only_role_refuses_a_zombie_and_allows_the_holder() {
    let db = pg::database();
    let (env, repo) = installed_on(&db.tcp_url());
    let (slot, first, second) = leased_again(&env, &repo, "t1", "t2");
    let role = format!("ro_{}", db.name);
    db.psql(&format!(
        "CREATE ROLE {role} LOGIN PASSWORD 'ro-pw'; \
         GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role};"
    ));
    let as_reader = |credential: &serde_json::Value| {
        let mut vars = cred(credential);
        vars.push(("GIT_HAND_LEDGER".into(), db.url_as(&role, "ro-pw")));
        vars
    };
    env.commit(&slot, "zombie.txt", "from t1, late\n");
    let run = push(&env, &slot, &as_reader(&first), &["origin", "HEAD"]);
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
    push(&env, &slot, &as_reader(&second), &["-q", "origin", "HEAD"]).ok();

    // list and log read with it too, and show what the other roles wrote.
    let reader = [("GIT_HAND_LEDGER", db.url_as(&role, "ro-pw"))];
    let reader: Vec<(&str, &str)> = reader.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let list = env.hand_env(&repo, &["list", "--json"], &reader);
    assert_eq!(list.code, 0, "{}", list.stderr);
    assert_eq!(list.json()["tasks"][0]["task"], "t2", "{}", list.stdout);
    let log = env.hand_env(&repo, &["log"], &reader);
    assert_eq!(log.code, 0, "{}", log.stderr);
    assert!(log.stdout.contains("acquired"), "{}", log.stdout);
}

/// A verb that only reads changes nothing on the server: on an empty database `list`, `log`,
/// `lease current` and a push's pre-push see an empty ledger and create no table; the first
/// writing verb makes the schema.
#[test]
fn reading_verbs_and_hooks_make_nothing_on_an_empty_database() {
    let db = pg::database();
    let env = TestEnv::on_team_ledger(&db.tcp_url());
    let repo = env.repo("app");
    let tables =
        || db.psql("SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = 'public'");
    for args in [
        &["list"][..],
        &["log"],
        &["lease", "current", "42"],
        &["list", "--json"],
    ] {
        hand(&env, &repo, args).ok();
        assert_eq!(tables(), "0", "git hand {} made tables", args.join(" "));
    }
    hand(&env, &repo, &["install"]).ok();
    assert_eq!(tables(), "0", "install made tables");
    env.commit(&repo, "b.txt", "main work\n");
    push(&env, &repo, &[], &["-q", "origin", "main"]).ok();
    assert_eq!(tables(), "0", "a push made tables");
    hand(&env, &repo, &["lease", "acquire", "42", "--holder", "a"]).ok();
    assert_ne!(tables(), "0", "the first write makes the schema");
}

#[test]
fn the_owners_doctor_creates_the_schema_outside_any_repository() {
    let db = pg::database();
    let env = TestEnv::on_team_ledger(&db.tcp_url());
    let nowhere = env.path("not-a-repo");
    std::fs::create_dir_all(&nowhere).unwrap();
    let run = hand(&env, &nowhere, &["doctor"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("no problems found"), "{}", run.stdout);
    let tables =
        db.psql("SELECT count(*) FROM information_schema.tables WHERE table_name = 'tenures'");
    assert_eq!(tables.trim(), "1", "the schema was created");
}
