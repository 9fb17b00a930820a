import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createDb, sqliteWriterOf } from '../src/db/index.ts';
import { waitUntil } from './support/receiver.ts';

// SQLite's WAL is copied back into the database file by a background thread (src/db/checkpointer.ts),
// so the event loop no longer stalls on a checkpoint's fsyncs; the write connection's own automatic
// checkpoint still lets the WAL start over under constant writes.

const PAGE = 4096;

function tempFile(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gw-ckpt-')), 'gateway.db');
}

describe('the background checkpointer [sqlite]', () => {
  it('copies committed pages into the database file while the write connection never checkpoints', async () => {
    const file = tempFile();
    const { db, close } = createDb(`sqlite:${file}`);
    try {
      // Far below the write connection's own threshold (1,000 pages): only the thread copies them.
      sqliteWriterOf(db)!.pragma('wal_autocheckpoint = 100000');
      await sql`create table filler (id integer primary key, body text not null)`.execute(db);
      const before = fs.statSync(file).size;
      for (let i = 0; i < 20; i++) await sql`insert into filler (body) select ${'x'.repeat(2000)} from (select 1 union all select 2 union all select 3 union all select 4 union all select 5 union all select 6 union all select 7 union all select 8 union all select 9 union all select 10)`.execute(db);
      expect(fs.statSync(`${file}-wal`).size).toBeGreaterThan(100 * PAGE);
      await waitUntil('the pages to reach the database file', () => fs.statSync(file).size >= before + 100 * PAGE, 10_000);
    } finally {
      await close();
    }
  });

  it('under constant writes the WAL still starts over: it stays bounded', async () => {
    const file = tempFile();
    const { db, close } = createDb(`sqlite:${file}`);
    try {
      await sql`create table filler (id integer primary key, body text not null)`.execute(db);
      const writer = sqliteWriterOf(db)!;
      const insert = writer.prepare('insert into filler (body) values (?)');
      // ~60 MB through the WAL, one small commit after another with the event loop turning between.
      for (let i = 0; i < 20_000; i++) {
        insert.run('y'.repeat(3000));
        if (i % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      expect(fs.statSync(file).size).toBeGreaterThan(20_000 * 3000);
      // ~1,000 pages (4 MB) is where the writer's own checkpoint lets it start over; on a loaded
      // machine its attempts meet the thread's checkpoints more often (seen: up to 15 MB). A WAL
      // that never started over would hold all ~60 MB.
      expect(fs.statSync(`${file}-wal`).size).toBeLessThan(30 * 1024 * 1024);
    } finally {
      await close();
    }
  });
});
