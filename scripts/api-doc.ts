import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createContext } from '../src/context.ts';
import { apiMarkdown } from '../src/http/api-markdown.ts';

// npm run docs:api rewrites docs/api.md from the route schemas; test/api-doc.test.ts checks it is current.

const INTRO = `# The gateway's HTTP API

This file is generated from the route schemas by \`npm run docs:api\`; the same schemas validate every
request, so what is written here is what the gateway accepts. The live document is \`/openapi.json\`
(OpenAPI 3.1), browsable at \`/docs\`.

## How every route behaves

- **Keys.** API routes take a key as \`Authorization: Bearer <key>\`; the messages routes also take
  \`x-api-key\`. Admin routes take \`Authorization: Bearer $ADMIN_TOKEN\` or an operator's console
  session; console routes take the console session cookie, and their writes need \`x-csrf-token\`.
- **Bodies** are JSON objects with JSON types as written (\`"n": "2"\` is not a number). A write
  accepts only its documented fields: any other field is a 400 that names it.
- **Errors** come in one envelope per family, and \`code\` always equals the HTTP status: the standard
  \`{"error":{"code","message","type"}}\`; on \`/v1beta/...\` \`{"error":{"code","message","status"}}\` with
  \`status\` such as \`INVALID_ARGUMENT\` or \`PAYMENT_REQUIRED\`; on \`/v1/messages\` the standard one
  plus \`"type":"error"\`. 402 means the account or the key cannot pay, 429 carries \`Retry-After\`,
  503 means a backing store or every upstream is unavailable (retry), and a 500 names only a request id.
- **Money.** Every call is charged against the key's account (and the key's own quota, when it has
  one). Images, videos and avatar reviews are held at submit, settled when the task ends, and
  refunded in full when it fails; text calls hold their prompt plus \`max_tokens\` and settle on the
  counted tokens.
- **Tasks** are answered at once with a task id; poll \`GET /v1/tasks/{id}\` (or up to 100 at
  once with \`GET /v1/tasks?ids=a,b,c\`), or pass \`webhook\` (a base address; \`/callback\` is
  appended) to receive the finished task record once, signed with the Standard Webhooks headers.
  Result links are this gateway's own signed \`/files/...\` links.
- **Limits.** Requests per minute per key to the calls that spend (\`RATE_LIMIT_RPM\` or the key's
  own) and, counted apart, to the reads (balances, task status, model lists: \`READ_RATE_LIMIT_RPM\`),
  a request body of \`BODY_LIMIT_BYTES\`, a whole request within \`REQUEST_TIMEOUT_MS\`, and the
  per-model limits that each route's errors name (prompt lengths in characters, counts of reference
  files, durations).
`;

export async function apiDocument(): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-api-doc-'));
  const config = loadConfig({ DATABASE_URL: `sqlite:${path.join(dir, 'doc.db')}`, FILES_DIR: path.join(dir, 'files'), GATEWAY_DEMO: '0', PUBLIC_BASE_URL: 'http://localhost:8080' });
  const ctx = await createContext(config, { logger: pino({ level: 'silent' }), listen: false });
  try {
    const app = await buildApp(ctx);
    await app.ready();
    const doc = apiMarkdown(app.swagger() as Parameters<typeof apiMarkdown>[0], INTRO);
    await app.close();
    return doc;
  } finally {
    await ctx.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  fs.writeFileSync(new URL('../docs/api.md', import.meta.url), await apiDocument());
  process.exit(0);
}
