import { describe, expect, it } from 'vitest';
import { newId } from '../src/lib/ids.ts';

describe('ids', () => {
  it('sort in the order they were made, also within one millisecond', () => {
    const ids = Array.from({ length: 5000 }, () => newId('task'));
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    for (const id of ids) expect(id).toMatch(/^task_[0-9A-HJKMNP-TV-Z]{26}$/);
  });
});
