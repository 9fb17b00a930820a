import { describe, expect, it } from 'vitest';
import { KeptBytes } from '../src/lib/kept-bytes.ts';

// A stream's forwarded bytes, kept in slabs shared by the process (lib/kept-bytes.ts).

const text = (kept: KeptBytes) => kept.readOnce((bytes) => bytes.toString('utf8'));

describe('kept bytes', () => {
  it('reads back every byte in order, across slabs and split characters', () => {
    const kept = new KeptBytes();
    const whole = Buffer.from(`${'é'.repeat(20_000)}|${'x'.repeat(40_000)}|end`);
    for (let at = 0; at < whole.length; at += 777) kept.push([whole.subarray(at, Math.min(at + 333, whole.length)), whole.subarray(Math.min(at + 333, whole.length), Math.min(at + 777, whole.length))]);
    expect(text(kept)).toBe(whole.toString('utf8'));
    expect(text(kept)).toBe(whole.toString('utf8')); // read once, the result kept
  });

  it('slabs given back go to the next stream; what a stream read stays its own', () => {
    const first = new KeptBytes();
    first.push([Buffer.alloc(50_000, 'a')]);
    const read = text(first);
    first.release();
    const second = new KeptBytes();
    second.push([Buffer.alloc(50_000, 'b')]);
    expect(read).toBe('a'.repeat(50_000));
    expect(text(second)).toBe('b'.repeat(50_000));
  });

  it('nothing is read after a release: a stream that ended with its usage', () => {
    const kept = new KeptBytes();
    kept.push([Buffer.from('event: x\n\n')]);
    kept.release();
    kept.push([Buffer.from('more')]);
    expect(() => text(kept)).toThrow(/given back/);
  });

  it('an empty stream reads as nothing', () => {
    expect(text(new KeptBytes())).toBe('');
  });
});
