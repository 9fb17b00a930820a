import { isDeepStrictEqual } from 'node:util';
import { request } from 'undici';
import { freePort } from './gateway-process.ts';
import type { FakeOpenAI } from './fake-openai.ts';
import { parseShown, printedJson, shapeDifferences } from './json-shape.ts';
import type { ReadmeCommand, ShownOutput } from './readme-blocks.ts';
import { runBash, startBackground, waitForOk, type Background, type Env } from './shell-session.ts';

// A reader's terminal going through the README: exports carry over from block to block, the README's
// placeholders become real values, and what a command prints is checked against what the README shows.

/** Where the README's example values point on this machine. */
export interface Surroundings {
  root: string;
  env: Env;
  /** The port the live gateway listens on, for the README's `localhost:8080`. */
  port: number;
  openai: FakeOpenAI;
  /** The multi-machine block's database (created by its psql line) and the Redis to use. */
  postgres?: { url: URL; database: string; redisUrl: string };
}

/** Ids that this block's earlier commands printed, for the placeholders of its later ones. */
export interface BlockIds {
  byPrefix: Map<string, string>;
  last?: string;
}

const PLACEHOLDERS: [string, string][] = [['usr_...', 'usr'], ['key_...', 'key'], ['ch_...', 'ch'], ['task_01...', 'task'], ['grp_01...', 'grp']];
const isError = (json: unknown) =>
  typeof json === 'object' && json !== null && ('error' in json || ('code' in json && typeof json.code === 'number' && json.code >= 400));

export class ReadmeSession {
  readonly env: Env;
  demoKey = '';
  readonly servers: Background[] = [];
  private readonly ports = new Map<string, number>();
  private readonly serverPorts = new Map<Background, number>();

  constructor(private readonly at: Surroundings) {
    this.env = { ...at.env };
  }

  /**
   * Runs one command; a server it starts (`npm start`) is returned once it serves /healthz. `prints`:
   * what its output must show.
   */
  async run(command: ReadmeCommand, ids: BlockIds, prints?: RegExp): Promise<Background | undefined> {
    const text = await this.substitute(command.text, ids);
    const where = `README line ${command.line}: ${text}`;
    if (/\bnpm start\b/.test(text)) return this.startServer(text);
    const exported = /^export ([A-Z0-9_]+)=/.exec(text);
    if (exported) {
      const ran = await runBash(`${text}\nprintf '%s' "$${exported[1]}"`, this.env, this.at.root);
      if (ran.code !== 0) throw new Error(`${where}\nexited ${ran.code}: ${ran.stderr}`);
      this.env[exported[1]!] = ran.stdout;
      return undefined;
    }
    const ran = await runBash(text, this.env, this.at.root);
    const json = printedJson(ran.stdout);
    if (ran.code !== 0 || isError(json)) throw new Error(`${where}\nexited ${ran.code}:\n${ran.stdout}\n${ran.stderr}`);
    if (prints && !prints.test(ran.stdout)) throw new Error(`${where}\ndid not print ${prints}:\n${ran.stdout}`);
    if (typeof json === 'object' && json !== null && !Array.isArray(json)) recordIds(json, ids);
    await this.checkShown(command.shown, text, json, where);
    return undefined;
  }

  portOf(server: Background): number {
    return this.serverPorts.get(server)!;
  }

  private async substitute(text: string, ids: BlockIds): Promise<string> {
    let out = text.replace(/\b(localhost|127\.0\.0\.1):8080\b/g, `127.0.0.1:${this.at.port}`);
    for (const [, port] of out.matchAll(/\bPORT=(\d+)/g)) if (!this.ports.has(port!)) this.ports.set(port!, await freePort());
    out = out.replace(/\bPORT=(\d+)/g, (_, port: string) => `PORT=${this.ports.get(port)}`);
    out = out.replaceAll('sk-gw-...', this.demoKey).replaceAll('https://api.openai.com', this.at.openai.url);
    for (const [placeholder, prefix] of PLACEHOLDERS) if (out.includes(placeholder)) out = out.replaceAll(placeholder, await this.idFor(prefix, ids));
    if (out.includes('<id>')) {
      if (!ids.last) throw new Error(`no earlier command of this block printed an id for <id>: ${text}`);
      out = out.replaceAll('<id>', ids.last);
    }
    const pg = this.at.postgres;
    if (pg) {
      const { hostname, port, username } = pg.url;
      out = out
        .replace(/^psql -h \S+ -U \S+/, `psql -h ${hostname} -p ${port || 5432} -U ${username}`)
        .replace("create database gateway'", `create database ${pg.database}'`)
        .replace('postgres://postgres@127.0.0.1:5432/gateway', new URL(`/${pg.database}`, pg.url).href)
        .replace('redis://127.0.0.1:6379', pg.redisUrl);
    }
    return out;
  }

  /** The id an earlier command of this block printed; an account, key or channel made for it otherwise. */
  private async idFor(prefix: string, ids: BlockIds): Promise<string> {
    const known = ids.byPrefix.get(prefix);
    if (known) return known;
    const admin = async (url: string, body: object) => {
      const res = await request(`http://127.0.0.1:${this.at.port}${url}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${this.env.ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const json = (await res.body.json()) as { id: string };
      if (res.statusCode >= 300) throw new Error(`${url}: ${res.statusCode} ${JSON.stringify(json)}`);
      return json.id;
    };
    let id: string;
    if (prefix === 'usr') id = await admin('/admin/users', { name: 'readme-account', balance: 5 });
    else if (prefix === 'key') id = await admin('/admin/keys', { user_id: await this.idFor('usr', ids), name: 'readme-key', quota: 1 });
    else if (prefix === 'ch') id = await admin('/admin/channels', { name: 'readme-channel', type: 'simulator', models: ['imggen-2'] });
    else throw new Error(`a ${prefix}_ placeholder needs an earlier command of its block that printed one`);
    ids.byPrefix.set(prefix, id);
    return id;
  }

  private async startServer(text: string): Promise<Background> {
    const port = Number(/\bPORT=(\d+)/.exec(text)?.[1] ?? this.env.PORT);
    const server = startBackground(text.replace(/\s*&$/, ''), this.env, this.at.root);
    this.servers.push(server);
    this.serverPorts.set(server, port);
    await waitForOk(`http://127.0.0.1:${port}/healthz`, server);
    return server;
  }

  private async checkShown(shown: ShownOutput[], text: string, json: unknown, where: string): Promise<void> {
    const answers = shown.filter((s) => !/receives$/.test(s.lead)).map((s) => parseShown(s.json));
    if (answers.length > 0) {
      const differences = answers.map((answer) => shapeDifferences(answer, json));
      if (!differences.some((d) => d.length === 0)) throw new Error(`${where}\nprinted ${JSON.stringify(json)}\n${differences.flat().join('\n')}`);
      // Several answers are states one after another (a task, then the task done): the last comes in time.
      const last = answers.at(-1)!;
      for (let deadline = Date.now() + 30_000; shapeDifferences(last, json).length > 0; ) {
        if (Date.now() > deadline) throw new Error(`${where}\nnever printed the README's last answer: ${shapeDifferences(last, json).join('\n')}`);
        await new Promise((r) => setTimeout(r, 500));
        json = printedJson((await runBash(text, this.env, this.at.root)).stdout);
      }
    }
    for (const claim of shown.filter((s) => /receives$/.test(s.lead))) {
      if (claim.lead !== 'OpenAI receives') throw new Error(`${where}\nno check for the README's claim "${claim.lead}"`);
      const generation = () => this.at.openai.requests.filter((r) => r.path === '/v1/images/generations').at(-1);
      for (let deadline = Date.now() + 30_000; !generation() && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 100));
      const fields = generation()?.fields;
      if (!isDeepStrictEqual(fields, parseShown(claim.json))) {
        throw new Error(`${where}\nOpenAI received ${JSON.stringify(fields)}\nthe README says ${claim.json}`);
      }
    }
  }
}

function recordIds(json: object, ids: BlockIds): void {
  for (const [key, value] of Object.entries(json)) {
    if (typeof value === 'object' && value !== null) recordIds(value, ids);
    if (typeof value !== 'string' || !['id', 'task_id', 'group_id'].includes(key)) continue;
    const prefix = /^(usr|key|ch|task|grp)_/.exec(value)?.[1];
    if (!prefix) continue;
    ids.byPrefix.set(prefix, value);
    if (key === 'id') ids.last = value;
  }
}
