//! Export the timeline for slides. The SVG is cloned with its computed colours inlined
//! (CSS variables do not travel), then saved as .svg, or drawn onto a 2× canvas for .png.

use leptos::prelude::*;
use wasm_bindgen::prelude::*;

use std::sync::Arc;

use super::Dispatch;
use crate::core::Trace;
use crate::lab::Msg;

#[wasm_bindgen(inline_js = r#"
const PROPS = ['fill', 'fill-opacity', 'stroke', 'stroke-width', 'stroke-dasharray', 'opacity',
  'font-size', 'font-weight', 'font-family', 'font-style', 'text-anchor', 'paint-order',
  'text-decoration'];

function save(blob, name) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 5000);
}

export function export_timeline(selector, filename, png) {
  try {
    draw(selector, filename, png);
    return '';
  } catch (e) {
    return String(e && e.message ? e.message : e);
  }
}

function draw(selector, filename, png) {
  const svg = document.querySelector(selector);
  if (!svg) throw new Error('there is no timeline on the page to export');
  const clone = svg.cloneNode(true);
  const from = svg.querySelectorAll('*');
  const to = clone.querySelectorAll('*');
  from.forEach((el, i) => {
    const cs = getComputedStyle(el);
    for (const p of PROPS) {
      const v = cs.getPropertyValue(p);
      if (v) to[i].style.setProperty(p, v);
    }
  });
  const vb = svg.viewBox.baseVal;
  const bg = getComputedStyle(svg).backgroundColor;
  clone.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
  clone.setAttribute('width', String(vb.width));
  clone.setAttribute('height', String(vb.height));
  const back = document.createElementNS('http://www.w3.org/2000/svg', 'rect');
  back.setAttribute('width', '100%');
  back.setAttribute('height', '100%');
  back.setAttribute('fill', bg);
  clone.insertBefore(back, clone.firstChild);
  const text = new XMLSerializer().serializeToString(clone);
  const blob = new Blob([text], { type: 'image/svg+xml' });
  if (!png) {
    save(blob, filename);
    return;
  }
  const url = URL.createObjectURL(blob);
  const img = new Image();
  img.onload = () => {
    const scale = 2;
    const canvas = document.createElement('canvas');
    canvas.width = Math.round(vb.width * scale);
    canvas.height = Math.round(vb.height * scale);
    const ctx = canvas.getContext('2d');
    ctx.scale(scale, scale);
    ctx.drawImage(img, 0, 0);
    URL.revokeObjectURL(url);
    canvas.toBlob((b) => save(b, filename), 'image/png');
  };
  img.src = url;
}
"#)]
extern "C" {
    /// Returns an empty string on success, else the browser's reason.
    fn export_timeline(selector: &str, filename: &str, png: bool) -> String;
}

/// Saves the main timeline; the error text is for the page's message banner.
pub fn save_timeline(name: &str, png: bool) -> Result<(), String> {
    let ext = if png { "png" } else { "svg" };
    match export_timeline(
        "svg.timeline.main",
        &format!("fencing-lab-{name}.{ext}"),
        png,
    ) {
        e if e.is_empty() => Ok(()),
        e => Err(format!("Export failed: {e}")),
    }
}

/// Exports the timeline of the run on screen; a failure shows in the page's message banner.
pub(super) fn export(dispatch: Dispatch, trace: Memo<Arc<Trace>>, png: bool) {
    let name = trace.with_untracked(|t| t.scenario.id.clone());
    if let Err(e) = save_timeline(&name, png) {
        dispatch.msg(Msg::Refuse(e));
    }
}
