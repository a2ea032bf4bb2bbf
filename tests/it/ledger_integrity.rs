//! The ledger is never silently replaced, damage is diagnosed instead of read as empty, a copy
//! keeps the rows that live only in the WAL, and the file stays private (issue 10: 4, 8, 9).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{Run, TestEnv, a_ledger_of_many_pages, mode, path_of, spawn};

/// `ledger.sqlite-wal`, `ledger.sqlite-shm`.
fn sidecar(ledger: &Path, suffix: &str) -> PathBuf {
    let mut s = ledger.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn remove_sidecars(ledger: &Path) {
    for s in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(sidecar(ledger, s));
    }
}

/// A repository with one live task (slot 1, token 1): a ledger with something to lose.
fn with_a_task() -> (TestEnv, PathBuf, Value) {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let a = spawn(&env, &repo, "a", &[]);
    assert_eq!(a["token"], 1);
    (env, repo, a)
}

/// A refusal that names the ledger, says nothing changed and gives the way out.
#[track_caller]
fn assert_refused_naming(run: &Run, ledger: &Path) {
    assert_eq!(
        run.code, 3,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert!(
        run.stderr.contains(&ledger.display().to_string()),
        "the error names the ledger: {}",
        run.stderr
    );
    assert!(run.stderr.contains("nothing was changed"), "{}", run.stderr);
    assert!(run.stderr.contains("git hand doctor"), "{}", run.stderr);
}

#[test]
fn an_emptied_ledger_is_refused_by_every_verb_and_never_recreated() {
    let (env, repo, _) = with_a_task();
    let ledger = env.ledger();
    std::fs::write(&ledger, b"").unwrap();
    remove_sidecars(&ledger);
    let run = env.hand(&repo, &["spawn", "b"]);
    assert_refused_naming(&run, &ledger);
    assert!(
        run.stderr.contains("0 bytes"),
        "says what it found: {}",
        run.stderr
    );
    assert_refused_naming(&env.hand(&repo, &["lease", "acquire", "7"]), &ledger);
    assert_refused_naming(&env.hand(&repo, &["list"]), &ledger);
    assert_refused_naming(&env.hand(&repo, &["log"]), &ledger);
    assert_eq!(
        std::fs::metadata(&ledger).unwrap().len(),
        0,
        "left as found"
    );
    assert!(!sidecar(&ledger, "-wal").exists());
    let doctor = env.hand(&repo, &["doctor"]).code(3);
    assert!(
        doctor.stdout.contains("ledger-damaged"),
        "{}",
        doctor.stdout
    );
    assert!(!doctor.stdout.contains("no problems found"));
    assert!(
        !doctor.stderr.contains("hint: git hand doctor"),
        "doctor never sends the user to itself: {}",
        doctor.stderr
    );
    assert_eq!(std::fs::metadata(&ledger).unwrap().len(), 0);
}

#[test]
fn an_emptied_ledger_beside_its_wal_is_refused_and_both_are_left_as_found() {
    let (env, repo, _) = with_a_task();
    let ledger = env.ledger();
    let wal = sidecar(&ledger, "-wal");
    assert!(wal.exists(), "git-hand keeps its WAL between processes");
    let wal_before = std::fs::read(&wal).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&ledger)
        .unwrap()
        .set_len(0)
        .unwrap();
    assert_refused_naming(&env.hand(&repo, &["spawn", "b"]), &ledger);
    assert_refused_naming(&env.hand(&repo, &["list"]), &ledger);
    assert_eq!(std::fs::metadata(&ledger).unwrap().len(), 0);
    assert_eq!(
        std::fs::read(&wal).unwrap(),
        wal_before,
        "the WAL is untouched"
    );
}

#[test]
fn a_ledger_shorter_than_a_page_is_refused_not_read_as_empty() {
    let (env, repo, _) = with_a_task();
    let ledger = env.ledger();
    std::fs::write(&ledger, b"{").unwrap();
    remove_sidecars(&ledger);
    let run = env.hand(&repo, &["spawn", "b"]);
    assert_refused_naming(&run, &ledger);
    assert!(run.stderr.contains("1 byte"), "{}", run.stderr);
    assert_eq!(std::fs::read(&ledger).unwrap(), b"{");
}

#[test]
fn pre_push_fails_closed_on_an_emptied_ledger_and_allows_only_where_there_is_none() {
    let (env, repo, a) = with_a_task();
    env.hand(&repo, &["install"]).ok();
    let slot = path_of(&a);
    env.commit(&slot, "a.txt", "x\n");
    env.git(&repo, &["switch", "-q", "-c", "mine"]);
    env.commit(&repo, "m.txt", "m\n");
    let ledger = env.ledger();
    std::fs::write(&ledger, b"").unwrap();
    remove_sidecars(&ledger);
    let from_slot = env.git_run(&slot, &["push", "origin", "HEAD"]);
    assert_ne!(from_slot.code, 0, "a stamped slot refuses");
    assert!(from_slot.stderr.contains("0 bytes"), "{}", from_slot.stderr);
    let unmanaged = env.git_run(&repo, &["push", "origin", "mine"]);
    assert_ne!(unmanaged.code, 0, "an emptied ledger is no absent ledger");
    // With no ledger at all, an unmanaged worktree pushes; the stamped slot still refuses.
    std::fs::remove_file(&ledger).unwrap();
    env.git_run(&repo, &["push", "-q", "origin", "mine"]).ok();
    assert_ne!(env.git_run(&slot, &["push", "origin", "HEAD"]).code, 0);
}

#[test]
fn a_missing_ledger_is_not_recreated_while_its_slots_and_stamps_remain() {
    let (env, repo, a) = with_a_task();
    let ledger = env.ledger();
    let slot = path_of(&a);
    std::fs::remove_file(&ledger).unwrap();
    remove_sidecars(&ledger);
    let run = env.hand(&repo, &["spawn", "b"]).code(3);
    assert!(
        run.stderr.contains(&slot.display().to_string()),
        "names what it found: {}",
        run.stderr
    );
    assert!(
        run.stderr.contains("git hand doctor --repair"),
        "{}",
        run.stderr
    );
    assert!(!ledger.exists(), "no ledger was created");
    env.hand(&repo, &["lease", "acquire", "7"]).code(3);
    env.hand(&repo, &["list"]).code(3);
    assert!(!ledger.exists());

    let doctor = env.hand(&repo, &["doctor", "--json"]).code(3).json();
    let problems = doctor["problems"].as_array().unwrap();
    assert_eq!(problems[0]["kind"], "ledger-missing", "{doctor:#}");
    assert!(!ledger.exists(), "doctor without --repair creates nothing");

    env.hand(&repo, &["doctor", "--repair"]).ok();
    let log = env.hand(&repo, &["log", "--json"]).ok();
    assert!(log.contains("repaired"), "{log}");
    // The slot is known again, in the same pool, and its token goes on from the stamp's.
    let b = spawn(&env, &repo, "b", &[]);
    assert_eq!(path_of(&b), slot, "the old pool and slot are used again");
    assert_eq!(b["token"], 2, "a token is never issued twice");
}

#[test]
fn doctor_repairs_an_emptied_ledger_by_moving_it_aside_and_continuing_the_tokens() {
    let (env, repo, a) = with_a_task();
    let ledger = env.ledger();
    std::fs::write(&ledger, b"").unwrap();
    remove_sidecars(&ledger);
    let repair = env.hand(&repo, &["doctor", "--repair"]).ok();
    assert!(repair.contains("repaired: ledger-damaged"), "{repair}");
    let kept: Vec<_> = std::fs::read_dir(ledger.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("ledger.sqlite.damaged-"))
        .collect();
    assert_eq!(kept.len(), 1, "the damaged file is kept aside: {kept:?}");
    let b = spawn(&env, &repo, "b", &[]);
    assert_eq!(path_of(&b), path_of(&a));
    assert_eq!(b["token"], 2);
}

#[test]
fn doctor_diagnoses_a_damaged_page_says_what_is_readable_and_how_to_copy_it() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let ledger = env.ledger();
    std::fs::create_dir_all(ledger.parent().unwrap()).unwrap();
    a_ledger_of_many_pages(&ledger);
    let len = std::fs::metadata(&ledger).unwrap().len();
    assert!(len >= 100 * 4096, "{len}");
    let mut bytes = std::fs::read(&ledger).unwrap();
    let middle = (len / 4096 / 2) as usize * 4096;
    bytes[middle..middle + 4096].fill(0xA5);
    std::fs::write(&ledger, &bytes).unwrap();

    let run = env.hand(&repo, &["doctor"]).code(3);
    assert!(run.stdout.contains("ledger-damaged"), "{}", run.stdout);
    assert!(
        run.stdout.contains("readable: repos 1,") || run.stdout.contains("readable: repos 0,"),
        "counts what it can: {}",
        run.stdout
    );
    assert!(
        run.stdout.contains("git hand doctor --backup"),
        "advises a copy that keeps the WAL: {}",
        run.stdout
    );
    assert!(
        !run.stderr.contains("hint: git hand doctor"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stdout.contains("--repair"),
        "--repair cannot mend it, so doctor does not offer it: {}",
        run.stdout
    );
    let json = env.hand(&repo, &["doctor", "--json"]).code(3).json();
    assert_eq!(json["problems"][0]["kind"], "ledger-damaged");
    assert!(
        json["problems"][0]["command"]
            .as_str()
            .unwrap()
            .starts_with("git hand doctor --backup "),
        "{json:#}"
    );
    assert_eq!(
        std::fs::read(&ledger).unwrap(),
        bytes,
        "diagnosis writes nothing"
    );
    // The advice works on the damaged ledger: the copy holds its pages, damage included.
    let advised = json["problems"][0]["command"].as_str().unwrap();
    let copy = advised.strip_prefix("git hand doctor --backup ").unwrap();
    env.hand(&repo, &["doctor", "--backup", copy]).ok();
    assert_eq!(std::fs::metadata(copy).unwrap().len(), len);
}

#[test]
fn a_wal_left_without_its_ledger_is_refused_never_replayed_into_a_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let mut ledger = git_hand::ledger::Ledger::open_creating(&path).unwrap();
    let res = git_hand::ledger::Resource::issue("ns", "1");
    ledger.write(|tx| tx.acquire(&res, "alice", None)).unwrap();
    drop(ledger);
    let wal = sidecar(&path, "-wal");
    assert!(std::fs::metadata(&wal).unwrap().len() > 0);
    std::fs::remove_file(&path).unwrap();
    let err = git_hand::ledger::Ledger::open_creating(&path).unwrap_err();
    assert!(
        matches!(err, git_hand::ledger::LedgerError::Damaged { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("missing"), "{err}");
    assert!(!path.exists(), "no ledger was created over the WAL");
    assert!(git_hand::ledger::Ledger::open(&path, git_hand::ledger::Mode::Read).is_err());
}

#[test]
fn doctor_on_a_file_that_is_no_database_diagnoses_it_instead_of_failing() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let ledger = env.ledger();
    std::fs::create_dir_all(ledger.parent().unwrap()).unwrap();
    std::fs::write(&ledger, vec![b'x'; 8192]).unwrap();
    let run = env.hand(&repo, &["doctor"]).code(3);
    assert!(run.stdout.contains("ledger-damaged"), "{}", run.stdout);
    assert!(
        run.stdout.contains("not an SQLite database"),
        "{}",
        run.stdout
    );
    assert!(
        !run.stderr.contains("hint: git hand doctor"),
        "{}",
        run.stderr
    );
}

#[test]
fn doctor_backup_copies_rows_that_live_only_in_the_wal() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    for issue in ["1", "2", "3"] {
        env.hand(&repo, &["lease", "acquire", issue]).ok();
    }
    let ledger = env.ledger();
    let count = |p: &Path| -> i64 {
        let conn = rusqlite::Connection::open(p).unwrap();
        conn.query_row("SELECT count(*) FROM tenures", [], |r| r.get(0))
            .unwrap()
    };
    // Copying the file alone loses what is still in the WAL.
    let naive = env.path("naive.sqlite");
    std::fs::copy(&ledger, &naive).unwrap();
    assert_eq!(count(&naive), 0, "the rows live only in the WAL");

    let copy = env.path("copy.sqlite");
    let run = env.hand(&repo, &["doctor", "--backup", copy.to_str().unwrap()]);
    let out = run.ok();
    assert!(out.contains(&copy.display().to_string()), "{out}");
    assert!(!sidecar(&copy, "-wal").exists(), "the copy is one file");
    assert_eq!(count(&copy), 3);
    assert_eq!(mode(&copy), 0o600);
    // An existing file is never overwritten.
    let before = std::fs::read(&copy).unwrap();
    let again = env.hand(&repo, &["doctor", "--backup", copy.to_str().unwrap()]);
    assert_eq!(again.code, 2, "{}", again.stderr);
    assert_eq!(std::fs::read(&copy).unwrap(), before);
}

#[test]
fn a_ledger_open_to_others_is_tightened_to_0600_and_the_user_is_told_once() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.hand(&repo, &["lease", "acquire", "1"]).ok();
    let ledger = env.ledger();
    remove_sidecars(&ledger);
    chmod(&ledger, 0o666);
    let run = env.hand(&repo, &["lease", "acquire", "2"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("git-hand: note: tightened")
            && run.stderr.contains("0666")
            && run.stderr.contains("0600"),
        "{}",
        run.stderr
    );
    assert_eq!(mode(&ledger), 0o600);
    assert_eq!(
        mode(&sidecar(&ledger, "-wal")),
        0o600,
        "the new WAL is private"
    );
    let quiet = env.hand(&repo, &["lease", "acquire", "3"]);
    assert!(!quiet.stderr.contains("tightened"), "{}", quiet.stderr);
    // A WAL left open to others is tightened too, by a reader as well.
    chmod(&sidecar(&ledger, "-wal"), 0o644);
    let list = env.hand(&repo, &["lease", "list"]);
    assert!(list.stderr.contains("tightened"), "{}", list.stderr);
    assert_eq!(mode(&sidecar(&ledger, "-wal")), 0o600);
}

#[test]
fn eight_processes_creating_the_ledger_at_once_share_one() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let ledger = env.ledger();
    assert!(!ledger.exists());
    let acquirers = (0..8)
        .map(|i| {
            let mut c = env.command(crate::support::BIN, &repo);
            c.args(["lease", "acquire", &i.to_string(), "--json"]);
            c
        })
        .collect();
    env.all_at_once(acquirers);
    let conn = rusqlite::Connection::open(&ledger).unwrap();
    let tenures: i64 = conn
        .query_row("SELECT count(*) FROM tenures WHERE token = 1", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(tenures, 8, "every process wrote into the one ledger");
    let mut left: Vec<String> = std::fs::read_dir(ledger.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        ["ledger.sqlite", "ledger.sqlite-shm", "ledger.sqlite-wal"],
        "no half-made ledger is left behind"
    );
    assert_eq!(mode(&ledger), 0o600);
}

#[test]
fn a_lease_renewal_never_brings_back_a_ledger_that_vanished() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let ledger = env.ledger();
    let script = format!(
        "rm -f '{0}' '{0}-wal' '{0}-shm'; sleep 1.2",
        ledger.display()
    );
    let run = env.hand(
        &repo,
        &[
            "spawn", "a", "--ttl", "1s", "--exec", "--", "sh", "-c", &script,
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("could not renew"), "{}", run.stderr);
    assert!(!ledger.exists(), "no empty ledger took its place");
}
