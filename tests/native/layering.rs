//! The core's modules form a line: each may use only the modules before it. This reads
//! `src/core/*.rs`, collects every `super::NAME` (and `crate::core::NAME`) path that names a
//! sibling module, in `use` items and inline alike, and fails on any reference that points
//! forward or sideways in [`LINE`], and on any cycle. The line written in `src/core/mod.rs`
//! and in docs/design.md must be this one.

use std::collections::{BTreeMap, BTreeSet};

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
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(dir).expect("src/core") {
        let path = entry.expect("dir entry").path();
        if path.extension().is_some_and(|e| e == "rs") {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            let src = std::fs::read_to_string(&path).expect("readable source");
            files.insert(name, src);
        } else if path.join("mod.rs").is_file() {
            // A module split into a directory (`story/`): its files together are the module.
            // Inside it, `super::` is the module itself, so only `super::super::` (the core)
            // names another core module.
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
            files.insert(name, src);
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
