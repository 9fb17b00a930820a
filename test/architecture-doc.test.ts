import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { architectureDoc } from '../scripts/architecture-rules.ts';

// docs/architecture.md is where a newcomer finds the room for a change: its import rules are the
// CI's own (generated), and every file or folder it names exists.

const root = path.resolve(import.meta.dirname, '..');
const doc = fs.readFileSync(path.join(root, 'docs', 'architecture.md'), 'utf8');

/** Code spans that name a path: a folder (`x/`) or a file with an extension. */
function namedPaths(text: string): string[] {
  const spans = [...text.matchAll(/`([^`\s]+)`/g)].map((m) => m[1]!);
  return [...new Set(spans.filter((s) => /^[\w.<>/-]+$/.test(s) && (s.endsWith('/') || /\.(ts|tsx|cjs|md|json)$/.test(s)) && !s.includes('<')))];
}

/** A path as the doc writes it: under src/ unless it names another top-level folder; a bare file name is looked for anywhere under src/. */
function exists(named: string): boolean {
  const candidates = [path.join(root, 'src', named), path.join(root, named)];
  if (candidates.some((c) => fs.existsSync(c))) return true;
  if (named.includes('/')) {
    // `tasks/task-worker.ts` after `modules/tasks/...` in the same sentence: a path below some folder of src/.
    return files(path.join(root, 'src')).some((f) => f.endsWith(`/${named.replace(/\/$/, '')}`));
  }
  return files(path.join(root, 'src')).some((f) => path.basename(f) === named);
}

function files(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? [full, ...files(full)] : [full];
  });
}

describe('docs/architecture.md', () => {
  it('draws the import rules from .dependency-cruiser.cjs (npm run docs:architecture)', () => {
    expect(doc).toBe(architectureDoc(doc));
  });

  it('names only files and folders that exist', () => {
    const missing = namedPaths(doc).filter((named) => !exists(named));
    expect(missing).toEqual([]);
  });

  it('names every folder of src/ in its layer table', () => {
    const table = doc.slice(doc.indexOf('## The layers'), doc.indexOf('## The direction of imports'));
    const folders = fs.readdirSync(path.join(root, 'src'), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => `\`${e.name}/`);
    expect(folders.filter((f) => !table.includes(f))).toEqual([]);
  });
});
