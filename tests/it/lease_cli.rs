//! `git hand lease` and `git hand log` end to end: the real binary, real repositories.

use crate::support::TestEnv;

#[test]
fn release_frees_the_issue_and_bumps_the_next_tenure() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let a = env
        .hand(
            &repo,
            &["lease", "acquire", "42", "--holder", "alice", "--json"],
        )
        .ok();
    let a: serde_json::Value = serde_json::from_str(&a).unwrap();
    assert_eq!(a["outcome"], "acquired");
    assert_eq!(a["token"], 1);
    let held = env
        .hand(
            &repo,
            &["lease", "acquire", "42", "--holder", "bob", "--json"],
        )
        .code(3);
    assert_eq!(held.json()["outcome"], "held");
    assert_eq!(held.json()["holder"], "alice");
    env.hand(&repo, &["lease", "release", "42", "--holder", "alice"])
        .ok();
    let b = env
        .hand(
            &repo,
            &["lease", "acquire", "42", "--holder", "bob", "--json"],
        )
        .code(0)
        .json();
    assert_eq!(b["token"], 2);
    assert_ne!(b["lease_id"], a["lease_id"]);
}

#[test]
fn two_clones_of_one_remote_see_the_same_issue_lease() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let origin = env.path("work/r-origin.git");
    let work = env.path("work");
    env.git(&work, &["clone", "-q", origin.to_str().unwrap(), "clone2"]);
    let clone2 = work.join("clone2");
    env.hand(&repo, &["lease", "acquire", "7", "--holder", "alice"])
        .ok();
    let seen = env.hand(&clone2, &["lease", "current", "7", "--json"]).ok();
    let seen: serde_json::Value = serde_json::from_str(&seen).unwrap();
    assert_eq!(seen["outcome"], "live");
    assert_eq!(seen["holder"], "alice");
    env.hand(&clone2, &["lease", "acquire", "7", "--holder", "bob"])
        .code(3);
}

#[test]
fn lease_json_has_the_documented_fields() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let v = env
        .hand(&repo, &["lease", "acquire", "#9", "--ttl", "30m", "--json"])
        .code(0)
        .json();
    for field in [
        "outcome",
        "resource",
        "namespace",
        "issue",
        "lease_id",
        "token",
        "holder",
        "acquired_at",
        "renewed_at",
        "expires_at",
        "ended_at",
        "end_reason",
        "fresh",
        "superseded",
    ] {
        assert!(v.get(field).is_some(), "missing {field} in {v:#}");
    }
    assert_eq!(v["issue"], "9");
    assert_eq!(
        v["holder"],
        "tester@".to_string() + v["holder"].as_str().unwrap().split('@').nth(1).unwrap()
    );
    let lease_id = v["lease_id"].as_str().unwrap();
    assert!(git_hand::ids::is_lease_id(lease_id));
    let expires = v["expires_at"].as_str().unwrap();
    assert!(
        expires.ends_with('Z') && expires.len() == 24,
        "RFC 3339 UTC: {expires}"
    );
    let docs =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/cli.md")).unwrap();
    for field in v.as_object().unwrap().keys() {
        assert!(
            docs.contains(&format!("`{field}`")),
            "docs/cli.md does not document `{field}`"
        );
    }
    let list = env.hand(&repo, &["lease", "list", "--json"]).ok();
    let list: serde_json::Value = serde_json::from_str(&list).unwrap();
    assert_eq!(list["leases"][0]["lease_id"], lease_id);
    let log = env.hand(&repo, &["log", "--json", "--limit", "1"]).ok();
    let log: serde_json::Value = serde_json::from_str(&log).unwrap();
    assert_eq!(log["events"][0]["kind"], "acquired");
}

#[test]
fn bad_ttl_and_bad_issue_are_usage_errors_that_change_nothing() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    env.hand(&repo, &["lease", "acquire", "1", "--ttl", "5x"])
        .code(2);
    env.hand(&repo, &["lease", "acquire", "a b"]).code(2);
    let log = env.hand(&repo, &["log", "--json"]).ok();
    assert!(!log.contains("\"acquired\""), "{log}");
}

#[test]
fn renew_by_a_stranger_names_the_holder_and_exits_3() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    env.hand(
        &repo,
        &["lease", "acquire", "5", "--holder", "alice", "--ttl", "1h"],
    )
    .ok();
    let run = env
        .hand(&repo, &["lease", "renew", "5", "--holder", "bob"])
        .code(3);
    assert!(run.stderr.contains("alice"), "{}", run.stderr);
    assert!(
        run.stderr.contains("hint: git hand lease current 5"),
        "{}",
        run.stderr
    );
}

/// 8 processes × 50 acquire/release cycles on one issue: every token issued exactly once,
/// strictly increasing in commit order, never two live holders, no busy failure.
#[test]
fn concurrent_acquire_release_issues_every_token_once() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    env.hand(&repo, &["lease", "release", "0"]).ok(); // create the ledger once, up front
    let script = r#"
        i=0
        while [ $i -lt 50 ]; do
            out=$(git-hand lease acquire 1 --holder "$H" --json); rc=$?
            case $rc in
                0) git-hand lease release 1 --holder "$H" >/dev/null || { echo "release failed" >&2; exit 1; }
                   i=$((i+1));;
                3) case "$out" in *'"held"'*) ;; *) echo "unexpected: $out" >&2; exit 1;; esac;;
                *) echo "acquire exit $rc: $out" >&2; exit 1;;
            esac
        done
    "#;
    let workers = (0..8)
        .map(|n| {
            let mut c = env.timed("sh", &repo);
            c.args(["-c", script]).env("H", format!("worker{n}"));
            c
        })
        .collect();
    env.all_at_once(workers);
    let conn = rusqlite::Connection::open(env.ledger()).unwrap();
    let tokens: Vec<i64> = conn
        .prepare("SELECT token FROM events WHERE kind = 'acquired' ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        tokens,
        (1..=400).collect::<Vec<i64>>(),
        "tokens strictly increasing in commit order"
    );
    // Never two live holders: in commit order, every acquisition is followed by its release.
    let kinds: Vec<String> = conn
        .prepare("SELECT kind FROM events WHERE kind IN ('acquired', 'released') ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for pair in kinds.chunks(2) {
        assert_eq!(pair, ["acquired", "released"]);
    }
    let held: i64 = conn
        .query_row(
            "SELECT count(*) FROM tenures WHERE ended_at IS NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(held, 0);
    let distinct: i64 = conn
        .query_row("SELECT count(DISTINCT lease_id) FROM tenures", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(distinct, 400);
}

#[test]
fn reading_verbs_never_create_the_ledger() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    for args in [
        &["list"][..],
        &["log"],
        &["lease", "current", "1"],
        &["lease", "list"],
        &["status"],
        &[],
    ] {
        let run = env.hand(&repo, args);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    }
    assert!(!env.ledger().exists(), "a read created the ledger");
    let free = env.hand(&repo, &["lease", "current", "1", "--json"]).json();
    assert_eq!(free["outcome"], "free");
}
