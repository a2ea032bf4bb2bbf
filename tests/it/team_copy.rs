//! Moving a laptop's ledger into a team ledger (issue 14, item 6): `git hand ledger copy --to
//! <url>` copies the live tasks with their tenures (lease ids, tokens, holders, expiries), the
//! slots and every resource's last token, so the credentials and stamps of the laptop keep
//! working on the team ledger and no token they present is granted again; a conflict refuses
//! the whole copy and changes nothing. Everything through the binary, against the harness's
//! PostgreSQL; the laptop's ledger is a real SQLite file.

use std::path::{Path, PathBuf};

use std::process::Stdio;
use std::time::{Duration, Instant};

use git_hand::ledger::server::ServerUrl;

use crate::pg;
use crate::support::{
    BIN, COMMAND_TIMEOUT, Shown, TestEnv, cred, finish, killed_after, leased_again, path_of, push,
    shot, spawn, wait_until,
};

/// The rows of the team ledger a copy may write, as psql prints them.
fn team_rows(db: &pg::Database) -> String {
    db.psql(
        "SELECT 'repo', id, common_dir, machine FROM repos ORDER BY id;
         SELECT 'resource', kind, key, last_token FROM resources ORDER BY kind, key;
         SELECT 'tenure', lease_id, token, holder, ended_at IS NULL FROM tenures ORDER BY lease_id;
         SELECT 'slot', n, path, machine FROM slots ORDER BY path;
         SELECT 'task', name, state, machine, lease_id FROM tasks ORDER BY id;
         SELECT 'event', count(*) FROM events;",
    )
}

/// The password in a `postgres://user:password@...` URL.
fn password_of(url: &str) -> String {
    let rest = url.strip_prefix("postgres://").unwrap();
    let creds = rest.split('@').next().unwrap();
    creds.split_once(':').unwrap().1.to_string()
}

/// A laptop on its own SQLite ledger: `app` with its hooks, machine id `laptop`; task `old`
/// spawned and torn down, `fix-login` in its slot (the slot's second holder), `add-api` holding
/// issue 7, and issue 9 acquired and released twice (its last token 2, no live holder).
struct Laptop {
    env: TestEnv,
    repo: PathBuf,
    slot: PathBuf,
    zombie: serde_json::Value,
    holder: serde_json::Value,
    api: serde_json::Value,
}

fn laptop() -> Laptop {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.git(&repo, &["config", "--global", "hand.machine", "laptop"]);
    env.hand(&repo, &["install"]).ok();
    let (slot, zombie, holder) = leased_again(&env, &repo, "old", "fix-login");
    let api = spawn(&env, &repo, "add-api", &["--issue", "7"]);
    for _ in 0..2 {
        env.hand(&repo, &["lease", "acquire", "9"]).ok();
        env.hand(&repo, &["lease", "release", "9"]).ok();
    }
    env.commit(&slot, "login.txt", "fixed\n");
    Laptop {
        env,
        repo,
        slot,
        zombie,
        holder,
        api,
    }
}

fn sha(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

/// Switches the laptop over to the team ledger the way a user does after a copy: the command the
/// copy printed in `stdout` (the URL without its password), and the password in `~/.pgpass`.
/// Returns the URL the command names.
fn use_the_team_ledger(l: &mut Laptop, db: &pg::Database, stdout: &str) -> String {
    let printed = stdout
        .lines()
        .find_map(|line| line.trim().strip_prefix("git config --global hand.ledger "))
        .unwrap()
        .trim_matches('\'')
        .to_string();
    l.env
        .git(&l.repo, &["config", "--global", "hand.ledger", &printed]);
    let pgpass = l.env.path("home/.pgpass");
    let port = pg::cluster().port;
    let password = password_of(&db.tcp_url());
    std::fs::write(
        &pgpass,
        format!("127.0.0.1:{port}:{}:postgres:{password}\n", db.name),
    )
    .unwrap();
    std::fs::set_permissions(&pgpass, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    // The test world's GIT_HAND_LEDGER names the file; empty, git config decides.
    l.env.vars.push(("GIT_HAND_LEDGER".into(), String::new()));
    printed
}

/// The `git-hand:` lines of a refused push, with the ages in them (`since 3s ago`) taken out:
/// the words a pre-push hook says, whichever ledger it asked, and however long the test took.
fn refusal_words(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|line| line.starts_with("git-hand:"))
        .map(|line| match line.split_once(" since ") {
            Some((head, tail)) => {
                let rest = tail.split_once(" ago").map_or("", |(_, rest)| rest);
                format!("{head} since [age] ago{rest}")
            }
            None => line.to_string(),
        })
        .collect()
}

/// The text of the stamp in `slot`'s admin dir.
fn stamp_of(env: &TestEnv, slot: &Path) -> String {
    let admin = env.git(slot, &["rev-parse", "--absolute-git-dir"]);
    std::fs::read_to_string(PathBuf::from(admin.trim()).join("git-hand-stamp")).unwrap()
}

#[test]
fn a_laptop_moves_in_and_its_credentials_stamps_and_tokens_keep_their_meaning() {
    let db = pg::database();
    let url = db.tcp_url();
    let password = password_of(&url);
    let mut l = laptop();
    let file_before = sha(&l.env.ledger());

    let copied = l.env.hand(&l.repo, &["ledger", "copy", "--to", &url]);
    assert_eq!(copied.code, 0, "{}{}", copied.stdout, copied.stderr);
    insta::assert_snapshot!(
        "team_ledger_copy",
        shot(
            &l.env,
            "git hand ledger copy --to <url>",
            &copied,
            Shown::Text
        )
        .replace(&db.name, "[db]")
        .replace(&format!(":{}", pg::cluster().port), ":[port]")
    );
    for text in [&copied.stdout, &copied.stderr] {
        assert!(!text.contains(&password), "the password is shown:\n{text}");
    }
    assert!(
        copied
            .stdout
            .contains("git config --global hand.ledger 'postgres://"),
        "{}",
        copied.stdout
    );
    assert_eq!(
        sha(&l.env.ledger()),
        file_before,
        "the laptop's ledger file is untouched"
    );
    let slot_key = format!("laptop:{}", l.slot.display());
    assert_eq!(
        db.psql(&format!(
            "SELECT last_token FROM resources WHERE key = '{slot_key}'"
        )),
        l.holder["token"].to_string(),
        "the slot's resource moved under the machine's key with its last token"
    );

    let printed = use_the_team_ledger(&mut l, &db, &copied.stdout);
    let list = l.env.hand(&l.repo, &["list", "--json"]).json();
    let mut names: Vec<&str> = list["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["task"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["add-api", "fix-login"], "{list:#}");

    // The holder's push from its slot, with the credential it had on the laptop, goes through;
    // the zombie's (the slot's earlier tenure, which the laptop had superseded) is refused.
    let zombie = push(
        &l.env,
        &l.slot,
        &cred(&l.zombie),
        &["-q", "origin", "HEAD:refs/heads/hand/fix-login"],
    );
    assert_ne!(zombie.code, 0, "the zombie's push went through");
    // Its ended tenure was copied: refused as on the laptop, as a lease superseded since.
    assert!(
        zombie.stderr.contains("push refused (stale)"),
        "{}",
        zombie.stderr
    );
    let pushed = push(
        &l.env,
        &l.slot,
        &cred(&l.holder),
        &["-q", "origin", "HEAD:refs/heads/hand/fix-login"],
    );
    assert_eq!(pushed.code, 0, "{}", pushed.stderr);
    // And from its stamp alone, which now names the team ledger (without the password).
    let stamp = stamp_of(&l.env, &l.slot);
    assert!(stamp.contains(&format!("ledger={printed}")), "{stamp}");
    assert!(!stamp.contains(&password), "{stamp}");
    let stamped = push(
        &l.env,
        &l.slot,
        &[],
        &["-q", "origin", "HEAD:refs/heads/hand/fix-login"],
    );
    assert_eq!(stamped.code, 0, "{}", stamped.stderr);

    let issue = l
        .env
        .hand(&l.repo, &["lease", "current", "7", "--json"])
        .json();
    assert_eq!(issue["outcome"], "live", "{issue:#}");
    assert_eq!(issue["lease_id"], l.api["issue"]["lease_id"]);
    assert_eq!(issue["token"], l.api["issue"]["token"]);

    // Issue 9 was released on the laptop at token 2: the team ledger's next is 3.
    let again = l
        .env
        .hand(&l.repo, &["lease", "acquire", "9", "--json"])
        .json();
    assert_eq!(again["token"], 3, "{again:#}");

    // A second run, now that hand.ledger names the team ledger, is refused (there is no file
    // ledger to copy); from the file named again, it finds everything there and changes nothing.
    l.env
        .hand(&l.repo, &["ledger", "copy", "--to", &url])
        .code(2);
    let before = team_rows(&db);
    let file = l.env.ledger();
    let rerun = l.env.hand_env(
        &l.repo,
        &["ledger", "copy", "--to", &url, "--json"],
        &[("GIT_HAND_LEDGER", file.to_str().unwrap())],
    );
    assert_eq!(rerun.code, 0, "{}{}", rerun.stdout, rerun.stderr);
    let rerun = rerun.json();
    assert_eq!(rerun["copied"].as_array().unwrap().len(), 0, "{rerun:#}");
    assert_eq!(rerun["already"].as_array().unwrap().len(), 2, "{rerun:#}");
    assert_eq!(team_rows(&db), before, "a second copy wrote nothing");
    assert!(!rerun.to_string().contains(&password));
}

#[test]
fn an_issue_live_on_the_team_ledger_for_someone_else_refuses_the_copy_and_changes_nothing() {
    let db = pg::database();
    let url = db.tcp_url();
    let password = password_of(&url);
    let l = laptop();
    // bob holds issue 7 on the team ledger (the same remote, so the same issue key).
    let bob = l.env.hand_env(
        &l.repo,
        &["lease", "acquire", "7"],
        &[("GIT_HAND_LEDGER", &url), ("GIT_HAND_HOLDER", "bob")],
    );
    assert_eq!(bob.code, 0, "{}", bob.stderr);
    let before = team_rows(&db);
    let file_before = sha(&l.env.ledger());

    let refused = l.env.hand(&l.repo, &["ledger", "copy", "--to", &url]);
    assert_eq!(refused.code, 3, "{}{}", refused.stdout, refused.stderr);
    assert!(
        refused.stderr.contains("is held on the team ledger by bob"),
        "{}",
        refused.stderr
    );
    assert!(refused.stderr.contains("nothing was changed"));
    assert!(!refused.stderr.contains(&password), "{}", refused.stderr);
    let json = l
        .env
        .hand(&l.repo, &["ledger", "copy", "--to", &url, "--json"])
        .code(3)
        .json();
    assert_eq!(json["error"]["kind"], "precondition");
    assert!(!json.to_string().contains(&password));

    assert_eq!(team_rows(&db), before, "the team ledger is as it was");
    assert_eq!(sha(&l.env.ledger()), file_before, "and so is the laptop's");
    let stamp = stamp_of(&l.env, &l.slot);
    assert!(
        stamp.contains(&format!("ledger={}", l.env.ledger().display())),
        "the stamp still names the laptop's ledger:\n{stamp}"
    );
}

#[test]
fn a_zombie_of_a_lease_superseded_on_the_laptop_is_judged_stale_on_the_team_ledger_in_the_same_words()
 {
    let db = pg::database();
    let url = db.tcp_url();
    let mut l = laptop();
    let branch = ["-q", "origin", "HEAD:refs/heads/hand/fix-login"];
    let on_laptop = push(&l.env, &l.slot, &cred(&l.zombie), &branch);
    assert!(
        on_laptop.stderr.contains("push refused (stale)"),
        "{}",
        on_laptop.stderr
    );

    let copied = l.env.hand(&l.repo, &["ledger", "copy", "--to", &url]);
    assert_eq!(copied.code, 0, "{}{}", copied.stdout, copied.stderr);
    use_the_team_ledger(&mut l, &db, &copied.stdout);
    let zombie_lease = l.zombie["lease_id"].as_str().unwrap();
    assert_eq!(
        db.psql(&format!(
            "SELECT t.token || ' ' || t.holder || ' ' || t.end_reason || ' ' || r.key \
             FROM tenures t JOIN resources r ON r.id = t.resource_id \
             WHERE t.lease_id = '{zombie_lease}'"
        )),
        format!(
            "{} {} released laptop:{}",
            l.zombie["token"],
            l.zombie["holder"].as_str().unwrap(),
            l.slot.display()
        ),
        "the zombie's ended tenure is on the team ledger as it was on the laptop"
    );

    let on_team = push(&l.env, &l.slot, &cred(&l.zombie), &branch);
    assert_ne!(on_team.code, 0, "the zombie's push went through");
    assert_eq!(
        refusal_words(&on_team.stderr),
        refusal_words(&on_laptop.stderr),
        "the team ledger refuses the zombie in the laptop's words"
    );
}

#[test]
fn a_zombie_of_a_lease_released_on_the_laptop_is_judged_released_on_the_team_ledger() {
    let db = pg::database();
    let url = db.tcp_url();
    let mut l = laptop();
    // `gone` is torn down and its slot stays free: its lease is the slot's last, released.
    let gone = spawn(&l.env, &l.repo, "gone", &[]);
    let gone_slot = path_of(&gone);
    l.env.commit(&gone_slot, "gone.txt", "late\n");
    l.env.hand(&l.repo, &["teardown", "gone", "--force"]).ok();
    let branch = ["-q", "origin", "HEAD:refs/heads/hand/gone"];
    let on_laptop = push(&l.env, &gone_slot, &cred(&gone), &branch);
    assert!(
        on_laptop.stderr.contains("push refused (released)"),
        "{}",
        on_laptop.stderr
    );

    let copied = l.env.hand(&l.repo, &["ledger", "copy", "--to", &url]);
    assert_eq!(copied.code, 0, "{}{}", copied.stdout, copied.stderr);
    let printed = use_the_team_ledger(&mut l, &db, &copied.stdout);
    // The free slot's stamp names the released lease, which the team ledger now has: it names
    // the team ledger, so the laptop's file may go (docs/team.md says the user may delete it).
    let stamp = stamp_of(&l.env, &gone_slot);
    assert!(stamp.contains(&format!("ledger={printed}")), "{stamp}");
    std::fs::rename(l.env.ledger(), l.env.path("state/ledger.sqlite.kept")).unwrap();

    for presented in [cred(&gone), vec![]] {
        let on_team = push(&l.env, &gone_slot, &presented, &branch);
        assert_ne!(on_team.code, 0, "the released lease's push went through");
        assert_eq!(
            refusal_words(&on_team.stderr),
            refusal_words(&on_laptop.stderr),
            "the team ledger refuses it in the laptop's words"
        );
    }
}

#[test]
fn a_slot_number_this_machine_has_at_another_path_on_the_team_ledger_is_a_worded_conflict() {
    let db = pg::database();
    let url = db.tcp_url();
    let l = laptop();
    // This machine tried the team ledger once before: its repository there has another id, so
    // its slot 1 is in another pool directory.
    let team = [("GIT_HAND_LEDGER", url.as_str())];
    let tried = l
        .env
        .hand_env(&l.repo, &["spawn", "tried", "--json"], &team);
    assert_eq!(tried.code, 0, "{}", tried.stderr);
    let tried = tried.json();
    assert_eq!(tried["slot"], 1, "{tried:#}");
    let theirs = tried["path"].as_str().unwrap().to_string();
    assert_ne!(Path::new(&theirs), l.slot.as_path());
    let done = l
        .env
        .hand_env(&l.repo, &["teardown", "tried", "--force"], &team);
    assert_eq!(done.code, 0, "{}", done.stderr);
    let before = team_rows(&db);
    let file_before = sha(&l.env.ledger());

    let refused = l.env.hand(&l.repo, &["ledger", "copy", "--to", &url]);
    assert_eq!(refused.code, 3, "{}{}", refused.stdout, refused.stderr);
    let ours = l.slot.display().to_string();
    let words = "slot 1 of this machine's repository";
    for part in [
        words,
        &theirs,
        &ours,
        "nothing was changed",
        "git hand list",
    ] {
        assert!(
            refused.stderr.contains(part),
            "no {part:?} in:\n{}",
            refused.stderr
        );
    }
    assert!(
        !refused.stderr.contains("duplicate key"),
        "{}",
        refused.stderr
    );
    let json = l
        .env
        .hand(&l.repo, &["ledger", "copy", "--to", &url, "--json"])
        .code(3)
        .json();
    assert_eq!(json["error"]["kind"], "precondition", "{json:#}");
    assert_eq!(team_rows(&db), before, "the team ledger is as it was");
    assert_eq!(sha(&l.env.ledger()), file_before, "and so is the laptop's");
}

/// Whether a git-hand session on `db` is waiting for a lock (the copy, at the writers' lock).
fn a_session_waits_for_a_lock(db: &pg::Database) -> bool {
    db.psql(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
         AND application_name = 'git-hand' AND wait_event_type = 'Lock'",
    ) != "0"
}

#[test]
fn a_slot_leased_again_while_the_copy_runs_keeps_its_new_stamp_on_the_file_ledger() {
    let db = pg::database();
    let url = db.tcp_url();
    let l = laptop();
    // The team ledger's schema, so that this test can take its writers' lock.
    git_hand::ledger::Ledger::open_creating(ServerUrl::parse(&url).unwrap()).unwrap();
    // Another writer holds the team ledger: the copy, having read the laptop's ledger and the
    // slots' stamps, waits at its transaction's first statement (`UPDATE clock`).
    let mut writer = postgres::Client::connect(&db.url(), postgres::NoTls).unwrap();
    writer
        .batch_execute("BEGIN; UPDATE clock SET max_now = max_now")
        .unwrap();
    let copy = killed_after(|p| l.env.command(p, &l.repo), COMMAND_TIMEOUT)
        .arg(BIN)
        .args(["ledger", "copy", "--to", &url, "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    wait_until("the copy reaches the writers' lock", deadline, || {
        a_session_waits_for_a_lock(&db)
    });

    // Meanwhile the user goes on working: fix-login is torn down and `next` spawned into its
    // slot, on the laptop's ledger.
    l.env
        .hand(&l.repo, &["teardown", "fix-login", "--force"])
        .ok();
    let next = spawn(&l.env, &l.repo, "next", &[]);
    assert_eq!(path_of(&next), l.slot, "next got fix-login's slot");
    let stamped = stamp_of(&l.env, &l.slot);

    writer.batch_execute("ROLLBACK").unwrap();
    let copied = finish(copy);
    assert_eq!(copied.code, 0, "{}{}", copied.stdout, copied.stderr);

    // The copy wrote what it had read (fix-login, live then), but left the slot's new stamp
    // alone: next's lease is on the laptop's ledger, not the team's.
    assert_eq!(
        stamp_of(&l.env, &l.slot),
        stamped,
        "the new stamp was rewritten"
    );
    assert!(
        stamped.contains(&format!("lease_id={}", next["lease_id"].as_str().unwrap())),
        "{stamped}"
    );
    let json = copied.json();
    let api_slot = path_of(&l.api);
    assert_eq!(
        json["restamped"],
        serde_json::json!([api_slot]),
        "the other slot's stamp now names the team ledger: {json:#}"
    );
    let warning = copied
        .stderr
        .lines()
        .find(|line| line.contains(&l.slot.display().to_string()))
        .unwrap_or_else(|| panic!("no word of the slot:\n{}", copied.stderr));
    for part in [
        "leased again while the copy ran",
        "task next stays on the file ledger",
        "fix-login",
    ] {
        assert!(warning.contains(part), "no {part:?} in {warning:?}");
    }
}

/// Two `ledger copy --to` at once: both read the same stamps before either wrote; the one that
/// rewrites them second found them moved by the other and warned, for every slot, that it was
/// "leased again while the copy ran" (issue 22 item 10). Nothing was leased again: no warning.
#[test]
fn two_copies_at_once_never_warn_of_a_slot_leased_again() {
    let db = pg::database();
    let url = db.tcp_url();
    let l = laptop();
    git_hand::ledger::Ledger::open_creating(ServerUrl::parse(&url).unwrap()).unwrap();
    // Both copies read the laptop's ledger and stamps, then wait at the team ledger's writers'
    // lock, which this test holds until both are there.
    let mut writer = postgres::Client::connect(&db.url(), postgres::NoTls).unwrap();
    writer
        .batch_execute("BEGIN; UPDATE clock SET max_now = max_now")
        .unwrap();
    let start = || {
        killed_after(|p| l.env.command(p, &l.repo), COMMAND_TIMEOUT)
            .arg(BIN)
            .args(["ledger", "copy", "--to", &url, "--json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let waiting = || {
        db.psql(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
             AND application_name = 'git-hand' AND wait_event_type = 'Lock'",
        )
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    let first = start();
    wait_until("the first copy reaches the lock", deadline, || {
        waiting() == "1"
    });
    let second = start();
    wait_until("the second copy reaches the lock", deadline, || {
        waiting() == "2"
    });
    writer.batch_execute("ROLLBACK").unwrap();
    for copied in [finish(first), finish(second)] {
        assert_eq!(copied.code, 0, "{}{}", copied.stdout, copied.stderr);
        assert!(
            !copied.stderr.contains("leased again"),
            "a false warning:\n{}",
            copied.stderr
        );
    }
    assert!(
        stamp_of(&l.env, &l.slot).contains("postgres"),
        "{}",
        stamp_of(&l.env, &l.slot)
    );
}
