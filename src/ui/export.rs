//! Export the timeline for slides. The SVG is cloned with its computed colours inlined
//! (CSS variables do not travel), then saved as .svg, or drawn onto a 2× canvas for .png;
//! the Animation export (`ui::animation`) draws each step's frame the same way, with its
//! caption, and reads the canvas back for the encoder. The clipboard is here too.

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

/** The SVG cloned with its computed styles inlined, at `w` x `h` (its own size unless given). */
function inlined(svg, w, h) {
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
  clone.setAttribute('width', String(w ?? vb.width));
  clone.setAttribute('height', String(h ?? vb.height));
  const back = document.createElementNS('http://www.w3.org/2000/svg', 'rect');
  back.setAttribute('width', '100%');
  back.setAttribute('height', '100%');
  back.setAttribute('fill', bg);
  clone.insertBefore(back, clone.firstChild);
  return new Blob([new XMLSerializer().serializeToString(clone)], { type: 'image/svg+xml' });
}

function draw(selector, filename, png) {
  const svg = document.querySelector(selector);
  if (!svg) throw new Error('there is no timeline on the page to export');
  const blob = inlined(svg);
  if (!png) {
    save(blob, filename);
    return;
  }
  const vb = svg.viewBox.baseVal;
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

export function message(e) {
  return e == null ? null : String(e && e.message ? e.message : e);
}

export function save_bytes(bytes, filename, type) {
  save(new Blob([bytes.slice()], { type }), filename);
}

export function copy_text(text) {
  if (!navigator.clipboard) return Promise.reject(new Error('this browser gives the page no clipboard'));
  return navigator.clipboard.writeText(text);
}

const RGB = /rgba?\((\d+),\s*(\d+),\s*(\d+)(?:,\s*([\d.]+))?/;
const rgb = (v) => {
  const m = RGB.exec(v);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3]), m[4] === undefined ? 1 : Number(m[4])] : null;
};
const over = (c, a, bg) => c.slice(0, 3).map((v, i) => Math.round(v * a + bg[i] * (1 - a)));

/**
 * The colours a frame is drawn in, most used first: the page's background, its text colours,
 * then every fill and stroke of the drawing, and each translucent one as it shows over the
 * drawing's background. Flat r,g,b triples.
 */
export function frame_colours(selector) {
  const svg = document.querySelector(selector);
  if (!svg) return new Uint8Array();
  const page = rgb(getComputedStyle(document.body).backgroundColor) ?? [255, 255, 255, 1];
  const panel = rgb(getComputedStyle(svg).backgroundColor) ?? page;
  const counts = new Map();
  const add = (c, n) => { const k = c.join(','); counts.set(k, (counts.get(k) ?? 0) + n); };
  add(panel.slice(0, 3), 1e9);
  add(rgb(getComputedStyle(document.body).color).slice(0, 3), 1e8);
  for (const el of svg.querySelectorAll('*')) {
    const cs = getComputedStyle(el);
    let alpha = Number(cs.opacity);
    for (let up = el.parentElement; up && up !== svg; up = up.parentElement) alpha *= Number(getComputedStyle(up).opacity);
    for (const [prop, op] of [['fill', 'fill-opacity'], ['stroke', 'stroke-opacity']]) {
      const c = rgb(cs.getPropertyValue(prop));
      if (!c) continue;
      const a = c[3] * Number(cs.getPropertyValue(op) || 1) * alpha;
      if (a <= 0.02) continue;
      if (a < 0.98) add(over(c, a, panel), 1);
      add(c.slice(0, 3), 1);
    }
  }
  const sorted = [...counts].sort((x, y) => y[1] - x[1]).map(([k]) => k.split(',').map(Number));
  return new Uint8Array([...page.slice(0, 3), ...sorted.flat()]);
}

let frame = null;

/** Lines of `text` in `font` no wider than `width`. */
function wrap(ctx, text, width) {
  const lines = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    const next = line ? `${line} ${word}` : word;
    if (line && ctx.measureText(next).width > width) {
      lines.push(line);
      line = word;
    } else {
      line = next;
    }
  }
  if (line) lines.push(line);
  return lines;
}

/**
 * Draws one animation frame, `w` x `h`: the drawing in `selector` fitted above its caption
 * (`head`, then `text` wrapped). Waits a task first, so the page has drawn the step; resolves
 * once the canvas holds the frame (read it with take_frame).
 */
export async function draw_frame(selector, w, h, head, text) {
  await new Promise((ok) => setTimeout(ok, 0));
  const svg = document.querySelector(selector);
  if (!svg) throw new Error('there is no timeline to draw');
  const body = getComputedStyle(document.body);
  // The head line in the drawing's own muted colour (its axis labels').
  const tick = svg.querySelector('.tick-label');
  const muted = tick ? getComputedStyle(tick).fill : body.color;
  const margin = Math.round(h / 36);
  const headSize = Math.round(h / 40);
  const canvas = frame ?? document.createElement('canvas');
  frame = canvas;
  canvas.width = w;
  canvas.height = h;
  const ctx = canvas.getContext('2d', { willReadFrequently: true });
  ctx.fillStyle = body.backgroundColor;
  ctx.fillRect(0, 0, w, h);
  // The caption: up to three lines, a smaller type if the narration needs more. Its room is
  // three lines of the full type in every frame, so the drawing never moves.
  const full = Math.round(h / 26);
  let size = full;
  let lines;
  for (;; size -= 1) {
    ctx.font = `600 ${size}px ${body.fontFamily}`;
    lines = wrap(ctx, text, w - 2 * margin);
    if (lines.length <= 3 || size <= h / 45) break;
  }
  // The drawing as large as fits above the caption; the two together in the middle.
  const vb = svg.viewBox.baseVal;
  const captionH = headSize * 1.5 + 3 * full * 1.3;
  const scale = Math.min((w - 2 * margin) / vb.width, (h - captionH - 3 * margin) / vb.height);
  const [dw, dh] = [Math.round(vb.width * scale), Math.round(vb.height * scale)];
  const top = Math.round((h - dh - margin - captionH) / 2);
  const below = top + dh + margin;
  ctx.textBaseline = 'top';
  ctx.fillStyle = body.color;
  lines.forEach((l, i) => ctx.fillText(l, margin, below + headSize * 1.5 + i * size * 1.3));
  ctx.font = `${headSize}px ${body.fontFamily}`;
  ctx.fillStyle = muted;
  ctx.fillText(head, margin, below);
  const url = URL.createObjectURL(inlined(svg, dw, dh));
  try {
    const img = new Image();
    img.src = url;
    await img.decode();
    ctx.drawImage(img, Math.round((w - dw) / 2), top, dw, dh);
  } finally {
    URL.revokeObjectURL(url);
  }
}

/** Copies the last frame drawn into `out` (w x h x 4 bytes of RGBA); false if there is none. */
export function take_frame(out) {
  if (!frame) return false;
  out.set(frame.getContext('2d').getImageData(0, 0, frame.width, frame.height).data);
  return true;
}
"#)]
extern "C" {
    /// Returns an empty string on success, else the browser's reason.
    fn export_timeline(selector: &str, filename: &str, png: bool) -> String;
    /// Saves `bytes` as a download called `filename`.
    pub(super) fn save_bytes(bytes: &[u8], filename: &str, mime: &str);
    /// Writes `text` to the clipboard; fails with the browser's reason.
    #[wasm_bindgen(catch)]
    pub(super) async fn copy_text(text: &str) -> Result<JsValue, JsValue>;
    /// The colours of the drawing in `selector`, page background first, as r,g,b bytes.
    pub(super) fn frame_colours(selector: &str) -> Vec<u8>;
    /// Draws one animation frame onto the exporter's canvas.
    #[wasm_bindgen(catch)]
    pub(super) async fn draw_frame(
        selector: &str,
        w: u16,
        h: u16,
        head: &str,
        text: &str,
    ) -> Result<JsValue, JsValue>;
    /// Copies the last frame drawn into `out` as RGBA.
    pub(super) fn take_frame(out: &mut [u8]) -> bool;
    /// An error's message (`null` for none).
    fn message(e: &JsValue) -> Option<String>;
}

/// The browser's reason for a failed call, as text for the page.
pub(super) fn reason(e: &JsValue) -> String {
    message(e).unwrap_or_else(|| "the browser gave no reason".to_owned())
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
