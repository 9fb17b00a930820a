import type { FastifyInstance, RouteOptions } from 'fastify';
import { isDeclared, type Envelope } from './surface.ts';

// Where no route is at hand (a 404, a URL Fastify cannot decode, a request Node's HTTP parser
// refuses), the envelope still comes from the routes' declarations, looked up by path in this table:
// the route that would serve the path with that method; else the routes sharing the most leading
// path segments with it, when they agree (`/v1beta/nothing` -> the native routes); else the
// standard envelope, the one fallback. The routes are code, the same in every app the process
// builds, so the table is the process's: buildApp fills it (and errorBody's callers need no app).

export type Family = Exclude<Envelope, 'of-path'>;

interface Entry {
  method: string;
  segments: string[];
  family: Family;
}

const segmentsOf = (path: string) => path.split('/').slice(1);

/** How far `pattern` (a route URL's segments) matches `path`: whether it serves it, and how many leading segments agree. */
function match(pattern: string[], path: string[]): { serves: boolean; shared: number } {
  for (let i = 0; i < pattern.length; i++) {
    const part = pattern[i]!;
    if (part === '*') return { serves: true, shared: i };
    if (i >= path.length || (part.startsWith(':') ? path[i] === '' : part !== path[i])) return { serves: false, shared: i };
  }
  return { serves: path.length === pattern.length, shared: pattern.length };
}

export class RouteTable {
  private readonly entries = new Map<string, Entry>();

  add(route: RouteOptions): void {
    const family = route.config?.envelope;
    if (family === undefined || family === 'of-path') return;
    for (const method of [route.method].flat()) {
      this.entries.set(`${method} ${route.url}`, { method, segments: segmentsOf(route.url), family });
    }
  }

  /** The envelope family for a request on `url` (`method` when known) that reached no route. */
  familyFor(method: string | undefined, url: string): Family {
    const path = segmentsOf(url.split('?', 1)[0]!);
    let best = 0;
    let found: Family | undefined;
    let agreed = true;
    for (const entry of this.entries.values()) {
      const { serves, shared } = match(entry.segments, path);
      // A route that serves the path with this method outranks any partial agreement.
      const score = serves && entry.method === method ? Number.MAX_SAFE_INTEGER : shared;
      if (score === 0 || score < best) continue;
      if (score > best) [best, found, agreed] = [score, entry.family, true];
      else if (entry.family !== found) agreed = false;
    }
    return found !== undefined && agreed ? found : 'standard';
  }
}

export const declaredRoutes = new RouteTable();

/**
 * Collects the routes `app` registers from now on. `check()`, once every plugin is registered,
 * refuses to go on if any route declares no envelope or key sources, and enters the routes in
 * `declaredRoutes`.
 */
export function collectRoutes(app: Pick<FastifyInstance, 'addHook'>): { check(): void } {
  let routes: RouteOptions[] | undefined = [];
  app.addHook('onRoute', (route: RouteOptions) => {
    // The hooks of the route's own plugin run after this one: its declaration is read in check().
    routes?.push(route);
  });
  return {
    check() {
      const undeclared = (routes ?? []).filter((route) => !isDeclared(route.config)).map((route) => `${[route.method].flat().join(',')} ${route.url}`);
      if (undeclared.length > 0) {
        throw new Error(`Every route must declare its envelope and key sources (declareSurface in its plugin, or its config); these do not: ${undeclared.join('; ')}`);
      }
      for (const route of routes ?? []) declaredRoutes.add(route);
      routes = undefined;
    },
  };
}
