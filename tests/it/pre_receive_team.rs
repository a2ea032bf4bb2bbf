//! The remote checks the token on a team ledger (issue 15, item 2): the server's pre-receive hook
//! judges a lease granted on another machine as that machine's, so the laptop's current holder
//! passes and its zombie is refused as stale (not as a lease the server cannot place); a branch
//! no task owns takes anyone's push, and one `hand.requireLease` protects takes only a lease's.
//! The server is a third machine (`hand.machine` in the bare repository's own configuration);
//! the pushes go over `file://` past the client hooks, so only the remote judges.

use crate::pre_receive::{options, push_past_hooks, refused_by_remote};
use crate::support::{leased_again, remote_oid};
use crate::{pg, team_machines::two_machines};

#[test]
fn a_lease_granted_on_another_machine_is_judged_as_that_machines_by_the_server() {
    let db = pg::database();
    let m = two_machines(&db.tcp_url());
    let origin = m.origin.canonicalize().unwrap();
    m.laptop.git(&origin, &["config", "hand.machine", "server"]);
    m.laptop.hand(&origin, &["install", "--server"]).ok();
    let (slot, a, b) = leased_again(&m.laptop, &m.repo, "a", "b");
    let work = m
        .laptop
        .commit(&slot, "z.txt", "written in the laptop's slot\n");

    let zombie = push_past_hooks(
        &m.laptop,
        &slot,
        &origin,
        &options(&a, "a"),
        &["HEAD:refs/heads/hand/b"],
    );
    refused_by_remote(
        &zombie,
        "remote: git-hand: push refused by the remote (stale)",
    );
    assert_eq!(remote_oid(&m.laptop, &origin, "hand/b"), None);
    // Logged under the slot's own resource (the laptop's machine and path), never the server's
    // machine joined to the laptop's path (issue 22).
    let keys = db.psql(&format!(
        "SELECT resource_key FROM events WHERE kind = 'push-refused' AND lease_id = '{}'",
        a["lease_id"].as_str().unwrap()
    ));
    assert!(!keys.trim().is_empty(), "no refusal logged");
    assert!(!keys.contains("server:"), "{keys}");

    // The runner, presenting nothing, is refused on the laptop's live task's branch.
    let runner = push_past_hooks(
        &m.runner,
        &m.clone,
        &origin,
        &[],
        &["HEAD:refs/heads/hand/b"],
    );
    refused_by_remote(&runner, "branch hand/b belongs to live task b");

    // A branch no task owns takes the runner's push; one the server protects does not.
    let unrelated = push_past_hooks(&m.runner, &m.clone, &origin, &[], &["HEAD:refs/heads/docs"]);
    assert_eq!(unrelated.code, 0, "{}", unrelated.stderr);
    m.laptop.git(
        &origin,
        &["config", "--add", "hand.requireLease", "release/*"],
    );
    let unleased = push_past_hooks(
        &m.runner,
        &m.clone,
        &origin,
        &[],
        &["HEAD:refs/heads/release/1"],
    );
    refused_by_remote(&unleased, "hand.requireLease");

    let holder = push_past_hooks(
        &m.laptop,
        &slot,
        &origin,
        &options(&b, "b"),
        &["HEAD:refs/heads/hand/b", "HEAD:refs/heads/release/1"],
    );
    assert_eq!(holder.code, 0, "{}", holder.stderr);
    for branch in ["hand/b", "release/1"] {
        assert_eq!(
            remote_oid(&m.laptop, &origin, branch).as_deref(),
            Some(work.as_str())
        );
    }
    assert_eq!(
        db.psql("SELECT count(*) FROM events WHERE kind = 'push-refused'"),
        "3"
    );
}
