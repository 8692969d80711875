//! Puts the display-only markup of [`crate::panels`] and [`crate::timeline`] into the page
//! through the edits of [`crate::markup::diff`]: a drag that moves one marker sets a few
//! attributes of that marker instead of reparsing and restyling the whole timeline. Should
//! the page ever disagree with the markup last written, the panel is written whole.

use leptos::prelude::*;
use wasm_bindgen::prelude::*;

use crate::markup::{diff, Edit};

#[wasm_bindgen(inline_js = r#"
function at(root, path) {
  let node = root;
  for (const i of path) {
    node = node && node.childNodes[i];
  }
  return node || null;
}

export function splice(root, path, children, from, remove, add, html) {
  const parent = at(root, path);
  if (!parent || parent.childNodes.length !== children) return false;
  // A shallow clone parses in the parent's own context (SVG stays SVG), off the document.
  const scratch = parent.cloneNode(false);
  scratch.innerHTML = html;
  if (scratch.childNodes.length !== add) return false;
  const after = parent.childNodes[from + remove] || null;
  for (let k = 0; k < remove; k++) parent.removeChild(parent.childNodes[from]);
  while (scratch.firstChild) parent.insertBefore(scratch.firstChild, after);
  return true;
}

export function set_attr(root, path, name, value) {
  const el = at(root, path);
  if (!el || el.nodeType !== 1) return false;
  if (value === undefined) {
    el.removeAttribute(name);
  } else {
    el.setAttribute(name, value);
    // A field shows its value property, which stops following the attribute once typed in.
    if (name === 'value' && el.nodeName === 'INPUT') el.value = value;
  }
  return true;
}

export function set_text(root, path, text) {
  const node = at(root, path);
  if (!node || node.nodeType !== 3) return false;
  node.nodeValue = text;
  return true;
}
"#)]
extern "C" {
    fn splice(
        root: &web_sys::Element,
        path: &[u32],
        children: u32,
        from: u32,
        remove: u32,
        add: u32,
        html: &str,
    ) -> bool;
    fn set_attr(root: &web_sys::Element, path: &[u32], name: &str, value: Option<String>) -> bool;
    fn set_text(root: &web_sys::Element, path: &[u32], text: &str) -> bool;
}

/// `use:markup=memo`: keeps the element's content equal to the memo's markup.
pub fn markup(el: web_sys::Element, html: Memo<String>) {
    Effect::new(move |shown: Option<String>| {
        html.with(|new| {
            let patched = shown
                .as_deref()
                .is_some_and(|old| diff(old, new).into_iter().all(|e| apply(&el, e)));
            if !patched {
                el.set_inner_html(new);
            }
            new.clone()
        })
    });
}

fn apply(el: &web_sys::Element, edit: Edit) -> bool {
    match edit {
        Edit::Splice {
            path,
            children,
            from,
            remove,
            add,
            html,
        } => splice(el, &path, children, from, remove, add, &html),
        Edit::Attr { path, name, value } => set_attr(el, &path, &name, value),
        Edit::Text { path, text } => set_text(el, &path, &text),
    }
}
