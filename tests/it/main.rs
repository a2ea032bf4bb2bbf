//! The one integration test runner: engine and ledger tests on the library, end-to-end stories
//! on the real binary with real git in temporary directories.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod crash;
mod engine;
mod fence;
mod hooks_install;
mod hooks_lapse;
mod hooks_push;
mod lease_cli;
mod ledger;
mod ledger_integrity;
mod log_scope;
mod managers;
mod managers_husky;
mod managers_lefthook;
mod managers_lfs;
mod managers_precommit;
mod newcomer;
mod ownership;
mod pinned;
mod pinned_errors;
mod pinned_help;
mod pinned_troubles;
mod pool;
mod prune_branches;
mod races;
mod ref_fence;
mod support;
mod trials;
mod validation;
mod verdicts;
