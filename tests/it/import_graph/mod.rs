//! No import circle between the files of `src/` (issue 26), by this rule: a node per file (a
//! `mod.rs` is its folder's node); an edge wherever a file names another module by `crate::...`
//! or `super::...` (grouped imports included, paths in code as well as in `use`), resolved to
//! the longest module path that is a file; `#[cfg(test)]` code left out; a module and its own
//! direct child may name each other. A circle is a strongly connected set of two or more files.
//!
//! The circles that were there when this test came are listed in [`KNOWN`]: the test fails when
//! another appears or one of them grows, and when one of them is gone (take it off the list).
//! The list only ever shrinks, to empty.

mod lex;
mod paths;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Today's circles, each as its files' module paths, sorted (`crate` is `src/lib.rs`). When the
/// test came (issue 26) there were 8, the largest 15 files (the issue counted 7 and 12 when it
/// was filed, before `hooks/linked/` and `ops/spawn/` were split into files); the same day
/// `cli/hook*` became `cli/hook/`, `ops/recover.rs` went into `ops/doctor/`, the statement
/// timeout moved beside the other timeouts in `ledger/server/url.rs`, `ledger/tasks.rs` took a
/// task's states from the ledger's own words, the file primitives of `hooks/install.rs` became
/// `hooks/files.rs`, the push options' names moved to `ops/credential_push.rs` (the client
/// that writes them) and `BranchOrigin` to `ops/spawn/plan.rs` (which decides it). What is left
/// is the one `ops` circle that the rooms of issue 26 take apart.
const KNOWN: &[&[&str]] = &[&[
    "ops::context",
    "ops::evidence",
    "ops::exec",
    "ops::include",
    "ops::pool",
    "ops::safety",
    "ops::sessions",
    "ops::settings",
    "ops::setup",
    "ops::slot",
    "ops::spawn",
    "ops::tasks",
    "ops::teardown",
    "ops::trust",
    "ops::verdict",
]];

/// Every module of the library that is a file: its path below the root (`[]` for `lib.rs`).
fn module_files(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut out = BTreeMap::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let rel = path.strip_prefix(src).unwrap();
            if rel.extension().is_none_or(|e| e != "rs") || rel == Path::new("main.rs") {
                continue;
            }
            let mut segments: Vec<String> = rel
                .with_extension("")
                .iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect();
            if segments.last().is_some_and(|s| s == "mod" || s == "lib") {
                segments.pop();
            }
            out.insert(segments, path);
        }
    }
    out
}

/// The node a path names: its longest prefix that is a file (the root at least).
fn node_of(path: &[String], files: &BTreeMap<Vec<String>, PathBuf>) -> Vec<String> {
    (0..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|prefix| files.contains_key(prefix))
        .unwrap_or_default()
}

/// Whether `a` is `b`'s direct child or `b` is `a`'s.
fn parent_and_child(a: &[String], b: &[String]) -> bool {
    (a.len() == b.len() + 1 && a.starts_with(b)) || (b.len() == a.len() + 1 && b.starts_with(a))
}

fn name(module: &[String]) -> String {
    if module.is_empty() {
        "crate".into()
    } else {
        module.join("::")
    }
}

/// The import graph of `src/`: each file's node to the nodes it names.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let files = module_files(src);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, path) in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let tokens = lex::tokens(&text);
        let from = edges.entry(name(module)).or_default();
        for named in paths::named(&tokens, module) {
            let to = node_of(&named, &files);
            if &to != module && !parent_and_child(module, &to) {
                from.insert(name(&to));
            }
        }
    }
    edges
}

/// The strongly connected sets of two or more nodes (Tarjan's algorithm), each sorted.
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: BTreeSet<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.edges.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut set = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                set.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if set.len() > 1 {
                set.sort();
                s.found.insert(set);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: BTreeSet::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.found
}

/// One cycle through `circle`, as `a -> b -> ... -> a`, to show where to cut.
fn a_cycle(circle: &[String], edges: &BTreeMap<String, BTreeSet<String>>) -> String {
    let inside: BTreeSet<&str> = circle.iter().map(String::as_str).collect();
    let start = circle[0].as_str();
    // Breadth-first from start's successors back to start, inside the circle.
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for w in edges.get(v).into_iter().flatten().map(String::as_str) {
            if !inside.contains(w) || came_from.contains_key(w) {
                continue;
            }
            came_from.insert(w, v);
            if w == start {
                let mut path = vec![start];
                let mut at = v;
                while at != start {
                    path.push(at);
                    at = came_from[at];
                }
                path.push(start);
                path.reverse();
                return path.join(" -> ");
            }
            queue.push_back(w);
        }
    }
    circle.join(", ")
}

#[test]
fn no_new_import_circle_between_the_files_of_src() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = graph(&src);
    let found = circles(&edges);
    let known: BTreeSet<Vec<String>> = KNOWN
        .iter()
        .map(|c| c.iter().map(|s| s.to_string()).collect())
        .collect();
    let new: Vec<String> = found
        .difference(&known)
        .map(|c| {
            format!(
                "  {} files: {}\n    e.g. {}",
                c.len(),
                c.join(", "),
                a_cycle(c, &edges)
            )
        })
        .collect();
    let gone: Vec<String> = known.difference(&found).map(|c| c.join(", ")).collect();
    assert!(
        new.is_empty(),
        "import circles between files of src/ that are not on the list (cut one edge of each; \
         the rule is in tests/it/import_graph/mod.rs):\n{}",
        new.join("\n")
    );
    assert!(
        gone.is_empty(),
        "these listed circles are gone: take them off KNOWN in tests/it/import_graph/mod.rs:\n  {}",
        gone.join("\n  ")
    );
}

#[test]
fn a_circle_is_found_and_parent_and_child_may_name_each_other() {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<BTreeSet<_>>();
    let edges: BTreeMap<String, BTreeSet<String>> = [
        ("a".to_string(), s(&["b"])),
        ("b".to_string(), s(&["c"])),
        ("c".to_string(), s(&["a", "d"])),
        ("d".to_string(), s(&[])),
    ]
    .into_iter()
    .collect();
    let found = circles(&edges);
    assert_eq!(found.len(), 1);
    let circle = found.into_iter().next().unwrap();
    assert_eq!(circle, ["a", "b", "c"]);
    assert_eq!(a_cycle(&circle, &edges), "a -> b -> c -> a");
    let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(parent_and_child(&v(&["ops"]), &v(&["ops", "pool"])));
    assert!(parent_and_child(&v(&[]), &v(&["ops"])));
    assert!(!parent_and_child(
        &v(&["ops"]),
        &v(&["ops", "pool", "stamp"])
    ));
}
