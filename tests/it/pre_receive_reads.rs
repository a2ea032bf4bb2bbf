//! A push of 100 refs is judged in one ledger read (issue 15, Tests): the server's pre-receive
//! hook, on a team ledger, reads everything it judges in one transaction whatever the number of
//! refs, and writes only to record a refusal. Counted on the server, with real parts: the test's
//! database logs every statement its sessions run (`log_statement = 'all'`, that database only)
//! and the test reads back what the hook's connection sent (`pg::Database::logged_statements`).
//!
//! What a hook's connection runs on a team ledger (`Team::open_existing`, then `Team::read`):
//! - opening it, outside any transaction: the schema's version check, one statement (a hook
//!   never migrates; `lock_timeout`, for a write should the push be refused, rode in the
//!   connection's startup packet);
//! - the read: `START TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`, the snapshot's
//!   `now` from `clock`, the judged rows, `COMMIT`;
//! - a refusal only: one write, `START TRANSACTION ISOLATION LEVEL READ COMMITTED`, the
//!   writers' lock (`UPDATE clock`), the event (`INSERT INTO events`), `COMMIT`.

use crate::pg::{self, Database};
use crate::pre_receive::{options, push_past_hooks};
use crate::support::{TestEnv, path_of, remote_oid, spawn};

/// The statements one push's pre-receive hook ran, as the server logged them.
#[derive(Debug)]
struct HookRan {
    /// Those outside any transaction, in order (opening the ledger).
    opening: Vec<String>,
    /// Each transaction's statements, from `START TRANSACTION` to `COMMIT`.
    transactions: Vec<Vec<String>>,
}

impl HookRan {
    /// What git-hand's sessions on `db` ran since byte `from` of the server's log: one session
    /// (one hook, one connection), its statements split into transactions.
    fn since(db: &Database, from: u64) -> HookRan {
        let logged = db.logged_statements(from, "git-hand");
        let sessions: std::collections::BTreeSet<&str> =
            logged.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(sessions.len(), 1, "one hook, one connection: {logged:#?}");
        let mut ran = HookRan {
            opening: Vec::new(),
            transactions: Vec::new(),
        };
        let mut open: Option<Vec<String>> = None;
        for (_, statement) in logged {
            let starts = statement.starts_with("START TRANSACTION");
            let commits = statement == "COMMIT";
            match open.as_mut() {
                None if starts => open = Some(vec![statement]),
                None => ran.opening.push(statement),
                Some(tx) => {
                    assert!(!starts, "a transaction inside another: {tx:#?}");
                    tx.push(statement);
                    if commits {
                        ran.transactions.extend(open.take());
                    }
                }
            }
        }
        assert_eq!(open, None, "a transaction never committed");
        ran
    }

    /// The one read transaction: asserts the opening is the connection's one statement and
    /// that the first transaction is a read-only snapshot, and returns that transaction.
    fn the_read(&self) -> &[String] {
        let opening: Vec<&str> = self.opening.iter().map(|s| s.as_str()).collect();
        assert!(
            matches!(
                opening[..],
                [version] if version == "SELECT version FROM ledger_meta"
            ),
            "opening the ledger: {opening:#?}"
        );
        let read = &self.transactions[0];
        assert_eq!(
            read[0],
            "START TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"
        );
        read
    }
}

/// `HEAD` to each of `branches` and to 100 - `branches.len()` new unrelated branches under
/// `prefix/`: 100 refs in one push.
fn hundred_refs(branches: &[&str], prefix: &str) -> Vec<String> {
    let mut refs: Vec<String> = branches
        .iter()
        .map(|b| format!("HEAD:refs/heads/{b}"))
        .collect();
    let others = 100 - refs.len();
    refs.extend((0..others).map(|i| format!("HEAD:refs/heads/{prefix}/{i:02}")));
    refs
}

#[test]
fn a_push_of_100_refs_is_judged_in_one_ledger_read() {
    let db = pg::database();
    db.log_statements();
    let env = TestEnv::on_team_ledger(&db.url());
    let repo = env.repo("app");
    env.hand(&repo, &["install"]).ok();
    let origin = env.path("work/app-origin.git").canonicalize().unwrap();
    env.hand(&origin, &["install", "--server"]).ok();
    // Three live tasks on this remote: each push looks up all three, and the tenure of each
    // whose branch it updates.
    let a = spawn(&env, &repo, "a", &[]);
    for live in ["b", "c"] {
        spawn(&env, &repo, live, &[]);
    }
    let slot = path_of(&a);
    let push = |refs: &[String]| {
        let refs: Vec<&str> = refs.iter().map(String::as_str).collect();
        let from = db.log_len();
        let run = push_past_hooks(&env, &slot, &origin, &options(&a, "a"), &refs);
        (run, HookRan::since(&db, from))
    };

    // One ref, a's branch under a's lease: the read a push of 100 refs is held to.
    env.commit(&slot, "a.txt", "a's work\n");
    let (run, one) = push(&["HEAD:refs/heads/hand/a".to_string()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(one.transactions.len(), 1, "{one:#?}");

    // 100 refs: a's branch under its lease and 99 unrelated ones. Allowed: one read, no write,
    // and the same statements as the push of one ref (none per ref).
    let second = env.commit(&slot, "a.txt", "more of a's work\n");
    let (run, hundred) = push(&hundred_refs(&["hand/a"], "unrelated"));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(remote_oid(&env, &origin, "hand/a"), Some(second.clone()));
    assert_eq!(
        remote_oid(&env, &origin, "unrelated/98").as_deref(),
        Some(second.as_str())
    );
    assert_eq!(
        hundred.transactions.len(),
        1,
        "one read, no write: {hundred:#?}"
    );
    assert_eq!(hundred.the_read(), one.the_read());
    assert_eq!(hundred.opening, one.opening);

    // 100 refs that update live task b's branch too, under a's lease: refused after the same
    // one read, and the refusal is its one write (the event).
    env.commit(&slot, "a.txt", "a's work on b's branch\n");
    let (run, refused) = push(&hundred_refs(&["hand/a", "hand/b"], "refused"));
    assert_ne!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("branch hand/b belongs to live task b"),
        "{}",
        run.stderr
    );
    assert_eq!(
        refused.transactions.len(),
        2,
        "one read, one write: {refused:#?}"
    );
    refused.the_read();
    let write: Vec<&str> = refused.transactions[1].iter().map(|s| s.as_str()).collect();
    assert!(
        matches!(
            write[..],
            ["START TRANSACTION ISOLATION LEVEL READ COMMITTED", lock, event, "COMMIT"]
                if lock.starts_with("UPDATE clock") && event.starts_with("INSERT INTO events")
        ),
        "the refusal's write: {write:#?}"
    );
    assert_eq!(
        db.psql("SELECT count(*) FROM events WHERE kind = 'push-refused'"),
        "1"
    );
}
