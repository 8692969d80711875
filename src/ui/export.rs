//! Export the timeline for slides. The SVG is cloned with its computed colours inlined
//! (CSS variables do not travel) and set in its punchline (the title and question, the
//! balance, at the end the outcome off and on: [`crate::view::animation::frame_svg`]), then
//! saved as .svg, or drawn onto a 2× canvas for .png; the Animation export (`ui::animation`)
//! draws each step's frame the same way, with its caption, and reads the canvas back for the
//! encoder. The punchline is made in the exporters' chunk, fetched at the first export. The
//! clipboard is here too.

use leptos::prelude::*;
use wasm_bindgen::prelude::*;

use std::sync::Arc;

use leptos::task::spawn_local;

use super::split::Failed;
use super::Dispatch;
use crate::core::Trace;
use crate::lab::Msg;
use crate::view::animation::{frame_svg, punchline};
use crate::view::panels;

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

export function export_timeline(selector, filename, png, punchline) {
  try {
    draw(selector, filename, png, punchline);
    return '';
  } catch (e) {
    return String(e && e.message ? e.message : e);
  }
}

/** The SVG cloned with its computed styles inlined, at its own size. */
function inlined(svg) {
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
  // A phone's pinned copy of the lanes' names sits where the box was scrolled to: the
  // drawing has its own names.
  for (const el of clone.querySelectorAll('.pinned-names')) el.remove();
  const vb = svg.viewBox.baseVal;
  clone.setAttribute('width', String(vb.width));
  clone.setAttribute('height', String(vb.height));
  return clone;
}

/** The page's colour for a word of the punchline: its class names the CSS variable. */
const hue = (svg, name) => getComputedStyle(svg).getPropertyValue(`--${name}`).trim();

/**
 * The drawing in `svg`, inlined, set in its `punchline` (an SVG with an empty `#timeline`
 * where the drawing goes): the page's background, font and colours filled in.
 */
function framed(svg, punchline) {
  // Parsed in the page's own document, so the clone's inlined styles are not adopted into
  // another one (which the page's Content Security Policy would refuse them in).
  const box = document.createElement('div');
  box.innerHTML = punchline;
  const whole = box.firstElementChild;
  whole.setAttribute('fill', hue(svg, 'fg'));
  whole.setAttribute('font-family', getComputedStyle(document.body).fontFamily);
  for (const el of whole.querySelectorAll('[class]')) el.setAttribute('fill', hue(svg, el.getAttribute('class')));
  whole.querySelector('rect').setAttribute('fill', getComputedStyle(svg).backgroundColor);
  whole.querySelector('#timeline').append(inlined(svg));
  return whole;
}

const blob = (svg) => new Blob([new XMLSerializer().serializeToString(svg)], { type: 'image/svg+xml' });

function draw(selector, filename, png, punchline) {
  const svg = document.querySelector(selector);
  if (!svg) throw new Error('there is no timeline on the page to export');
  const whole = framed(svg, punchline);
  if (!png) {
    save(blob(whole), filename);
    return;
  }
  const vb = whole.viewBox.baseVal;
  const url = URL.createObjectURL(blob(whole));
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
  // The punchline's own colours, which the drawing may not use.
  for (const name of ['muted', 'bad', 'ok']) {
    const m = /^#([0-9a-f]{6})$/i.exec(hue(svg, name));
    if (m) add([0, 2, 4].map((i) => parseInt(m[1].slice(i, i + 2), 16)), 1e7);
  }
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
 * Draws one animation frame, `w` x `h`: the drawing in `selector`, set in its `punchline`,
 * fitted above its caption (`text` wrapped). Waits a task first, so the page has
 * drawn the step; resolves once the canvas holds the frame (read it with take_frame).
 */
export async function draw_frame(selector, w, h, text, punchline) {
  await new Promise((ok) => setTimeout(ok, 0));
  const svg = document.querySelector(selector);
  if (!svg) throw new Error('there is no timeline to draw');
  const body = getComputedStyle(document.body);
  const margin = Math.round(h / 36);
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
  const whole = framed(svg, punchline);
  const vb = whole.viewBox.baseVal;
  const captionH = 3 * full * 1.3;
  const scale = Math.min((w - 2 * margin) / vb.width, (h - captionH - 3 * margin) / vb.height);
  const [dw, dh] = [Math.round(vb.width * scale), Math.round(vb.height * scale)];
  const top = Math.round((h - dh - margin - captionH) / 2);
  const below = top + dh + margin;
  ctx.textBaseline = 'top';
  ctx.fillStyle = body.color;
  lines.forEach((l, i) => ctx.fillText(l, margin, below + i * size * 1.3));
  whole.setAttribute('width', String(dw));
  whole.setAttribute('height', String(dh));
  const url = URL.createObjectURL(blob(whole));
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
    /// Saves the drawing in `selector` set in its `punchline`; returns an empty string on
    /// success, else the browser's reason.
    fn export_timeline(selector: &str, filename: &str, png: bool, punchline: &str) -> String;
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
        text: &str,
        punchline: &str,
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

/// Saves the main timeline set in `frame`; the error text is for the page's message banner.
fn save_timeline(name: &str, png: bool, frame: &str) -> Result<(), String> {
    let ext = if png { "png" } else { "svg" };
    match export_timeline(
        "svg.timeline.main",
        &format!("fencing-lab-{name}.{ext}"),
        png,
        frame,
    ) {
        e if e.is_empty() => Ok(()),
        e => Err(format!("Export failed: {e}")),
    }
}

/// Exports the timeline of the run on screen at its step, in its punchline (the off / on
/// cards are the lab's); a failure shows in the page's message banner.
pub(super) fn export(dispatch: Dispatch, trace: Memo<Arc<Trace>>, png: bool) {
    let t = trace.get_untracked();
    let (step, off, on) = dispatch.0.with_untracked(|l| {
        let (off, on) = l.compare();
        (l.step(), Arc::clone(off), Arc::clone(on))
    });
    spawn_local(async move {
        let name = t.scenario.id.clone();
        let saved = match still_frame(t, step, off, on).await {
            Ok(frame) => save_timeline(&name, png, &frame),
            Err(Failed::Said(why)) => Err(format!("Export failed: {why}")),
            Err(Failed::NotFetched) => Err("Export failed: its code could not be fetched from \
                                            the page's server. Try again."
                .to_owned()),
        };
        if let Err(e) = saved {
            dispatch.msg(Msg::Refuse(e));
        }
    });
}

/// The punchline of `t` at `step` as the frame's SVG, from the exporters' chunk.
#[leptos::wasm_split::wasm_split(exports, fallible, wasm_split_path = ::leptos::wasm_split)]
fn still_frame(
    t: Arc<Trace>,
    step: usize,
    off: Arc<Trace>,
    on: Arc<Trace>,
) -> Result<String, Failed> {
    let cards = panels::compare(&off, &on);
    Ok(frame_svg(&punchline(&t, step, &cards), &t, 0))
}
