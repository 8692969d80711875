//! The fewest DOM edits that turn one rendering of a panel into the next.
//!
//! [`crate::timeline`] and [`crate::panels`] render whole panels as markup. Writing all of
//! it back on every pointer move makes the browser reparse, restyle and relay out every
//! node, so [`diff`] compares the old and new markup as strings (cheap, in wasm) and
//! returns [`Edit`]s: an attribute or a text changed in place where an element keeps its
//! name, and a splice of freshly parsed nodes only where the shape changed. The shell
//! applies them; natively they are checked by applying them to a parsed tree.
//!
//! It reads only markup this crate writes: well-formed, text and attribute values escaped
//! with [`crate::timeline::esc`] (so no `>` inside a tag), double-quoted attribute values,
//! no comments, no raw-text elements, and nothing the HTML parser would rearrange.

/// Elements that have no closing tag.
const VOID: [&str; 8] = ["area", "br", "col", "hr", "img", "input", "meta", "wbr"];

/// One change to the DOM under a panel's element. `path` indexes child nodes, starting
/// from the panel's own element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    /// Replace `remove` children of the node at `path`, from child `from` on, with the
    /// `add` nodes that `html` parses to. `children` is how many child nodes the node has
    /// before the splice: the shell checks both counts, and should the page disagree it
    /// writes the panel whole instead.
    Splice {
        path: Vec<u32>,
        children: u32,
        from: u32,
        remove: u32,
        add: u32,
        html: String,
    },
    /// Set (or, with `None`, remove) one attribute of the element at `path`.
    Attr {
        path: Vec<u32>,
        name: String,
        value: Option<String>,
    },
    /// Set the text of the text node at `path`.
    Text { path: Vec<u32>, text: String },
}

/// The top-level pieces of `html`, in order: each is one whole element, or one run of text.
/// Joined back together they give `html` again.
///
/// (The scanning here is by hand over bytes: the std pattern searchers would add
/// kilobytes to the wasm for markup this simple.)
pub fn pieces(html: &str) -> Vec<&str> {
    let bytes = html.as_bytes();
    let mut out = Vec::new();
    let mut depth = 0_usize;
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'<' {
            // A run of text at the top level is a piece of its own.
            let end = next(bytes, i, b'<');
            if depth == 0 {
                out.push(&html[i..end]);
                start = end;
            }
            i = end;
            continue;
        }
        let close = (next(bytes, i, b'>') + 1).min(bytes.len());
        let tag = &bytes[i..close];
        if tag.get(1) == Some(&b'/') {
            depth = depth.saturating_sub(1);
        } else if !tag.ends_with(b"/>") && !is_void(tag) {
            depth += 1;
        }
        i = close;
        if depth == 0 {
            out.push(&html[start..i]);
            start = i;
        }
    }
    if start < html.len() {
        out.push(&html[start..]);
    }
    out
}

/// The index of the first `b` at or after `from`, or the end.
fn next(bytes: &[u8], from: usize, b: u8) -> usize {
    bytes[from..]
        .iter()
        .position(|&c| c == b)
        .map_or(bytes.len(), |k| from + k)
}

fn ends_name(c: u8) -> bool {
    c.is_ascii_whitespace() || c == b'>' || c == b'/' || c == b'='
}

/// The element name of a start tag (`<name ...>`).
fn tag_name(tag: &[u8]) -> &[u8] {
    let rest = tag.strip_prefix(b"<").unwrap_or(tag);
    let end = rest
        .iter()
        .position(|&c| ends_name(c))
        .unwrap_or(rest.len());
    &rest[..end]
}

fn is_void(tag: &[u8]) -> bool {
    let name = tag_name(tag);
    VOID.iter().any(|v| v.as_bytes() == name)
}

/// An element piece as (start tag, content); `None` for a run of text.
fn element(piece: &str) -> Option<(&str, &str)> {
    let bytes = piece.as_bytes();
    if bytes.first() != Some(&b'<') {
        return None;
    }
    let start_end = next(bytes, 0, b'>') + 1;
    let start = piece.get(..start_end)?;
    if start.ends_with("/>") || is_void(start.as_bytes()) {
        return Some((start, ""));
    }
    let end_start = (start_end..bytes.len().saturating_sub(1))
        .rev()
        .find(|&k| bytes[k] == b'<' && bytes[k + 1] == b'/')?;
    Some((start, piece.get(start_end..end_start)?))
}

/// The attributes of a start tag, in order, values unescaped.
pub fn attributes(tag: &str) -> Vec<(&str, String)> {
    raw_attributes(tag).map(|(n, v)| (n, unescape(v))).collect()
}

/// The attributes of a start tag, in order, values as written. An iterator, so pairing
/// children by class ([`key`]) allocates nothing on a drag's every move.
fn raw_attributes(tag: &str) -> impl Iterator<Item = (&str, &str)> {
    let bytes = tag.as_bytes();
    let mut i = 1 + tag_name(bytes).len();
    std::iter::from_fn(move || {
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= bytes.len() || bytes[i] == b'>' || bytes[i] == b'/' {
            return None;
        }
        let name_start = i;
        while i < bytes.len() && !ends_name(bytes[i]) {
            i += 1;
        }
        let name = &tag[name_start..i];
        if bytes.get(i) == Some(&b'=') && bytes.get(i + 1) == Some(&b'"') {
            let close = next(bytes, i + 2, b'"');
            let value = &tag[i + 2..close];
            i = close + 1;
            Some((name, value))
        } else {
            Some((name, ""))
        }
    })
}

/// Undoes [`crate::timeline::esc`].
pub fn unescape(s: &str) -> String {
    const ENTITIES: [(&str, char); 5] = [
        ("&lt;", '<'),
        ("&gt;", '>'),
        ("&quot;", '"'),
        ("&#39;", '\''),
        ("&amp;", '&'),
    ];
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(k) = rest.bytes().position(|c| c == b'&') {
        out.push_str(&rest[..k]);
        rest = &rest[k..];
        match ENTITIES.iter().find(|(e, _)| rest.starts_with(e)) {
            Some((e, c)) => {
                out.push(*c);
                rest = &rest[e.len()..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The edits that turn the children rendered as `old` into those rendered as `new`.
/// Empty when they are equal.
pub fn diff(old: &str, new: &str) -> Vec<Edit> {
    let mut out = Vec::new();
    let mut path = Vec::new();
    level(old, new, &mut path, &mut out);
    out
}

fn level(old: &str, new: &str, path: &mut Vec<u32>, out: &mut Vec<Edit>) {
    if old == new {
        return;
    }
    let (a, b) = (pieces(old), pieces(new));
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (a_mid, b_mid) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    // Where the page is now: the index of the next old piece, and the number of children.
    let mut at = head as u32;
    let mut children = a.len() as u32;
    for step in align(a_mid, b_mid) {
        match step {
            Step::Keep(x, y) => {
                if x != y {
                    path.push(at);
                    in_place(x, y, path, out);
                    path.pop();
                }
                at += 1;
            }
            Step::Remove => splice(out, path, &mut children, at, None),
            Step::Insert(y) => {
                splice(out, path, &mut children, at, Some(y));
                at += 1;
            }
        }
    }
}

/// Turns the node at `path`, rendered as `x`, into `y`: they have the same key.
fn in_place(x: &str, y: &str, path: &mut Vec<u32>, out: &mut Vec<Edit>) {
    match (element(x), element(y)) {
        (Some((sx, cx)), Some((sy, cy))) => {
            if sx != sy {
                attribute_edits(sx, sy, path, out);
            }
            level(cx, cy, path, out);
        }
        _ => out.push(Edit::Text {
            path: path.clone(),
            text: unescape(y),
        }),
    }
}

/// What pairs a piece with its counterpart: the element's name and first class, so a
/// marker stays a marker and a band a band while their attributes change.
fn key(piece: &str) -> (&[u8], &str) {
    match element(piece) {
        None => (b"#text", ""),
        Some((start, _)) => {
            let class = raw_attributes(start)
                .find(|(n, _)| *n == "class")
                .and_then(|(_, v)| v.split_ascii_whitespace().next())
                .unwrap_or_default();
            (tag_name(start.as_bytes()), class)
        }
    }
}

enum Step<'a> {
    Keep(&'a str, &'a str),
    Remove,
    Insert(&'a str),
}

/// A longest common subsequence of keys: kept pieces are edited in place, the rest are
/// removed or inserted. The lists are a panel's children, a few dozen at most.
fn align<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<Step<'a>> {
    // The usual move: the same shapes in the same order, only values changed.
    if a.len() == b.len() && a.iter().zip(b).all(|(x, y)| key(x) == key(y)) {
        return a.iter().zip(b).map(|(x, y)| Step::Keep(x, y)).collect();
    }
    let ka: Vec<_> = a.iter().map(|p| key(p)).collect();
    let kb: Vec<_> = b.iter().map(|p| key(p)).collect();
    let (n, m) = (a.len(), b.len());
    // lcs[i * w + j]: the longest common run of ka[i..] and kb[j..].
    let w = m + 1;
    let mut lcs = vec![0_u32; (n + 1) * w];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i * w + j] = if ka[i] == kb[j] {
                lcs[(i + 1) * w + j + 1] + 1
            } else {
                lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut steps = Vec::with_capacity(n.max(m));
    while i < n || j < m {
        if i < n && j < m && ka[i] == kb[j] {
            steps.push(Step::Keep(a[i], b[j]));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) {
            steps.push(Step::Remove);
            i += 1;
        } else {
            steps.push(Step::Insert(b[j]));
            j += 1;
        }
    }
    steps
}

/// Removes the child at `at` (`None`) or inserts `piece` there, joining a splice that ends
/// just before it.
fn splice(out: &mut Vec<Edit>, path: &[u32], children: &mut u32, at: u32, piece: Option<&str>) {
    let (remove, add) = if piece.is_some() { (0, 1) } else { (1, 0) };
    *children = *children + add - remove;
    if let Some(Edit::Splice {
        path: p,
        from,
        remove: r,
        add: a,
        html,
        ..
    }) = out.last_mut()
    {
        if p == path && *from + *a == at {
            *r += remove;
            *a += add;
            html.push_str(piece.unwrap_or_default());
            return;
        }
    }
    out.push(Edit::Splice {
        path: path.to_vec(),
        children: *children + remove - add,
        from: at,
        remove,
        add,
        html: piece.unwrap_or_default().to_owned(),
    });
}

fn attribute_edits(old: &str, new: &str, path: &[u32], out: &mut Vec<Edit>) {
    let (a, b) = (attributes(old), attributes(new));
    for (name, value) in &b {
        if !a.iter().any(|(n, v)| n == name && v == value) {
            out.push(Edit::Attr {
                path: path.to_vec(),
                name: (*name).to_owned(),
                value: Some(value.clone()),
            });
        }
    }
    for (name, _) in &a {
        if !b.iter().any(|(n, _)| n == name) {
            out.push(Edit::Attr {
                path: path.to_vec(),
                name: (*name).to_owned(),
                value: None,
            });
        }
    }
}

#[cfg(test)]
/// A parsed node, for checking edits natively: what the browser would hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    Element {
        name: String,
        attributes: std::collections::BTreeMap<String, String>,
        children: Vec<Node>,
    },
    Text(String),
}

#[cfg(test)]
/// Parses markup this crate writes into nodes.
pub fn parse(html: &str) -> Vec<Node> {
    pieces(html)
        .into_iter()
        .map(|p| match element(p) {
            None => Node::Text(unescape(p)),
            Some((start, content)) => Node::Element {
                name: String::from_utf8_lossy(tag_name(start.as_bytes())).into_owned(),
                attributes: attributes(start)
                    .into_iter()
                    .map(|(n, v)| (n.to_owned(), v))
                    .collect(),
                children: parse(content),
            },
        })
        .collect()
}

#[cfg(test)]
/// Applies edits to parsed nodes as the shell applies them to the page; `None` where the
/// shell's checks would refuse one (and write the panel whole).
pub fn apply(mut nodes: Vec<Node>, edits: &[Edit]) -> Option<Vec<Node>> {
    for e in edits {
        match e {
            Edit::Splice {
                path,
                children,
                from,
                remove,
                add,
                html,
            } => {
                let list = children_at(&mut nodes, path)?;
                let (from, remove) = (*from as usize, *remove as usize);
                let fresh = parse(html);
                if list.len() != *children as usize
                    || from + remove > list.len()
                    || fresh.len() != *add as usize
                {
                    return None;
                }
                list.splice(from..from + remove, fresh);
            }
            Edit::Attr { path, name, value } => {
                let (last, parent) = path.split_last()?;
                match children_at(&mut nodes, parent)?.get_mut(*last as usize)? {
                    Node::Element { attributes, .. } => match value {
                        Some(v) => attributes.insert(name.clone(), v.clone()),
                        None => attributes.remove(name),
                    },
                    Node::Text(_) => return None,
                };
            }
            Edit::Text { path, text } => {
                let (last, parent) = path.split_last()?;
                match children_at(&mut nodes, parent)?.get_mut(*last as usize)? {
                    Node::Text(t) => *t = text.clone(),
                    Node::Element { .. } => return None,
                }
            }
        }
    }
    Some(nodes)
}

#[cfg(test)]
fn children_at<'a>(nodes: &'a mut Vec<Node>, path: &[u32]) -> Option<&'a mut Vec<Node>> {
    match path.split_first() {
        None => Some(nodes),
        Some((i, rest)) => match nodes.get_mut(*i as usize)? {
            Node::Element { children, .. } => children_at(children, rest),
            Node::Text(_) => None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{run, Pause, Scenario};

    fn check(old: &str, new: &str) -> Vec<Edit> {
        let edits = diff(old, new);
        assert_eq!(apply(parse(old), &edits), Some(parse(new)), "{edits:#?}");
        edits
    }

    #[test]
    fn elements_text_and_void_tags_are_pieces() {
        assert_eq!(
            pieces(
                r#"<g class="a"><rect></rect><text>x &lt; y</text></g>tail<input value="1"><b>k</b>"#
            ),
            vec![
                r#"<g class="a"><rect></rect><text>x &lt; y</text></g>"#,
                "tail",
                r#"<input value="1">"#,
                "<b>k</b>"
            ]
        );
        assert_eq!(pieces("<br/><p>a<br>b</p>"), vec!["<br/>", "<p>a<br>b</p>"]);
        assert!(pieces("").is_empty());
    }

    #[test]
    fn attributes_are_read_and_unescaped() {
        assert_eq!(
            attributes(
                r#"<input type="number" data-actor="0" aria-label="A&#39;s &quot;x&quot;" selected>"#
            ),
            vec![
                ("type", "number".to_owned()),
                ("data-actor", "0".to_owned()),
                ("aria-label", "A's \"x\"".to_owned()),
                ("selected", String::new())
            ]
        );
        assert!(attributes("<g>").is_empty());
        assert_eq!(unescape("a &amp;lt; b"), "a &lt; b");
    }

    #[test]
    fn a_new_number_is_one_text_edit() {
        let edits = check(
            r#"<div class="m"><span class="v">90</span><span>x</span></div><p>k</p>"#,
            r#"<div class="m"><span class="v">80</span><span>x</span></div><p>k</p>"#,
        );
        assert_eq!(
            edits,
            vec![Edit::Text {
                path: vec![0, 0, 0],
                text: "80".into()
            }]
        );
        assert!(diff("<p>k</p>", "<p>k</p>").is_empty());
    }

    #[test]
    fn a_moved_marker_is_attribute_edits() {
        let edits = check(
            r#"<g class="ev past"><circle cx="10.0" r="8"></circle></g>"#,
            r#"<g class="ev current"><circle cx="12.5" r="8"></circle></g>"#,
        );
        assert_eq!(edits.len(), 2);
        assert!(edits.iter().all(|e| matches!(e, Edit::Attr { .. })));
        let edits = check(r#"<input value="5" min="0">"#, r#"<input value="6">"#);
        assert_eq!(edits.len(), 2, "one set, one removal");
    }

    #[test]
    fn inserts_removals_and_new_shapes_are_splices() {
        let old = "<a></a><b></b><c></c>";
        let new = "<a></a><x></x><y></y><b></b><c></c>";
        let edits = check(old, new);
        assert_eq!(edits.len(), 1);
        assert!(matches!(
            &edits[0],
            Edit::Splice { from: 1, remove: 0, add: 2, html, .. } if html == "<x></x><y></y>"
        ));
        check(new, old);
        let edits = check("<a></a><b></b><c></c>", "<a></a><i></i><u></u>");
        assert!(matches!(
            &edits[..],
            [Edit::Splice {
                from: 1,
                remove: 2,
                add: 2,
                ..
            }]
        ));
        check("<p>a<b>x</b></p>", "<p><b>x</b>a</p>");
    }

    /// Every rendering the page makes, across a drag of each deck scenario's pause and at
    /// two steps: the edits turn the old markup into exactly the new.
    #[test]
    fn edits_rebuild_every_panel_across_a_drag() {
        for entry in crate::core::deck::DECK {
            let base = (entry.build)();
            let Some((actor, pause)) = base
                .actors
                .iter()
                .enumerate()
                .find_map(|(i, a)| a.pauses.first().map(|p| (i, *p)))
            else {
                continue;
            };
            let room = base.horizon.saturating_sub(pause.duration);
            let mut last: Option<Vec<String>> = None;
            let mut compared = 0;
            for start in (0..=40).map(|k| room * k / 40) {
                let sc = base.clone().with_pause(actor, Pause { start, ..pause });
                let t = run(&sc);
                let renders = vec![
                    crate::timeline::render_story(&t, t.len(), false),
                    crate::timeline::render_story(&t, t.len() / 2, false),
                    crate::panels::ledger(&t, t.len()),
                    crate::panels::story(&t, t.len(), entry.question),
                    crate::panels::params(&sc, Some(&base)),
                ];
                for html in &renders {
                    assert_eq!(pieces(html).concat(), *html);
                }
                if let Some(prev) = &last {
                    for (old, new) in prev.iter().zip(&renders) {
                        check(old, new);
                        compared += 1;
                    }
                }
                last = Some(renders);
            }
            assert!(compared >= 5 * 40, "{}: {compared}", entry.id);
        }
    }

    #[test]
    fn a_drag_rewrites_little_of_the_timeline() {
        let before = Scenario::gc_pause();
        let mut pause = before.actors[0].pauses[0];
        pause.duration += 3;
        let after = before.clone().with_pause(0, pause);
        let (a, b) = (run(&before), run(&after));
        let (a, b) = (
            crate::timeline::render_story(&a, a.len(), false),
            crate::timeline::render_story(&b, b.len(), false),
        );
        let edits = check(&a, &b);
        assert!(!edits.is_empty());
        assert!(
            edits.iter().all(|e| !matches!(e, Edit::Splice { .. })),
            "a longer pause only moves markers: {edits:#?}"
        );
    }

    /// Across every 1 ms move of the headline's pause, including those where events
    /// appear, vanish or change order, most of the timeline is edited in place.
    #[test]
    fn every_move_of_the_headline_keeps_most_of_the_timeline() {
        let base = Scenario::gc_pause();
        let pause = base.actors[0].pauses[0];
        let render = |start| {
            let t = run(&base.clone().with_pause(0, Pause { start, ..pause }));
            crate::timeline::render_story(&t, t.len(), false)
        };
        let mut old = render(0);
        for start in 1..=base.horizon - pause.duration {
            let new = render(start);
            let edits = check(&old, &new);
            let parsed: usize = edits
                .iter()
                .map(|e| match e {
                    Edit::Splice { html, .. } => html.len(),
                    _ => 0,
                })
                .sum();
            assert!(
                parsed * 2 < new.len(),
                "start {start}: {parsed} of {} reparsed",
                new.len()
            );
            old = new;
        }
    }
}
