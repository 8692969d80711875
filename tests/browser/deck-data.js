// The deck as data, from the core itself (`fencing-lab deck --json`): the browser tests read
// ids, the count and each run's expected outcome from here instead of keeping their own copy.
// FENCING_DECK_JSON may name a file holding that output (CI can write it once).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function load() {
  if (process.env.FENCING_DECK_JSON) return readFileSync(process.env.FENCING_DECK_JSON, 'utf8');
  return execFileSync('cargo', ['run', '-q', '--', 'deck', '--json'], { cwd: root, encoding: 'utf8', maxBuffer: 1 << 24 });
}

/** `{ count, entries: [{ id, title, question, runs: { off, strict, same_epoch } }] }`; each run
 * has `value` (the balance or result row), `outcome`, `steps`, `say_words` and `codes` (the
 * result codes of its timeline markers other than ok). */
export const deck = JSON.parse(load());
export const POLICIES = ['off', 'strict', 'same_epoch'];
