// Run by scripts/split/wasm-bindgen on the split main module, before the real wasm-bindgen:
// drops the wasm exports of wasm-streams' JS classes (IntoUnderlyingSource, …Sink,
// …ByteSource). leptos's `csr` feature links server_fn's browser client, which depends on
// wasm-streams, and a `#[wasm_bindgen]` export is a root no linker can drop, though the page
// has no server functions and never makes a stream. Without their exports (and their
// descriptors) wasm-bindgen writes no methods for them, and its GC and wasm-opt drop their
// code: 1,625 B of the first screen's wasm gzip and 2.6 KB of glue (measured). The classes'
// empty shells stay in the glue. The edit is the export section's alone, byte for byte.
//   node scripts/unused-exports.mjs <module.wasm>   (rewritten in place)
import { readFileSync, writeFileSync } from 'node:fs';
import { WasmReader } from './wasm-reader.mjs';

/** Exports nothing of the page's calls: wasm-streams' classes, with their descriptors. */
const UNUSED = /^(__wbg_|__wbindgen_describe_)?intounderlying(bytesource|sink|source)_/;

const file = process.argv[2];
const bytes = readFileSync(file);
const r = new WasmReader(bytes);
const uleb = (n) => {
  const out = [];
  do {
    let b = n & 127;
    n = Math.floor(n / 128);
    if (n) b |= 128;
    out.push(b);
  } while (n);
  return Buffer.from(out);
};
const parts = [bytes.subarray(0, 8)];
let dropped = 0;
while (r.more()) {
  const start = r.at;
  const id = r.byte();
  const end = r.leb() + r.at;
  if (id !== 7) {
    parts.push(bytes.subarray(start, end));
    r.at = end;
    continue;
  }
  const kept = [];
  for (let n = r.leb(); n > 0; n -= 1) {
    const entry = r.at;
    const name = r.name();
    r.byte(); // the export's kind
    r.leb(); // and index
    if (UNUSED.test(name)) dropped += 1;
    else kept.push(bytes.subarray(entry, r.at));
  }
  if (r.at !== end) throw new Error('unused-exports: the export section did not parse');
  const section = Buffer.concat([uleb(kept.length), ...kept]);
  parts.push(Buffer.from([7]), uleb(section.length), section);
}
writeFileSync(file, Buffer.concat(parts));
console.error(`unused-exports: dropped ${dropped} exports of wasm-streams' classes`);
