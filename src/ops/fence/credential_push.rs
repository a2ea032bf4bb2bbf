//! The credential as push options (issue 15): in a repository whose remote checks leases
//! (`hand.remoteFence`), the credential `git hand env` prints and `spawn --exec` sets also makes
//! every push from that process present its lease to the remote, as the push options
//! `hand.lease=<id>`, `hand.token=<n>` and `hand.task=<name>`.
//!
//! They travel as `push.pushOption` entries of git's configuration from the environment
//! (`GIT_CONFIG_COUNT`, `GIT_CONFIG_KEY_<n>`, `GIT_CONFIG_VALUE_<n>`), so they are the
//! process's own: a zombie keeps presenting the lease it was given, never the slot's current
//! one, and the remote refuses it. The entries are appended after whatever entries the
//! environment already carries (which keep applying); entries an earlier credential put there
//! (a shell that evaluated `git hand env` before) are rewritten in place, so a process never
//! presents two leases. A `GIT_CONFIG_COUNT` git itself refuses ("bogus count") is left alone:
//! nothing is added to a configuration that already fails every git command.

use crate::git::Repo;
use crate::ledger::{Task, Tenure};
use crate::ops::Result;
use crate::ops::fence::credential::env_vars;
use crate::ops::repo::settings::Settings;

/// The push options a push presents its lease with (what the server's pre-receive reads,
/// [`crate::ops::on_hook::pre_receive`]).
pub(crate) const LEASE_OPTION: &str = "hand.lease";
pub(crate) const TOKEN_OPTION: &str = "hand.token";
pub(crate) const TASK_OPTION: &str = "hand.task";

/// The key every option is an entry of.
const KEY: &str = "push.pushOption";

/// The options that present `tenure` of `task`, in the order they are carried.
pub fn push_options(task: &Task, tenure: &Tenure) -> [String; 3] {
    [
        format!("{LEASE_OPTION}={}", tenure.lease_id),
        format!("{TOKEN_OPTION}={}", tenure.token),
        format!("{TASK_OPTION}={}", task.name),
    ]
}

/// Whether a `push.pushOption` value is the first of an earlier credential's three entries:
/// how they are found again, to be rewritten in place.
fn is_lease_option(value: &str) -> bool {
    value
        .strip_prefix(LEASE_OPTION)
        .is_some_and(|rest| rest.starts_with('='))
}

/// What a process started from this one's environment gets to present `tenure` of `task`: the
/// credential (`GIT_HAND_*`, [`env_vars`]) and, when `carried`, the push options as the
/// `push.pushOption` entries [`config_vars`] adds to those this process's environment carries.
/// What `spawn --exec` sets, and what `git hand env --json` and `spawn --json`'s `env` hand a
/// program that starts its commands from the environment it ran git-hand in: one list, so the
/// JSON and `--exec` cannot disagree.
pub fn environment(task: &Task, tenure: &Tenure, carried: bool) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = env_vars(task, tenure)
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    if carried {
        let options = push_options(task, tenure);
        env.extend(config_vars(&options, |k| std::env::var(k).ok()));
    }
    env
}

/// Whether credentials handed out in `repo` carry their lease as push options.
pub fn carried(repo: &Repo) -> Result<bool> {
    Ok(Settings::load(repo)?.remote_fence()?)
}

/// The variables that add `options` to the configuration in the environment `var` reads (for
/// `spawn --exec`, the current process's): appended after its entries, or in place of an
/// earlier credential's. Empty when `GIT_CONFIG_COUNT` is not a count git accepts.
pub(crate) fn config_vars(
    options: &[String; 3],
    var: impl Fn(&str) -> Option<String>,
) -> Vec<(String, String)> {
    let count = match var("GIT_CONFIG_COUNT").filter(|c| !c.is_empty()) {
        None => 0,
        Some(text) if text.bytes().all(|b| b.is_ascii_digit()) => match text.parse::<usize>() {
            Ok(n) => n,
            Err(_) => return vec![],
        },
        Some(_) => return vec![],
    };
    let earlier = (0..count).find(|i| {
        var(&format!("GIT_CONFIG_KEY_{i}")).as_deref() == Some(KEY)
            && var(&format!("GIT_CONFIG_VALUE_{i}")).is_some_and(|v| is_lease_option(&v))
    });
    let at = earlier.unwrap_or(count);
    let mut vars = Vec::with_capacity(7);
    for (i, option) in (at..).zip(options) {
        vars.push((format!("GIT_CONFIG_KEY_{i}"), KEY.to_string()));
        vars.push((format!("GIT_CONFIG_VALUE_{i}"), option.clone()));
    }
    vars.push(("GIT_CONFIG_COUNT".into(), count.max(at + 3).to_string()));
    vars
}

/// The same as shell code (`sh`, `bash`, `zsh`) for `git hand env`, which works out the
/// indices when it is evaluated, from the variables the evaluating shell has: set or unset,
/// empty, with leading zeros, or already used by others or by an earlier credential. Its own
/// variables (`git_hand_*`) are unset at the end. The options are hex, digits and task names
/// (`[A-Za-z0-9._-]`): nothing inside double quotes expands.
pub fn shell(options: &[String; 3]) -> String {
    let [lease, token, task] = options;
    format!(
        r#"# hand.remoteFence: every push from this shell presents the lease to the remote (push options)
git_hand_n=${{GIT_CONFIG_COUNT:-0}}
case $git_hand_n in *[!0-9]*) ;; *)
git_hand_n=${{git_hand_n#"${{git_hand_n%%[!0]*}}"}}; git_hand_n=${{git_hand_n:-0}}; git_hand_i=0
while [ "$git_hand_i" -lt "$git_hand_n" ]; do eval "git_hand_e=\${{GIT_CONFIG_KEY_$git_hand_i-}}=\${{GIT_CONFIG_VALUE_$git_hand_i-}}"; case $git_hand_e in {KEY}={LEASE_OPTION}=*) break;; esac; git_hand_i=$((git_hand_i + 1)); done
export "GIT_CONFIG_KEY_$git_hand_i={KEY}" "GIT_CONFIG_VALUE_$git_hand_i={lease}"
export "GIT_CONFIG_KEY_$((git_hand_i + 1))={KEY}" "GIT_CONFIG_VALUE_$((git_hand_i + 1))={token}"
export "GIT_CONFIG_KEY_$((git_hand_i + 2))={KEY}" "GIT_CONFIG_VALUE_$((git_hand_i + 2))={task}"
[ "$((git_hand_i + 3))" -le "$git_hand_n" ] || export GIT_CONFIG_COUNT=$((git_hand_i + 3));;
esac
unset git_hand_n git_hand_i git_hand_e
"#
    )
}

/// The same for fish (`git hand env --shell fish | source`), which reads none of the POSIX code
/// above: the same indices worked out at evaluation (`$$name` reads the variable a name names;
/// `math` drops leading zeros), its own variables local to a block.
pub fn fish(options: &[String; 3]) -> String {
    let [lease, token, task] = options;
    format!(
        r#"# hand.remoteFence: every push from this shell presents the lease to the remote (push options)
begin
set -l n 0; set -q GIT_CONFIG_COUNT; and test -n "$GIT_CONFIG_COUNT"; and set n $GIT_CONFIG_COUNT
if string match -qr '^[0-9]+$' -- $n
set n (math $n); set -l i 0
while test $i -lt $n
set -l k GIT_CONFIG_KEY_$i; set -l v GIT_CONFIG_VALUE_$i
if test "$$k" = {KEY}; and string match -q '{LEASE_OPTION}=*' -- "$$v"; break; end
set i (math $i + 1)
end
set -gx GIT_CONFIG_KEY_$i {KEY}; set -gx GIT_CONFIG_VALUE_$i {lease}
set -gx GIT_CONFIG_KEY_(math $i + 1) {KEY}; set -gx GIT_CONFIG_VALUE_(math $i + 1) {token}
set -gx GIT_CONFIG_KEY_(math $i + 2) {KEY}; set -gx GIT_CONFIG_VALUE_(math $i + 2) {task}
test (math $i + 3) -le $n; or set -gx GIT_CONFIG_COUNT (math $i + 3)
end
end
"#
    )
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn options() -> [String; 3] {
        [
            format!("{LEASE_OPTION}={}", "ab".repeat(16)),
            "hand.token=7".into(),
            "hand.task=t1".into(),
        ]
    }

    fn vars_for(env: &[(&str, &str)]) -> HashMap<String, String> {
        let env: HashMap<String, String> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        config_vars(&options(), |k| env.get(k).cloned())
            .into_iter()
            .collect()
    }

    #[test]
    fn with_no_entries_the_options_are_entries_0_to_2() {
        for env in [
            &[][..],
            &[("GIT_CONFIG_COUNT", "")],
            &[("GIT_CONFIG_COUNT", "0")],
        ] {
            let v = vars_for(env);
            assert_eq!(v["GIT_CONFIG_COUNT"], "3");
            assert_eq!(v["GIT_CONFIG_KEY_0"], KEY);
            assert_eq!(v["GIT_CONFIG_VALUE_2"], "hand.task=t1");
        }
    }

    #[test]
    fn the_options_follow_the_entries_already_there() {
        let v = vars_for(&[
            ("GIT_CONFIG_COUNT", "02"),
            ("GIT_CONFIG_KEY_0", "user.name"),
            ("GIT_CONFIG_VALUE_0", "x"),
            ("GIT_CONFIG_KEY_1", KEY),
            ("GIT_CONFIG_VALUE_1", "ci.skip"),
        ]);
        assert_eq!(v["GIT_CONFIG_COUNT"], "5");
        assert!(!v.contains_key("GIT_CONFIG_KEY_1"), "{v:?}");
        assert_eq!(v["GIT_CONFIG_VALUE_2"], options()[0]);
        assert_eq!(v["GIT_CONFIG_VALUE_4"], "hand.task=t1");
    }

    #[test]
    fn an_earlier_credentials_options_are_replaced_not_repeated() {
        let v = vars_for(&[
            ("GIT_CONFIG_COUNT", "4"),
            ("GIT_CONFIG_KEY_0", "user.name"),
            ("GIT_CONFIG_VALUE_0", "x"),
            ("GIT_CONFIG_KEY_1", KEY),
            ("GIT_CONFIG_VALUE_1", "hand.lease=00"),
            ("GIT_CONFIG_KEY_2", KEY),
            ("GIT_CONFIG_VALUE_2", "hand.token=1"),
            ("GIT_CONFIG_KEY_3", KEY),
            ("GIT_CONFIG_VALUE_3", "hand.task=old"),
        ]);
        assert_eq!(v["GIT_CONFIG_COUNT"], "4");
        assert_eq!(v["GIT_CONFIG_VALUE_1"], options()[0]);
        assert_eq!(v["GIT_CONFIG_VALUE_3"], "hand.task=t1");
    }

    #[test]
    fn a_count_git_refuses_gets_nothing_added() {
        for bad in ["x", "-1", " 1", "99999999999999999999999"] {
            assert!(vars_for(&[("GIT_CONFIG_COUNT", bad)]).is_empty(), "{bad}");
        }
    }
}
