//! The core's modules form a line: each may use only the modules before it. This reads
//! `src/core/*.rs`, collects every `super::NAME` (and `crate::core::NAME`) path that names a
//! sibling module, in `use` items and inline alike, and fails on any reference that points
//! forward or sideways in [`LINE`], and on any cycle. The line written in `src/core/mod.rs`
//! and in docs/design.md must be this one.
//!
//! Across the whole crate (`src/**`, the library and the binary's `replay`), no file may
//! import itself through others: see [`crate_edges`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The declared order, earliest first. Modules on one rung may not use each other.
const LINE: &[&[&str]] = &[
    &["clock"],
    &["lease"],
    &["redlock"],
    &["ledger"],
    &["fault"],
    &["scenario"],
    &["trace"],
    &["audit"],
    &["record"],
    &["client"],
    &["queue"],
    &["locks"],
    &["sim"],
    &["actor"],
    &["engine"],
    &["story"],
    &["herd"],
    &["deck"],
    &["explore"],
];

/// One module naming another at a line of its file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Edge {
    from: String,
    to: String,
    line: usize,
}

/// `src` with comments, string and char literals blanked out (newlines kept, so line
/// numbers still hold).
fn code_only(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let blank = |out: &mut String, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < c.len() {
        let at = |k: usize| c.get(i + k).copied().unwrap_or('\0');
        if at(0) == '/' && at(1) == '/' {
            while i < c.len() && c[i] != '\n' {
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if at(0) == '/' && at(1) == '*' {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
        } else if at(0) == 'r'
            && (at(1) == '"' || (at(1) == '#' && (at(2) == '"' || at(2) == '#')))
            && (i == 0 || !is_ident(c[i - 1]))
        {
            // A raw string: r"…", r#"…"#, …
            let mut hashes = 0;
            let mut j = i + 1;
            while c.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            let close: String = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let rest: String = c[j + 1..].iter().collect();
            let len = rest.find(&close).map_or(rest.len(), |n| n + close.len());
            let end = j + 1 + rest[..len].chars().count();
            for &ch in &c[i..end.min(c.len())] {
                blank(&mut out, ch);
            }
            i = end;
        } else if at(0) == '"' {
            blank(&mut out, c[i]);
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    blank(&mut out, c[i]);
                    i += 1;
                }
                if i < c.len() {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
            if i < c.len() {
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if at(0) == '\'' && (at(1) == '\\' || at(2) == '\'') {
            // A char literal ('x', '\n', '\u{2014}'); a lifetime ('a) has no closing quote.
            blank(&mut out, c[i]);
            i += 1;
            if c[i] == '\\' {
                blank(&mut out, c[i]);
                i += 1;
            }
            while i < c.len() && c[i] != '\'' {
                blank(&mut out, c[i]);
                i += 1;
            }
            if i < c.len() {
                blank(&mut out, c[i]);
                i += 1;
            }
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

fn is_ident(ch: char) -> bool {
    ch.is_ascii_alphanumeric() || ch == '_'
}

/// The leading identifier of `s` (after whitespace), if any.
fn ident(s: &str) -> Option<&str> {
    let s = s.trim_start();
    let n = s.find(|ch: char| !is_ident(ch)).unwrap_or(s.len());
    (n > 0).then(|| &s[..n])
}

/// The first segment of each item of the brace group that `s` starts with:
/// `{clock::Millis, lease::{Fence, Lease}}` gives `clock`, `lease`.
fn group_heads(s: &str) -> Vec<&str> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut item_start = true;
    for (i, ch) in s.char_indices() {
        match ch {
            '{' => {
                depth += 1;
                if depth == 1 {
                    item_start = true;
                    continue;
                }
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            ',' if depth == 1 => {
                item_start = true;
                continue;
            }
            _ => {}
        }
        if depth == 1 && item_start && !ch.is_whitespace() {
            item_start = false;
            if let Some(name) = ident(&s[i..]) {
                heads.push(name);
            }
        }
    }
    heads
}

/// Every sibling module that `src` (the file of module `from`) names through `super::` or
/// `crate::core::`, with the line it does so on. `modules` are the core's module names;
/// other paths (`super::*`, a test module's `super::Item`) are not module references.
fn references(from: &str, src: &str, modules: &BTreeSet<&str>) -> Vec<Edge> {
    let code = code_only(src);
    let mut edges = Vec::new();
    for prefix in ["super::", "crate::core::"] {
        let mut from_idx = 0;
        while let Some(n) = code[from_idx..].find(prefix) {
            let at = from_idx + n;
            from_idx = at + prefix.len();
            if code[..at].chars().next_back().is_some_and(is_ident) {
                continue; // e.g. `my_super::`
            }
            let rest = code[from_idx..].trim_start();
            let names = if rest.starts_with('{') {
                group_heads(rest)
            } else {
                ident(rest).into_iter().collect()
            };
            let line = code[..at].matches('\n').count() + 1;
            for name in names {
                if modules.contains(name) && name != from {
                    edges.push(Edge {
                        from: from.to_owned(),
                        to: name.to_owned(),
                        line,
                    });
                }
            }
        }
    }
    edges.sort_by_key(|e| e.line);
    edges
}

/// References that do not point strictly earlier in `line`.
fn back_edges<'e>(line: &[&[&str]], edges: &'e [Edge]) -> Vec<&'e Edge> {
    let rung = |m: &str| line.iter().position(|r| r.contains(&m));
    edges
        .iter()
        .filter(|e| match (rung(&e.from), rung(&e.to)) {
            (Some(f), Some(t)) => t >= f,
            _ => true,
        })
        .collect()
}

/// A cycle among `edges`, as the modules along it (first repeated at the end), if any.
fn cycle(edges: &[Edge]) -> Option<Vec<String>> {
    let mut next: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for e in edges {
        next.entry(&e.from).or_default().insert(&e.to);
    }
    fn visit<'a>(
        m: &'a str,
        next: &BTreeMap<&'a str, BTreeSet<&'a str>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| *p == m) {
            let mut c: Vec<String> = path[i..].iter().map(|s| s.to_string()).collect();
            c.push(m.to_owned());
            return Some(c);
        }
        if !done.insert(m) {
            return None;
        }
        path.push(m);
        for n in next.get(m).into_iter().flatten() {
            if let Some(c) = visit(n, next, path, done) {
                return Some(c);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    let starts: Vec<&str> = next.keys().copied().collect();
    starts
        .into_iter()
        .find_map(|m| visit(m, &next, &mut Vec::new(), &mut done))
}

/// `LINE` as the docs write it: `clock ← lease ← … ← explore, herd`.
fn rendered(line: &[&[&str]]) -> String {
    line.iter()
        .map(|r| r.join(", "))
        .collect::<Vec<_>>()
        .join(" ← ")
}

fn core_sources() -> BTreeMap<String, String> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/core");
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    for entry in std::fs::read_dir(dir).expect("src/core") {
        let path = entry.expect("dir entry").path();
        if path.extension().is_some_and(|e| e == "rs") {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            let src = std::fs::read_to_string(&path).expect("readable source");
            files.entry(name).or_default().push_str(&src);
        } else if path.is_dir() {
            // A module split into a directory (`story/`, or `fault.rs` with `fault/`): its
            // files together are the module. Inside it, `super::` is the module itself, so
            // only `super::super::` (the core) names another core module.
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let mut parts: Vec<_> = std::fs::read_dir(&path)
                .expect("module dir")
                .map(|e| e.expect("dir entry").path())
                .filter(|p| p.extension().is_some_and(|e| e == "rs"))
                .collect();
            parts.sort();
            let src: String = parts
                .iter()
                .map(|p| {
                    let src = std::fs::read_to_string(p).expect("readable source");
                    if p.file_name().is_some_and(|f| f == "mod.rs") {
                        src
                    } else {
                        src.replace("super::super::", "super::")
                            .replace("use super::*;", "")
                    }
                })
                .collect::<Vec<_>>()
                .join("\n");
            let module = files.entry(name).or_default();
            module.push('\n');
            module.push_str(&src);
        }
    }
    files
}

fn all_edges(files: &BTreeMap<String, String>) -> Vec<Edge> {
    let modules: BTreeSet<&str> = files
        .keys()
        .map(String::as_str)
        .filter(|m| *m != "mod")
        .collect();
    files
        .iter()
        .filter(|(m, _)| m.as_str() != "mod")
        .flat_map(|(m, src)| references(m, src, &modules))
        .collect()
}

#[test]
fn every_core_module_is_on_the_line_once() {
    let files = core_sources();
    let on_disk: BTreeSet<&str> = files
        .keys()
        .map(String::as_str)
        .filter(|m| *m != "mod")
        .collect();
    let declared: Vec<&str> = LINE.iter().flat_map(|r| r.iter().copied()).collect();
    let unique: BTreeSet<&str> = declared.iter().copied().collect();
    assert_eq!(
        unique.len(),
        declared.len(),
        "a module is on the line twice"
    );
    assert_eq!(
        on_disk, unique,
        "src/core/*.rs and the declared line differ: put each module on LINE in tests/native/layering.rs"
    );
}

#[test]
fn core_modules_use_only_earlier_modules() {
    let edges = all_edges(&core_sources());
    // The scan sees the engine's pieces, so a broken scanner cannot pass vacuously.
    for (from, to) in [
        ("engine", "actor"),
        ("actor", "sim"),
        ("sim", "queue"),
        ("sim", "locks"),
        ("story", "ledger"),
    ] {
        assert!(
            edges.iter().any(|e| e.from == from && e.to == to),
            "expected {from} to use {to}: {edges:#?}"
        );
    }
    let bad: Vec<String> = back_edges(LINE, &edges)
        .iter()
        .map(|e| {
            format!(
                "src/core/{}.rs:{} uses {}, which is not before it on the line",
                e.from, e.line, e.to
            )
        })
        .collect();
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert_eq!(cycle(&edges), None);
}

#[test]
fn the_docs_state_the_same_line() {
    let want = rendered(LINE);
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");

    let files = core_sources();
    let doc: String = files["mod"]
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .collect::<Vec<_>>()
        .join(" ");
    let doc = squash(&doc);
    assert!(
        doc.contains(&format!(": {want}.")),
        "src/core/mod.rs: {doc}"
    );

    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/design.md"))
        .expect("docs/design.md");
    let readme = squash(&readme);
    let at = readme
        .find("The modules form a line")
        .expect("docs/design.md states the modules' line");
    let stated = &readme[at..];
    let stated = &stated[..stated.find(". ").map_or(stated.len(), |n| n + 1)];
    assert!(
        stated.ends_with(&format!(": {want}.")),
        "docs/design.md says “{stated}”; the line is {want}."
    );
}

// Fault kinds: the places every kind passes through alike name none of them.

/// The engine's run loop and queue, the story's routing, labels and outcome, and the
/// timeline's marker shape treat every fault alike: a kind's model, effect and words are its
/// own (`src/core/fault/<kind>.rs`, `src/core/engine/strike.rs`, `src/core/story/fault/`),
/// and these ask the fault or its event ([`Fault::shape`], `fault_event!`,
/// `EventKind::struck`), so a new kind leaves them as they are.
///
/// [`Fault::shape`]: fencing_lab::core::Fault::shape
const GENERIC_FAULT_PLACES: &[&str] = &[
    "src/core/engine.rs",
    "src/core/queue.rs",
    "src/core/story/mod.rs",
    "src/core/story/words.rs",
    "src/core/story/far.rs",
    "src/core/story/outcome.rs",
    "src/view/timeline/layout.rs",
];

#[test]
fn the_generic_places_name_no_fault_kind() {
    let kinds = [
        "Partition",
        "Failover",
        "Restart",
        "ClockJump",
        "StorageFailover",
        "LockClockJumped",
    ];
    for path in GENERIC_FAULT_PLACES {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
        let code = code_only(&std::fs::read_to_string(&file).expect("readable source"));
        // A file's tests (at its end) may build any fault they test with.
        let code = code.split("#[cfg(test)]").next().unwrap_or_default();
        for kind in kinds {
            for of in ["Fault::", "FaultKind::", "EventKind::"] {
                assert!(
                    !code.contains(&format!("{of}{kind}")),
                    "{path} names {of}{kind}: ask the fault (Fault::shape) or its event \
                     (fault_event!, EventKind::struck) instead"
                );
            }
        }
    }
}

// The scanner itself.

fn names(edges: &[Edge]) -> Vec<(&str, usize)> {
    edges.iter().map(|e| (e.to.as_str(), e.line)).collect()
}

#[test]
fn scanner_finds_grouped_inline_and_crate_paths_and_skips_comments_and_strings() {
    let modules: BTreeSet<&str> = ["clock", "lease", "ledger", "story", "deck"].into();
    let src = r##"//! Uses [`super::story`] in a doc link only.
use super::{clock::Millis, lease::{Fence, Lease}};
use super::*;
// use super::deck;
/* use super::deck; /* nested */ still a comment super::deck:: */
fn f<'a>(x: &'a str) -> char {
    let _ = "super::deck::run";
    let _ = r#"super::deck"#;
    let w = |r: &super::ledger::WriteRecord| r;
    let _ = crate::core::story::say;
    '"'
}
"##;
    let edges = references("trace", src, &modules);
    assert_eq!(
        names(&edges),
        [("clock", 2), ("lease", 2), ("ledger", 9), ("story", 10)]
    );
}

#[test]
fn a_forward_reference_and_a_cycle_are_caught() {
    let modules: BTreeSet<&str> = ["clock", "lease"].into();
    let mut edges = references("clock", "use super::lease::Fence;\n", &modules);
    assert_eq!(
        back_edges(&[&["clock"], &["lease"]], &edges).len(),
        1,
        "clock using lease points forward"
    );
    edges.extend(references("lease", "use super::clock::Millis;\n", &modules));
    assert_eq!(
        cycle(&edges),
        Some(vec!["clock".into(), "lease".into(), "clock".into()])
    );
    // Modules on one rung may not use each other either.
    let side = references("explore", "use super::herd;\n", &["herd", "explore"].into());
    assert_eq!(back_edges(&[&["explore", "herd"]], &side).len(), 1);
}

// The whole crate: files that import each other.

/// Circles another branch is breaking, as their files in order: listed here so this test
/// guards every other file meanwhile.
const KNOWN_CIRCLES: &[&[&str]] = &[];

/// Which crate a file is in: the library, or the binary (`src/main.rs` and its `replay`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Krate {
    Lib,
    Bin,
}

/// A module: its crate and its path from the crate root.
type ModPath = (Krate, Vec<String>);

/// One source file of the crate, as the scan reads it.
struct File {
    module: ModPath,
    code: String,
    /// Each `use` item's leaves: (its byte range, the name it brings in, the full path;
    /// `*` for a glob).
    uses: Vec<(std::ops::Range<usize>, String, Vec<String>)>,
    /// Inline modules (`mod tests { … }`): their name and byte range.
    inline: Vec<(String, std::ops::Range<usize>)>,
    /// The `#[cfg(test)]` ones' ranges: a test may use what it tests through any path.
    tests: Vec<std::ops::Range<usize>>,
}

/// The module a file is: `src/a/b.rs` and `src/a/b/mod.rs` are `a::b`.
fn module_of(rel: &str) -> ModPath {
    let rel = rel
        .strip_prefix("src/")
        .unwrap_or(rel)
        .trim_end_matches(".rs");
    let mut segs: Vec<String> = rel.split('/').map(str::to_owned).collect();
    if matches!(
        segs.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        segs.pop();
    }
    let krate = match rel == "main" || segs.first().is_some_and(|s| s == "replay") {
        true => Krate::Bin,
        false => Krate::Lib,
    };
    (krate, segs)
}

/// The leaves of a `use` tree: `a::{b, c::d as e, f::*}` gives (b, a::b), (e, a::c::d),
/// (*, a::f::*). `self` in a group names the group's own path.
fn use_leaves(tree: &str) -> Vec<(String, Vec<String>)> {
    fn walk(s: &str, prefix: &[String], out: &mut Vec<(String, Vec<String>)>) {
        let s = s.trim();
        let (head, group) = match s.find('{') {
            Some(i) => (&s[..i], Some(&s[i + 1..s.rfind('}').unwrap_or(s.len())])),
            None => (s, None),
        };
        let (head, alias) = match head.split_once(" as ") {
            Some((h, a)) => (h, Some(a.trim().to_owned())),
            None => (head, None),
        };
        let mut path = prefix.to_vec();
        path.extend(
            (head.split("::").map(str::trim))
                .filter(|p| !p.is_empty())
                .map(str::to_owned),
        );
        let Some(group) = group else {
            if path.last().is_some_and(|l| l == "self") {
                path.pop();
            }
            if let Some(name) = alias.or_else(|| path.last().cloned()) {
                out.push((name, path));
            }
            return;
        };
        let (mut depth, mut start) = (0, 0);
        for (i, ch) in group.char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    walk(&group[start..i], &path, out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        if !group[start..].trim().is_empty() {
            walk(&group[start..], &path, out);
        }
    }
    let mut out = Vec::new();
    walk(tree, &[], &mut out);
    out
}

/// Reads one file: its `use` items (blanked out of the code, so the inline scan does not see
/// them again) and its inline modules.
fn read_file(rel: &str, src: &str) -> File {
    let mut code = code_only(src);
    let mut uses = Vec::new();
    let mut at = 0;
    while let Some(n) = code[at..].find("use ") {
        let start = at + n;
        at = start + 4;
        let before = code[..start].chars().next_back();
        if before.is_some_and(|c| !(c.is_whitespace() || c == ')' || c == ';' || c == '}')) {
            continue;
        }
        let Some(len) = code[start..].find(';') else {
            break;
        };
        let range = start..start + len + 1;
        for (name, path) in use_leaves(&code[start + 4..start + len]) {
            uses.push((range.clone(), name, path));
        }
        let blank: String = (code[range.clone()].chars())
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        code.replace_range(range, &blank);
        at = start + len + 1;
    }
    let (mut inline, mut tests) = (Vec::new(), Vec::new());
    let mut at = 0;
    while let Some(n) = code[at..].find("mod ") {
        let start = at + n;
        at = start + 4;
        if code[..start].chars().next_back().is_some_and(is_ident) {
            continue;
        }
        let Some(name) = ident(&code[start + 4..]) else {
            continue;
        };
        let rest = &code[start + 4..];
        let after = rest[rest.find(name).unwrap_or(0) + name.len()..].trim_start();
        if !after.starts_with('{') {
            continue; // `mod name;`: a file of its own
        }
        let open = start + 4 + rest.find('{').unwrap_or(0);
        let mut depth = 0;
        let close = (code[open..].char_indices())
            .find(|&(_, c)| {
                depth += match c {
                    '{' => 1,
                    '}' => -1,
                    _ => 0,
                };
                depth == 0
            })
            .map_or(code.len(), |(i, _)| open + i);
        if code[..start].trim_end().ends_with("#[cfg(test)]") {
            tests.push(open..close);
        }
        inline.push((name.to_owned(), open..close));
    }
    File {
        module: module_of(rel),
        code,
        uses,
        inline,
        tests,
    }
}

/// The module a place in a file is in (inside its inline modules, if any).
fn scope_at(f: &File, at: usize) -> ModPath {
    let mut m = f.module.clone();
    for (name, range) in &f.inline {
        if range.contains(&at) {
            m.1.push(name.clone());
        }
    }
    m
}

/// The crate's files, by module.
struct Crate {
    files: BTreeMap<String, File>,
    by_module: BTreeMap<ModPath, String>,
}

impl Crate {
    fn new(sources: &BTreeMap<String, String>) -> Self {
        let files: BTreeMap<String, File> = (sources.iter())
            .map(|(rel, src)| (rel.clone(), read_file(rel, src)))
            .collect();
        let by_module = (files.iter())
            .map(|(rel, f)| (f.module.clone(), rel.clone()))
            .collect();
        Self { files, by_module }
    }

    /// The file a module (or a place inside one of a file's inline modules) is in.
    fn file_of(&self, m: &ModPath) -> Option<&str> {
        (0..=m.1.len())
            .rev()
            .find_map(|n| self.by_module.get(&(m.0, m.1[..n].to_vec())))
            .map(String::as_str)
    }

    fn is_module(&self, m: &ModPath) -> bool {
        self.by_module.contains_key(m)
    }

    /// The file that defines what `path`, written in module `scope`, names: it goes down
    /// through module files, and through a file's imports (an item a facade only
    /// re-exports is the defining file's). `None` outside the crate (std, other crates).
    fn resolve(&self, scope: &ModPath, path: &[String], depth: usize) -> Option<String> {
        let (first, _) = path.split_first()?;
        let mut m = scope.clone();
        let mut rest = path;
        match first.as_str() {
            "crate" => (m.1.clear(), rest = &path[1..]).1,
            "fencing_lab" => (m = (Krate::Lib, Vec::new()), rest = &path[1..]).1,
            "self" => rest = &path[1..],
            "super" => {
                while rest.first().is_some_and(|s| s == "super") {
                    m.1.pop();
                    rest = &rest[1..];
                }
            }
            _ => {}
        }
        let file = self.file_of(&m)?.to_owned();
        let Some((seg, more)) = rest.split_first() else {
            return Some(file);
        };
        if depth > 8 {
            return Some(file);
        }
        let mut child = m.clone();
        child.1.push(seg.clone());
        if self.is_module(&child) {
            let mut p = vec!["self".to_owned()];
            p.extend(more.iter().cloned());
            return self.resolve(&child, &p, depth + 1);
        }
        // A name the module imports: follow the import (a private import is seen by the
        // module's children too).
        let f = &self.files[&file];
        let imported =
            (f.uses.iter()).find(|(range, name, _)| name == seg && scope_at(f, range.start) == m);
        if let Some((range, _, target)) = imported {
            let mut p = target.clone();
            p.extend(more.iter().cloned());
            let from = scope_at(f, range.start);
            return self.resolve(&from, &p, depth + 1).or(Some(file));
        }
        // A path relative to the current module must start at one of its children or names.
        let relative = !matches!(first.as_str(), "crate" | "fencing_lab" | "self" | "super");
        (!relative || m != *scope || depth > 0).then_some(file)
    }
}

/// Every file-to-file import of the crate: a path in a `use` item or inline (`crate::`,
/// `super::`, `self::`, `fencing_lab::`, or a child module or imported name of the module
/// it is in) that names another file's item or module. A module is part of its ancestors,
/// so naming an item an ancestor's file defines itself (`super::Msg` in `lab/controls.rs`)
/// is no import; an item an ancestor only re-exports is its source file's. A glob
/// (`use super::*`) names no file: the names it brings in are not followed.
fn crate_edges(sources: &BTreeMap<String, String>) -> Vec<Edge> {
    let krate = Crate::new(sources);
    let mut edges = Vec::new();
    for (rel, f) in &krate.files {
        let line = |at: usize| f.code[..at].matches('\n').count() + 1;
        let mut found = Vec::new();
        for (range, name, path) in &f.uses {
            if name != "*" {
                found.push((range.start, scope_at(f, range.start), path.clone()));
            }
        }
        let code = &f.code;
        let mut at = 0;
        while at < code.len() {
            let Some(n) = code[at..].find("::") else {
                break;
            };
            let sep = at + n;
            at = sep + 2;
            let start = code[..sep]
                .char_indices()
                .rev()
                .take_while(|(_, c)| is_ident(*c))
                .last()
                .map_or(sep, |(i, _)| i);
            if start == sep || code[..start].ends_with("::") {
                continue;
            }
            let mut path = Vec::new();
            let mut p = start;
            while let Some(seg) = ident(&code[p..]) {
                path.push(seg.to_owned());
                p += code[p..].find(seg).unwrap_or(0) + seg.len();
                match code[p..].strip_prefix("::") {
                    Some(_) => p += 2,
                    None => break,
                }
            }
            at = at.max(p);
            let scope = scope_at(f, start);
            let mut child = scope.clone();
            child.1.push(path[0].clone());
            let named = f.uses.iter().any(|(_, n, _)| *n == path[0]);
            let keyword = matches!(path[0].as_str(), "crate" | "super" | "self" | "fencing_lab");
            if keyword || named || krate.is_module(&child) {
                found.push((start, scope, path));
            }
        }
        let in_tests = |at: usize| f.tests.iter().any(|r| r.contains(&at));
        for (at, scope, path) in found.into_iter().filter(|(at, ..)| !in_tests(*at)) {
            let inside = |to: &String| {
                let m = &krate.files[to].module;
                m.0 == f.module.0 && f.module.1.starts_with(&m.1)
            };
            if let Some(to) = krate.resolve(&scope, &path, 0).filter(|to| !inside(to)) {
                edges.push(Edge {
                    from: rel.clone(),
                    to,
                    line: line(at),
                });
            }
        }
    }
    edges.sort_by(|a, b| (&a.from, a.line).cmp(&(&b.from, b.line)));
    edges
}

/// The groups of files that import each other (directly or through others), each sorted.
fn circles(edges: &[Edge]) -> Vec<Vec<String>> {
    let mut next: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for e in edges {
        next.entry(&e.from).or_default().insert(&e.to);
    }
    let reach = |from: &str| {
        let (mut seen, mut todo) = (BTreeSet::new(), vec![from]);
        while let Some(m) = todo.pop() {
            for n in next.get(m).into_iter().flatten() {
                if seen.insert(*n) {
                    todo.push(n);
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&str, BTreeSet<&str>> = next.keys().map(|m| (*m, reach(m))).collect();
    let mut out: Vec<Vec<String>> = Vec::new();
    for (m, r) in &reached {
        if !r.contains(m) || out.iter().any(|c| c.iter().any(|f| f == m)) {
            continue;
        }
        let group = (r.iter())
            .filter(|n| reached.get(*n).is_some_and(|back| back.contains(m)))
            .map(|n| n.to_string());
        out.push(group.collect());
    }
    out
}

/// Every `.rs` file under `src/`, by its path from the crate's root (`src/core/lease.rs`).
fn crate_sources() -> BTreeMap<String, String> {
    fn walk(dir: &Path, root: &Path, out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).expect("src dir") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                walk(&path, root, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.insert(
                    rel,
                    std::fs::read_to_string(&path).expect("readable source"),
                );
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = BTreeMap::new();
    walk(&root.join("src"), root, &mut out);
    out
}

#[test]
fn no_file_of_the_crate_imports_itself_through_others() {
    let edges = crate_edges(&crate_sources());
    // The scan sees imports through a facade, inline paths and the binary's own modules, so
    // a broken scanner cannot pass vacuously.
    for (from, to) in [
        ("src/replay/backends.rs", "src/replay/backends/etcd.rs"),
        ("src/replay/backends/etcd.rs", "src/replay/lock.rs"),
        ("src/replay/pg.rs", "src/replay/outcome.rs"),
        ("src/lab/controls.rs", "src/lab/edit.rs"),
        ("src/replay/mod.rs", "src/replay/run.rs"),
        ("src/replay/run.rs", "src/core/client.rs"),
        ("src/share.rs", "src/lab/edit.rs"),
        ("src/core/engine.rs", "src/core/actor.rs"),
    ] {
        assert!(
            edges.iter().any(|e| e.from == from && e.to == to),
            "expected {from} to import {to}"
        );
    }
    let known: Vec<Vec<String>> = (KNOWN_CIRCLES.iter())
        .map(|c| c.iter().map(|f| f.to_string()).collect())
        .collect();
    let found = circles(&edges);
    let show = |c: &Vec<String>| {
        let shown = (edges.iter())
            .filter(|e| c.contains(&e.from) && c.contains(&e.to))
            .map(|e| format!("  {}:{} imports {}", e.from, e.line, e.to));
        format!(
            "{}:\n{}",
            c.join(" ↔ "),
            shown.collect::<Vec<_>>().join("\n")
        )
    };
    let new: Vec<String> = found
        .iter()
        .filter(|c| !known.contains(c))
        .map(show)
        .collect();
    assert!(
        new.is_empty(),
        "files that import each other:\n{}",
        new.join("\n")
    );
    for c in &known {
        assert!(
            found.contains(c),
            "{c:?} is no circle now: take it off KNOWN_CIRCLES"
        );
    }
}

#[test]
fn the_crate_scan_catches_a_circle_through_a_facade_and_ignores_test_modules() {
    // The replay's old circle: the port imported its adapter, the adapter the port and an
    // item a facade re-exported from the run.
    let files: BTreeMap<String, String> = [
        ("src/main.rs", "mod replay;\n"),
        ("src/replay/mod.rs", "mod etcd;\nmod lock;\nmod run;\nuse run::observe;\n"),
        ("src/replay/lock.rs", "use super::{etcd, observe};\npub trait Lock {}\n"),
        ("src/replay/etcd.rs", "pub struct E;\nimpl super::lock::Lock for E {}\n"),
        ("src/replay/run.rs", "pub fn observe() { super::etcd::E; }\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use super::super::lock::Lock;\n}\n"),
        ("src/lib.rs", "pub mod core;\n"),
        ("src/core/mod.rs", "mod lease;\npub use lease::Fence;\n"),
        ("src/core/lease.rs", "pub struct Fence;\n"),
    ]
    .map(|(p, s)| (p.to_owned(), s.to_owned()))
    .into();
    let edges = crate_edges(&files);
    let pairs: Vec<(&str, &str, usize)> = (edges.iter())
        .map(|e| (e.from.as_str(), e.to.as_str(), e.line))
        .collect();
    assert!(
        pairs.contains(&("src/replay/lock.rs", "src/replay/run.rs", 1)),
        "{pairs:?}"
    );
    assert!(
        pairs.contains(&("src/replay/etcd.rs", "src/replay/lock.rs", 2)),
        "{pairs:?}"
    );
    assert!(
        pairs.contains(&("src/replay/run.rs", "src/replay/etcd.rs", 1)),
        "{pairs:?}"
    );
    assert!(
        !pairs
            .iter()
            .any(|p| p.0 == "src/replay/run.rs" && p.1 == "src/replay/lock.rs"),
        "{pairs:?}"
    );
    assert_eq!(
        circles(&edges),
        [vec![
            "src/replay/etcd.rs".to_owned(),
            "src/replay/lock.rs".into(),
            "src/replay/run.rs".into()
        ]]
    );
    // Without the port importing the run (which names the adapter), no circle is left; a facade's re-export is its source's,
    // and a child naming its parent's own item imports nothing.
    let mut fixed = files.clone();
    fixed.insert(
        "src/replay/pg.rs".into(),
        "use super::{etcd::E, Case};\n".into(),
    );
    fixed.insert("src/replay/mod.rs".into(), "mod etcd;\nmod lock;\nmod pg;\nmod run;\nuse run::observe;\nstruct Case;\nfn f() { pg::go() }\n".into());
    fixed.insert("src/replay/lock.rs".into(), "pub trait Lock {}\n".into());
    fixed.insert(
        "src/core/deck.rs".into(),
        "use crate::core::Fence;\n".into(),
    );
    let edges = crate_edges(&fixed);
    assert!(circles(&edges).is_empty(), "{edges:?}");
    let pairs: Vec<(&str, &str)> = (edges.iter())
        .map(|e| (e.from.as_str(), e.to.as_str()))
        .collect();
    assert!(
        pairs.contains(&("src/core/deck.rs", "src/core/lease.rs")),
        "{pairs:?}"
    );
    assert!(
        pairs.contains(&("src/replay/mod.rs", "src/replay/pg.rs")),
        "{pairs:?}"
    );
    let from_pg: Vec<_> = pairs.iter().filter(|p| p.0 == "src/replay/pg.rs").collect();
    assert_eq!(from_pg, [&("src/replay/pg.rs", "src/replay/etcd.rs")]);
}

/// The link codec is layered on the lab, as quinn-proto's errors are on each other:
/// `share.rs` reads a link's `key=value` with the lab's `ScenarioEdit::parse` and wraps its
/// `ParseError`; nothing in `src/lab/` names `share`, so the two cannot import each other.
#[test]
fn the_lab_does_not_use_the_link_codec() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/lab");
    for entry in std::fs::read_dir(dir).expect("src/lab") {
        let path = entry.expect("dir entry").path();
        let src = std::fs::read_to_string(&path).expect("readable source");
        let code = code_only(&src);
        assert!(
            !code.contains("share::"),
            "{} names the link codec, which is built on the lab",
            path.display()
        );
    }
}
