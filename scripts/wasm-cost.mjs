// What each part of the page costs: the code bytes of the app's wasm (before wasm-bindgen
// and wasm-opt, where the function names still are) summed by whose function it is, as a
// share of all code. A monomorphized generic counts for the crate that defines it. Given
// the shipped wasm's gzip size, each share of it is printed too (an estimate: it assumes
// every part shrinks alike under wasm-opt and gzip).
//   node scripts/wasm-cost.mjs target/wasm32-unknown-unknown/release/fencing-lab.wasm [gzip_bytes]
import { readFileSync } from 'node:fs';
import { WasmReader } from './wasm-reader.mjs';

const bytes = readFileSync(process.argv[2]);
const shipped = Number(process.argv[3] ?? 0);
const r = new WasmReader(bytes);
let imported = 0;
const bodies = [];
const names = new Map();
while (r.more()) {
  const id = r.byte();
  const size = r.leb();
  const end = r.at + size;
  if (id === 2) {
    for (let n = r.leb(); n > 0; n -= 1) {
      r.name();
      r.name();
      const kind = r.byte();
      if (kind === 0) (r.leb(), (imported += 1));
      else if (kind === 1) (r.byte(), r.leb() & 1 ? (r.leb(), r.leb()) : r.leb());
      else if (kind === 2) (r.leb() & 1 ? (r.leb(), r.leb()) : r.leb());
      else if (kind === 3) r.at += 2;
      else throw new Error(`wasm-cost: import kind ${kind}`);
    }
  } else if (id === 10) {
    for (let n = r.leb(); n > 0; n -= 1) {
      const len = r.leb();
      bodies.push(len);
      r.at += len;
    }
  } else if (id === 0 && r.name() === 'name') {
    while (r.at < end) {
      const sub = r.byte();
      const len = r.leb();
      const subEnd = r.at + len;
      if (sub === 1) for (let n = r.leb(); n > 0; n -= 1) names.set(r.leb(), r.name());
      r.at = subEnd;
    }
  }
  r.at = end;
}
if (!names.size) throw new Error('wasm-cost: the wasm has no function names');

/** The path of a legacy-mangled Rust symbol (`_ZN4core3fmt5write17h…E` → core::fmt::write). */
function path(symbol) {
  if (!symbol.startsWith('_ZN')) return [symbol];
  const parts = [];
  let i = 3;
  while (i < symbol.length && symbol[i] !== 'E') {
    const digits = symbol.slice(i).match(/^\d+/)?.[0];
    if (!digits) break;
    i += digits.length;
    parts.push(symbol.slice(i, i + Number(digits)));
    i += Number(digits);
  }
  const escapes = { LT: '<', GT: '>', RF: '&', C: ',', LP: '(', RP: ')', BP: '*', SP: '@' };
  return parts
    .filter((p) => !/^h[0-9a-f]{16}$/.test(p))
    .map((p) =>
      p
        .replace(/^_(?=\$)/, '')
        .replace(/\$u([0-9a-f]+)\$/g, (_, hex) => String.fromCodePoint(parseInt(hex, 16)))
        .replace(/\$([A-Z]+)\$/g, (w, e) => escapes[e] ?? w)
        .replace(/\.\./g, '::'),
    );
}

/** Whose `<Type as Trait>::f` is: the type's crate, or the trait's for a generic type. */
function owner(p) {
  const joined = p.join('::');
  const impl = joined.match(/^<&?(?:mut )?([^ <>]+)[^ ]* as ([^ <>]+)/);
  if (!impl) return joined.replace(/^<+&?/, '');
  return impl[1].includes('::') ? impl[1] : impl[2];
}

// Whose a function is: the app's own parts by module, everything else by crate.
const parts = [
  [/^fencing_lab::core::(story|deck)/, 'words and deck (core::story, core::deck)'],
  [/^fencing_lab::core::explore/, 'schedule explorer (core::explore)'],
  [/^fencing_lab::core::(json|record)/, 'recording import (core::json, core::record)'],
  [/^fencing_lab::core::herd/, 'renewal herd (core::herd)'],
  [/^fencing_lab::core/, 'simulation (the rest of core)'],
  [/^fencing_lab::lab/, 'presenter state (lab)'],
  [/^fencing_lab::share/, 'shareable URL (share)'],
  [/^fencing_lab::view/, 'view models (view)'],
  [/^fencing_lab::ui/, 'Leptos shell (ui)'],
  [/^(leptos|reactive_graph|tachys|any_spawner|or_poisoned|throw_error|oco_ref|slotmap|guardian|send_wrapper|hydration_context|either_of|next_tuple|server_fn|indexmap|leptos_\w+)::/, 'Leptos (and its indexmap, slotmap)'],
  [/^(wasm_bindgen|js_sys|web_sys|wasm_streams|gloo_\w+|console_error_panic_hook)::|^__wbindgen/, 'JS bindings (wasm-bindgen, web-sys, gloo)'],
  [/^(serde|serde_json|ryu|itoa|memchr)::/, 'serde, serde_json'],
  [/^(core|alloc|std|dlmalloc|compiler_builtins|hashbrown|rustc_demangle|panic_abort)::|^_R.*?\d_*(core|alloc|std|dlmalloc|rustc)\d/, 'Rust std (fmt, alloc, collections)'],
];
const cost = new Map();
let total = 0;
bodies.forEach((len, i) => {
  const symbol = names.get(imported + i) ?? '?';
  // wasm-bindgen's type descriptions run at build time and are stripped from the shipped wasm.
  if (/__wbindgen_describe|WasmDescribe|wasm_bindgen\.\.describe|wasm_bindgen::describe/.test(symbol)) return;
  const whose = owner(path(symbol));
  const part = parts.find(([re]) => re.test(whose))?.[1] ?? `other: ${whose.split('::')[0]}`;
  cost.set(part, (cost.get(part) ?? 0) + len);
  total += len;
});
const rows = [...cost].sort((a, b) => b[1] - a[1]);
const shown = rows.filter(([, n]) => n / total >= 0.005);
const line = (n, part) => {
  const gz = shipped ? `  ~${String(Math.round((shipped * n) / total)).padStart(6)} B gzip` : '';
  console.log(`wasm.code_share ${(100 * n / total).toFixed(1).padStart(5)}%  ${String(n).padStart(8)} B${gz}  ${part}`);
};
for (const [part, n] of shown) line(n, part);
const rest = rows.slice(shown.length).reduce((s, [, n]) => s + n, 0);
line(rest, `the rest (${rows.length - shown.length} parts under 0.5% each)`);
console.log(`wasm.code_bytes_before_opt ${total}`);
// WASM_COST_TOP=N also lists the N largest functions, to see what a part's bytes are.
const top = Number(process.env.WASM_COST_TOP ?? 0);
if (top > 0) {
  bodies
    .map((len, i) => [len, path(names.get(imported + i) ?? '?').join('::')])
    .sort((a, b) => b[0] - a[0])
    .slice(0, top)
    .forEach(([len, p]) => console.log(`wasm.function ${String(len).padStart(8)} B  ${p.slice(0, 160)}`));
}
