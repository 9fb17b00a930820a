import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The repository's root (the folder with package.json), found from this module's own file, so the
 * same code finds config/ when run from src/ by tsx and from the bundle in dist/server/.
 */
export function projectRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('package.json not found above the gateway code');
    dir = parent;
  }
  return dir;
}
