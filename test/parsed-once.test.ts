import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// A channel row and a task's params are parsed once, by their repositories, into typed values
// (core/channel.ts, core/task-params.ts): nothing else parses those JSON columns or casts the result.

const src = path.resolve(import.meta.dirname, '..', 'src');
// Repositories parse their own tables' JSON columns (channels, tasks, groups...): nobody else does.
const isRepository = (file: string) => file.endsWith('.repo.ts');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sources(full);
    return /\.tsx?$/.test(e.name) ? [full] : [];
  });
}

function findings(pattern: RegExp): string[] {
  return sources(src).flatMap((file) => {
    const relative = path.relative(src, file);
    if (isRepository(relative)) return [];
    return fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line, i) => (pattern.test(line) ? [`${relative}:${i + 1}: ${line.trim()}`] : []));
  });
}

describe('JSON columns are parsed once', () => {
  it("no JSON.parse of a channel's options, models or model_mapping, or of a task's params, outside their repositories", () => {
    expect(findings(/JSON\.parse\([^)]*\.(options|models|model_mapping|params)\b/)).toEqual([]);
  });

  it('no cast to a kind of task params: a task call is narrowed by its kind', () => {
    expect(findings(/\bas (ImageParams|VideoParams|AvatarReviewParams)\b/)).toEqual([]);
  });
});
