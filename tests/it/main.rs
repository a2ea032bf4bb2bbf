//! The one integration test runner: engine and ledger tests on the library, end-to-end stories
//! on the real binary with real git in temporary directories.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod base_ref;
mod completion;
mod crash;
mod engine;
mod fence;
mod hooks_install;
mod hooks_lapse;
mod hooks_push;
mod include;
mod lease_cli;
mod ledger;
mod ledger_integrity;
mod listing;
mod log_scope;
mod managers;
mod managers_husky;
mod managers_lefthook;
mod managers_lfs;
mod managers_precommit;
mod manpage;
mod newcomer;
mod ownership;
mod pg;
mod pinned;
mod pinned_errors;
mod pinned_help;
mod pinned_troubles;
mod pool;
mod prune_branches;
mod races;
mod ref_fence;
mod setup;
mod small_things;
mod support;
mod team_cli;
mod team_connect;
mod team_contention;
mod team_copy;
mod team_ledger;
mod team_machines;
mod trials;
mod validation;
mod verdicts;
