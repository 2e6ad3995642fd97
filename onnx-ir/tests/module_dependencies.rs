//! No import cycles between the modules of a crate (issue 18): within each crate of the
//! workspace, sibling modules may depend on each other one way only, so each can be read (and
//! moved) knowing only what it imports. A child may use its ancestors and a parent its
//! children. References are read from the sources (`crate::a::b`, `crate::{a, b}`,
//! `super::sibling`), comments left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crates of more than one module (onnx-macro and onnx2burn have none between siblings), with how many sibling references each has at least (so
/// that a reader that stopped finding them fails here rather than passing on nothing).
const CRATES: &[(&str, usize)] =
    &[("onnx-ir", 60), ("onnx-codegen", 30), ("runtime-support", 20), ("onnx-export", 4), ("tests/onnx-backend", 4)];

/// A module's path from the crate root (`["ops", "conv"]`; the root is `[]`).
type ModulePath = Vec<String>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable source folder") {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn module_path(src: &Path, file: &Path) -> ModulePath {
    let relative = file.strip_prefix(src).expect("under src").with_extension("");
    let mut path: ModulePath = relative.iter().map(|s| s.to_string_lossy().into_owned()).collect();
    if matches!(path.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        path.pop();
    }
    path
}

/// The source without `//` comments (doc comments included).
fn code(source: &str) -> String {
    source.lines().map(|line| line.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

fn identifier(text: &str) -> &str {
    let end = text.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(text.len());
    &text[..end]
}

/// The paths written after `prefix` (`crate::` or `super::`): `a::b::C` gives `[a, b, C]`; a
/// group `{a::{x, y}, b}` gives `[a, x]`, `[a, y]` and `[b]`. A prefix that continues a longer
/// path (`burn_onnx_crate::`, the second `super::` of `super::super::`) is not a start.
fn paths_after(code: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    for (at, _) in code.match_indices(prefix) {
        let before = &code[..at];
        if !(before.ends_with(|c: char| c.is_alphanumeric() || c == '_') || before.ends_with("::")) {
            tree(&code[at + prefix.len()..], &mut Vec::new(), &mut paths);
        }
    }
    paths.retain(|p| !p.is_empty());
    paths
}

/// The paths of one use tree starting at `text`, each after `base`.
fn tree(text: &str, base: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let depth = base.len();
    let mut rest = text.trim_start();
    loop {
        let name = identifier(rest);
        if name.is_empty() {
            break;
        }
        base.push(name.to_string());
        match rest[name.len()..].strip_prefix("::") {
            Some(next) => rest = next.trim_start(),
            None => {
                rest = "";
                break;
            }
        }
    }
    match rest.strip_prefix('{') {
        Some(group) => {
            let (mut level, mut start) = (0usize, 0usize);
            for (i, c) in group.char_indices() {
                match c {
                    '{' => level += 1,
                    '}' if level > 0 => level -= 1,
                    '}' | ',' if level == 0 => {
                        tree(&group[start..i], base, out);
                        if c == '}' {
                            break;
                        }
                        start = i + 1;
                    }
                    _ => {}
                }
            }
        }
        None => out.push(base.clone()),
    }
    base.truncate(depth);
}

/// The modules a module's code refers to: `crate::` paths, `super::` paths and groups (from
/// its parent, `super::super::` from the grandparent), and bare paths into a sibling
/// (`sibling::item`, as a glob import or a macro's expansion leaves them), each resolved to
/// the longest module it names.
fn references(code: &str, from: &[String], modules: &BTreeSet<ModulePath>) -> Vec<ModulePath> {
    let longest_module = |path: &[String]| -> ModulePath {
        (0..=path.len()).rev().map(|n| path[..n].to_vec()).find(|p| modules.contains(p)).unwrap_or_default()
    };
    let mut targets: Vec<ModulePath> = paths_after(code, "crate::").iter().map(|p| longest_module(p)).collect();
    let Some((_, parent)) = from.split_last() else { return targets };
    for path in paths_after(code, "super::") {
        let ups = path.iter().take_while(|s| *s == "super").count();
        let Some(base) = parent.len().checked_sub(ups) else { continue };
        let absolute: ModulePath = parent[..base].iter().chain(&path[ups..]).cloned().collect();
        targets.push(longest_module(&absolute));
    }
    for sibling in modules.iter().filter(|m| m.len() == from.len() && m.starts_with(parent) && m[..] != *from) {
        let name = format!("{}::", sibling[parent.len()]);
        // Not a longer name's end, a path's middle or a method's turbofish (`x.norm::<T>()`).
        let bare = code.match_indices(&name).any(|(at, _)| {
            let before = &code[..at];
            !(before.ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '.') || before.ends_with("::"))
        });
        if bare {
            targets.push(sibling.clone());
        }
    }
    targets
}

/// The edges between sibling modules of one crate, each with the file it was read from.
fn sibling_edges(src: &Path) -> BTreeMap<(ModulePath, ModulePath), String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeSet<ModulePath> = files.iter().map(|f| module_path(src, f)).collect();
    let mut edges = BTreeMap::new();
    for file in &files {
        let from = module_path(src, file);
        let code = code(&std::fs::read_to_string(file).expect("a readable source file"));
        let targets = references(&code, &from, &modules);
        for to in targets {
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common < from.len() && common < to.len() {
                let key = (from[..=common].to_vec(), to[..=common].to_vec());
                edges.entry(key).or_insert_with(|| file.display().to_string());
            }
        }
    }
    edges
}

/// A cycle of the graph, if it has one (depth-first search).
fn find_cycle(edges: &BTreeMap<(ModulePath, ModulePath), String>) -> Option<Vec<ModulePath>> {
    let mut next: BTreeMap<&ModulePath, Vec<&ModulePath>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        next.entry(from).or_default().push(to);
    }
    fn visit<'a>(
        node: &'a ModulePath,
        next: &BTreeMap<&'a ModulePath, Vec<&'a ModulePath>>,
        stack: &mut Vec<&'a ModulePath>,
        done: &mut BTreeSet<&'a ModulePath>,
    ) -> Option<Vec<ModulePath>> {
        if let Some(at) = stack.iter().position(|m| *m == node) {
            return Some(stack[at..].iter().map(|m| (*m).clone()).chain([node.clone()]).collect());
        }
        if !done.insert(node) {
            return None;
        }
        stack.push(node);
        for &to in next.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(to, next, stack, done) {
                return Some(cycle);
            }
        }
        stack.pop();
        None
    }
    let mut done = BTreeSet::new();
    next.keys().find_map(|&start| visit(start, &next, &mut Vec::new(), &mut done))
}

#[test]
fn no_import_cycles_between_modules() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root");
    for &(krate, at_least) in CRATES {
        let edges = sibling_edges(&workspace.join(krate).join("src"));
        assert!(
            edges.len() >= at_least,
            "{krate}: {} references between modules read, fewer than {at_least}",
            edges.len()
        );
        if let Some(cycle) = find_cycle(&edges) {
            let steps: Vec<String> = cycle
                .windows(2)
                .map(|w| {
                    format!("{} -> {} ({})", w[0].join("::"), w[1].join("::"), edges[&(w[0].clone(), w[1].clone())])
                })
                .collect();
            panic!("{krate}: modules import each other in a cycle:\n  {}", steps.join("\n  "));
        }
    }
}

#[test]
fn a_cycle_is_found() {
    let module = |s: &str| s.split("::").map(String::from).collect::<ModulePath>();
    let mut edges = BTreeMap::new();
    edges.insert((module("a"), module("b")), "a.rs".to_string());
    edges.insert((module("b"), module("c")), "b.rs".to_string());
    assert_eq!(find_cycle(&edges), None);
    edges.insert((module("c"), module("a")), "c.rs".to_string());
    assert_eq!(find_cycle(&edges), Some(vec![module("a"), module("b"), module("c"), module("a")]));
}

/// Each form of reference the checker reads, from a module `ops::conv` beside `ops::norm` and
/// `ops::pool`, under `ops`, beside `graph`.
#[test]
fn every_form_of_reference_is_read() {
    let module = |s: &str| s.split("::").filter(|s| !s.is_empty()).map(String::from).collect::<ModulePath>();
    let modules: BTreeSet<ModulePath> = ["", "ops", "ops::conv", "ops::norm", "ops::pool", "graph"].map(module).into();
    let from = module("ops::conv");
    let read = |code: &str| {
        let mut found = references(code, &from, &modules);
        found.sort();
        found.dedup();
        found
    };
    assert_eq!(read("use crate::graph::Graph;"), vec![module("graph")]);
    assert_eq!(
        read("use crate::{ops::{norm::X, Op}, graph};"),
        vec![module("graph"), module("ops"), module("ops::norm")]
    );
    assert_eq!(read("use super::norm::X;"), vec![module("ops::norm")]);
    assert_eq!(read("use super::{norm, pool::Y, Op};"), vec![module("ops"), module("ops::norm"), module("ops::pool")]);
    assert_eq!(read("use super::super::graph;"), vec![module("graph")]);
    assert_eq!(read("use super::*;\nfn f() { pool::max(); }"), vec![module("ops::pool")]);
    assert_eq!(read("fn f() { other_pool::max(); x.norm::<f32>(); }"), Vec::<ModulePath>::new());
}
