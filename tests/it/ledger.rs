//! The ledger file: creation, permissions, migrations, refusal of a newer schema.

use std::os::unix::fs::PermissionsExt;

use git_hand::ledger::schema::{self, MIGRATIONS, Migration};
use git_hand::ledger::{
    By, Durability, LATEST_VERSION, Ledger, LedgerError, RepoId, Resource, Retry,
};

use crate::support::TestEnv;

fn user_version(path: &std::path::Path) -> i64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap()
}

#[test]
fn fresh_ledger_is_created_at_the_latest_version_private_and_in_wal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deep/er/ledger.sqlite");
    Ledger::open_creating(&path).unwrap();
    assert_eq!(user_version(&path), LATEST_VERSION);
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(path.parent().unwrap()), 0o700);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let journal: String = conn
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(journal, "wal");
    let migrated: i64 = conn
        .query_row(
            "SELECT count(*) FROM events WHERE kind = 'migrated'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(migrated, 0, "a fresh ledger is created, not migrated");
}

#[test]
fn old_ledger_with_live_rows_is_migrated_and_its_rows_keep_working() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    schema::create_at_version(&path, 1).unwrap();
    assert_eq!(user_version(&path), 1);
    // A version-1 binary granted a lease: write it the way version 1 did.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "INSERT INTO resources (kind, key, last_token) VALUES ('issue', 'ns#1', 4);
         INSERT INTO tenures (lease_id, resource_id, token, holder, acquired_at)
         VALUES ('0123456789abcdef0123456789abcdef', 1, 4, 'alice', 1000);",
    )
    .unwrap();
    drop(conn);
    let mut ledger = Ledger::open_creating(&path).unwrap();
    assert_eq!(user_version(&path), LATEST_VERSION);
    let res = Resource::issue("ns", "1");
    let live = ledger.read(|v| v.current(&res)).unwrap().unwrap();
    assert_eq!((live.holder.as_str(), live.token), ("alice", 4));
    ledger
        .write(|tx| tx.release(&res, By::Holder("alice")))
        .unwrap();
    let next = ledger.write(|tx| tx.acquire(&res, "bob", None)).unwrap();
    match next {
        git_hand::ledger::Acquire::Acquired { tenure, .. } => assert_eq!(tenure.token, 5),
        other => panic!("{other:?}"),
    }
}

#[test]
fn ledger_newer_than_the_binary_is_refused_and_left_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    Ledger::open_creating(&path).unwrap();
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", LATEST_VERSION + 1)
            .unwrap();
        conn.pragma_update(None, "journal_mode", "DELETE").unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let err = Ledger::open_creating(&path).unwrap_err();
    match &err {
        LedgerError::TooNew {
            found, supported, ..
        } => {
            assert_eq!((*found, *supported), (LATEST_VERSION + 1, LATEST_VERSION));
        }
        other => panic!("expected TooNew, got {other:?}"),
    }
    let message = err.to_string();
    assert!(
        message.contains(&format!("version {}", LATEST_VERSION + 1))
            && message.contains("upgrade git-hand"),
        "{message}"
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the ledger must be left byte-identical"
    );
    assert!(Ledger::open(&path, git_hand::ledger::Mode::Read).is_err());
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn the_binary_refuses_a_newer_ledger_with_exit_3_naming_both_versions() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    env.hand(&repo, &["lease", "release", "0"]).ok(); // creates the ledger
    {
        let conn = rusqlite::Connection::open(env.ledger()).unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
    }
    let run = env.hand(&repo, &["lease", "acquire", "1"]).code(3);
    assert!(
        run.stderr.contains("version 99")
            && run.stderr.contains(&format!("version {LATEST_VERSION}")),
        "{}",
        run.stderr
    );
}

#[test]
fn a_failing_migration_step_leaves_the_version_where_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    schema::create_at_version(&path, 1).unwrap();
    let broken = [
        MIGRATIONS[0],
        Migration {
            version: 2,
            sql: "CREATE TABLE half_done (x); INSERT INTO no_such_table VALUES (1);",
        },
    ];
    let conn = rusqlite::Connection::open(&path).unwrap();
    let err = schema::migrate_with(&conn, &path, &broken).unwrap_err();
    assert!(
        matches!(err, LedgerError::Migration { version: 2, .. }),
        "{err:?}"
    );
    assert_eq!(user_version(&path), 1);
    let half: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = 'half_done'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(half, 0, "the failed step was rolled back whole");
}

#[test]
fn eight_processes_opening_an_old_ledger_migrate_it_once() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    std::fs::create_dir_all(env.ledger().parent().unwrap()).unwrap();
    schema::create_at_version(&env.ledger(), 1).unwrap();
    let openers = (0..8)
        .map(|_| {
            let mut c = env.timed(crate::support::BIN, &repo);
            c.args(["lease", "list", "--json"]);
            c
        })
        .collect();
    env.all_at_once(openers);
    assert_eq!(user_version(&env.ledger()), LATEST_VERSION);
    let conn = rusqlite::Connection::open(env.ledger()).unwrap();
    let steps: Vec<String> = conn
        .prepare("SELECT detail FROM events WHERE kind = 'migrated' ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let want: Vec<String> = (2..=LATEST_VERSION)
        .map(|v| format!("schema version {v}"))
        .collect();
    assert_eq!(steps, want, "each step applied exactly once");
}

#[test]
fn tenures_and_events_cannot_be_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let mut ledger = Ledger::open_creating(&path).unwrap();
    ledger
        .write(|tx| tx.acquire(&Resource::issue("ns", "1"), "alice", None))
        .unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    assert!(conn.execute("DELETE FROM tenures", []).is_err());
    assert!(conn.execute("UPDATE tenures SET token = 1", []).is_err());
    assert!(conn.execute("DELETE FROM events", []).is_err());
    assert!(conn.execute("UPDATE events SET kind = 'x'", []).is_err());
    assert!(
        conn.execute("INSERT INTO tenures (lease_id, resource_id, token, holder, acquired_at) VALUES ('x', 1, 2, 'b', 0)", []).is_err(),
        "a second held tenure of one resource is refused by the partial unique index"
    );
}

#[test]
fn a_busy_ledger_reports_busy_instead_of_hanging_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let mut ledger = Ledger::open_creating(&path).unwrap();
    let blocker = rusqlite::Connection::open(&path).unwrap();
    blocker.execute_batch("BEGIN IMMEDIATE").unwrap();
    ledger
        .set_busy_timeout(std::time::Duration::from_millis(50))
        .unwrap();
    let res = Resource::issue("ns", "1");
    let err = ledger
        .write(|tx| tx.acquire(&res, "alice", None))
        .unwrap_err();
    assert!(matches!(err, LedgerError::Busy), "{err:?}");
    blocker.execute_batch("ROLLBACK").unwrap();
    assert_eq!(ledger.read(|v| v.current(&res)).unwrap(), None);
    assert!(
        ledger.write(|tx| tx.acquire(&res, "alice", None)).is_ok(),
        "it works once the other writer is gone"
    );
}

#[test]
fn a_writer_queued_behind_another_gets_the_lock_when_it_is_released() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let mut ledger = Ledger::open_creating(&path).unwrap();
    let blocker = rusqlite::Connection::open(&path).unwrap();
    blocker.execute_batch("BEGIN IMMEDIATE").unwrap();
    let release = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(100));
        blocker.execute_batch("COMMIT").unwrap();
    });
    let res = Resource::issue("ns", "1");
    let got = ledger.write(|tx| tx.acquire(&res, "alice", None));
    release.join().unwrap();
    assert!(
        matches!(got, Ok(git_hand::ledger::Acquire::Acquired { .. })),
        "the waiting writer went on once the lock was free: {got:?}"
    );
}

#[test]
fn a_ledger_turned_out_of_wal_mode_is_switched_back_and_still_commits() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    drop(Ledger::open_creating(&path).unwrap());
    let other = rusqlite::Connection::open(&path).unwrap();
    let mode: String = other
        .query_row("PRAGMA journal_mode = DELETE", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "delete");
    drop(other);
    let mut ledger = Ledger::open_creating(&path).unwrap();
    let res = Resource::issue("ns", "1");
    let (_, syncing) = ledger
        .write_with(Durability::SyncedMeanwhile, Retry::Never, |tx| {
            tx.acquire(&res, "alice", None)
        })
        .unwrap();
    syncing.wait().unwrap();
    let check = rusqlite::Connection::open(&path).unwrap();
    let mode: String = check
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal", "git-hand put the ledger back in WAL mode");
}

#[test]
fn a_commit_syncing_meanwhile_is_visible_at_once_and_waited_for_before_use() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let mut ledger = Ledger::open_creating(&path).unwrap();
    let res = Resource::issue("ns", "1");
    let (acquired, syncing) = ledger
        .write_with(Durability::SyncedMeanwhile, Retry::Never, |tx| {
            tx.acquire(&res, "alice", None)
        })
        .unwrap();
    let git_hand::ledger::Acquire::Acquired { tenure, .. } = acquired else {
        panic!("not acquired: {acquired:?}");
    };
    // Another process sees the lease before the fsync finished: nobody else can take it.
    let mut other = Ledger::open_creating(&path).unwrap();
    let seen = other.read(|v| v.current(&res)).unwrap();
    assert_eq!(seen.map(|t| t.lease_id), Some(tenure.lease_id));
    syncing.wait().unwrap();
}

/// The size of the WAL after 300 short-lived processes each ran `cycle` (an acquire and a
/// release of one issue by holder `h<i>`) on the ledger at `path`.
fn wal_after_300_processes(
    path: &std::path::Path,
    cycle: impl Fn(&mut Ledger, &Resource, &str),
) -> u64 {
    let res = Resource::issue("ns", "1");
    for i in 0..300 {
        let mut ledger = Ledger::open_creating(path).unwrap();
        cycle(&mut ledger, &res, &format!("h{i}"));
    }
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    std::fs::metadata(wal).map_or(0, |m| m.len())
}

/// Spawn's and teardown's writes are relaxed or synced on another thread, which also truncates
/// the WAL: it must stay short with no durable inline commit at all.
#[test]
fn the_wal_stays_short_when_every_write_syncs_meanwhile_or_is_relaxed() {
    let dir = tempfile::tempdir().unwrap();
    let wal = wal_after_300_processes(&dir.path().join("ledger.sqlite"), |ledger, res, holder| {
        let (_, syncing) = ledger
            .write_with(Durability::SyncedMeanwhile, Retry::Never, |tx| {
                tx.acquire(res, holder, None)
            })
            .unwrap();
        syncing.wait().unwrap();
        ledger
            .write_with(Durability::Relaxed, Retry::Never, |tx| {
                tx.release(res, By::Holder(holder))
            })
            .map(|(out, _)| out)
            .unwrap();
    });
    assert!(wal < 1024 * 1024, "the WAL grew to {wal} bytes");
}

/// Every git-hand process is the ledger's first connection and rebuilds the WAL index from the
/// whole WAL, so the WAL must not grow with the number of processes that wrote to it.
#[test]
fn the_wal_stays_short_across_many_short_lived_writers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let wal = wal_after_300_processes(&path, |ledger, res, holder| {
        ledger.write(|tx| tx.acquire(res, holder, None)).unwrap();
        ledger
            .write(|tx| tx.release(res, By::Holder(holder)))
            .unwrap();
    });
    assert!(wal < 1024 * 1024, "the WAL grew to {wal} bytes");
    let res = Resource::issue("ns", "1");
    let mut ledger = Ledger::open_creating(&path).unwrap();
    let last = ledger.write(|tx| tx.acquire(&res, "last", None)).unwrap();
    assert!(
        matches!(last, git_hand::ledger::Acquire::Acquired { tenure, .. } if tenure.token == 301)
    );
}

#[test]
fn a_ledger_from_every_past_version_opens_migrated_to_the_latest() {
    for version in 1..LATEST_VERSION {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ledger.sqlite");
        schema::create_at_version(&path, version).unwrap();
        assert_eq!(user_version(&path), version);
        let mut ledger = Ledger::open_creating(&path).unwrap();
        assert_eq!(
            user_version(&path),
            LATEST_VERSION,
            "from version {version}"
        );
        let steps: Vec<String> = ledger
            .read(|v| v.events(100))
            .unwrap()
            .into_iter()
            .filter(|e| e.kind == "migrated")
            .filter_map(|e| e.detail)
            .collect();
        let want: Vec<String> = (version + 1..=LATEST_VERSION)
            .rev()
            .map(|v| format!("schema version {v}"))
            .collect();
        assert_eq!(steps, want, "from version {version}");
        let res = Resource::issue("ns", "1");
        assert!(matches!(
            ledger.write(|tx| tx.acquire(&res, "alice", None)).unwrap(),
            git_hand::ledger::Acquire::Acquired { .. }
        ));
    }
}

#[test]
fn a_version_3_task_migrates_without_a_remote_and_is_fenced_by_its_repository() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    schema::create_at_version(&path, 3).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "INSERT INTO repos (id, common_dir, created_at) VALUES ('r1', '/repo/.git', 1);
         INSERT INTO resources (kind, key, last_token) VALUES ('worktree', '/pool/1/repo', 1);
         INSERT INTO tenures (lease_id, resource_id, token, holder, acquired_at)
         VALUES ('0123456789abcdef0123456789abcdef', 1, 1, 'alice', 1);
         INSERT INTO slots (resource_id, repo_id, n, path, created_at)
         VALUES (1, 'r1', 1, '/pool/1/repo', 1);
         INSERT INTO tasks (repo_id, name, state, slot_path, lease_id, branch, holder, created_at,
                            updated_at)
         VALUES ('r1', 'a', 'active', '/pool/1/repo', '0123456789abcdef0123456789abcdef',
                 'hand/a', 'alice', 1, 1);",
    )
    .unwrap();
    drop(conn);
    let mut ledger = Ledger::open_creating(&path).unwrap();
    let task = ledger
        .read(|v| v.open_task(&RepoId::new("r1"), "a"))
        .unwrap()
        .unwrap();
    assert_eq!(task.remote, None);
    let mut fenced = |remote: &str, repo: Option<&str>| {
        ledger
            .read(|v| {
                v.open_tasks_on_pushed_branch(remote, repo.map(RepoId::new).as_ref(), "hand/a")
            })
            .unwrap()
            .len()
    };
    assert_eq!(
        fenced("example.com/o/r", Some("r1")),
        1,
        "its own repository"
    );
    assert_eq!(fenced("example.com/o/r", Some("r2")), 0, "another clone");
    assert_eq!(fenced("example.com/o/r", None), 0);
}

#[test]
fn a_version_4_task_migrates_without_a_base_ref_and_keeps_its_other_columns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    schema::create_at_version(&path, 4).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "INSERT INTO repos (id, common_dir, created_at) VALUES ('r1', '/repo/.git', 1);
         INSERT INTO tasks (repo_id, name, state, branch, base_oid, holder, created_at,
                            updated_at, remote)
         VALUES ('r1', 'a', 'active', 'hand/a', 'abc', 'alice', 1, 1, 'example.com/o/r');",
    )
    .unwrap();
    drop(conn);
    let mut ledger = Ledger::open_creating(&path).unwrap();
    assert_eq!(user_version(&path), LATEST_VERSION);
    let task = ledger
        .read(|v| v.open_task(&RepoId::new("r1"), "a"))
        .unwrap()
        .unwrap();
    assert_eq!(task.base_ref, None);
    assert_eq!(task.base_oid.as_deref(), Some("abc"));
    assert_eq!(task.remote.as_deref(), Some("example.com/o/r"));
}

#[test]
fn a_version_5_ledger_migrates_to_one_machine_and_keeps_its_repos_slots_and_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    schema::create_at_version(&path, 5).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "INSERT INTO repos (id, common_dir, created_at) VALUES ('r1', '/repo/.git', 1);
         INSERT INTO resources (id, kind, key, last_token) VALUES (7, 'worktree', '/pool/r-1/1', 3);
         INSERT INTO slots (resource_id, repo_id, n, path, created_at)
         VALUES (7, 'r1', 1, '/pool/r-1/1', 1);
         INSERT INTO tasks (repo_id, name, state, slot_path, branch, base_oid, holder, created_at,
                            updated_at, remote, base_ref)
         VALUES ('r1', 'a', 'active', '/pool/r-1/1', 'hand/a', 'abc', 'alice', 1, 1,
                 'example.com/o/r', 'refs/heads/main');",
    )
    .unwrap();
    drop(conn);
    let mut ledger = Ledger::open_creating(&path).unwrap();
    assert_eq!(user_version(&path), LATEST_VERSION);
    let (repo, slot, task) = ledger
        .read(|v| {
            Ok((
                v.repo_by_dir(std::path::Path::new("/repo/.git"))?,
                v.slot_by_path(&git_hand::ledger::WorktreeKey::from_canonical(
                    std::path::Path::new("/pool/r-1/1"),
                ))?,
                v.open_task(&RepoId::new("r1"), "a")?,
            ))
        })
        .unwrap();
    assert_eq!(repo.unwrap().id, RepoId::new("r1"));
    let slot = slot.unwrap();
    assert_eq!((slot.n, slot.machine.as_str()), (1, ""));
    let task = task.unwrap();
    assert_eq!(task.machine, "");
    assert_eq!(task.base_ref.as_deref(), Some("refs/heads/main"));
    // A file ledger is one machine: the slot's resource is keyed by its path, as before, and
    // its token history continues.
    assert_eq!(slot.resource().key, "/pool/r-1/1");
    let last = ledger.read(|v| v.last_token(&slot.resource())).unwrap();
    assert_eq!(last, 3);
}
