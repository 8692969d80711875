// A reading position in a wasm module's bytes, shared by the build's export edit
// (unused-exports.mjs) and the cost report (wasm-cost.mjs): LEB128 numbers and names.
export class WasmReader {
  /** Starts after the module's 8-byte header. */
  constructor(bytes) {
    this.bytes = bytes;
    this.at = 8;
  }

  /** The next byte. */
  byte() {
    return this.bytes[this.at++];
  }

  /** An unsigned LEB128 number (as a double: exact up to 2^53). */
  leb() {
    let n = 0;
    let shift = 0;
    let b;
    do {
      b = this.bytes[this.at++];
      n += (b & 127) * 2 ** shift;
      shift += 7;
    } while (b & 128);
    return n;
  }

  /** A length-prefixed UTF-8 name. */
  name() {
    const len = this.leb();
    const s = this.bytes.subarray(this.at, this.at + len).toString('utf8');
    this.at += len;
    return s;
  }

  /** Whether bytes are left. */
  more() {
    return this.at < this.bytes.length;
  }
}
