import type { FastifyInstance, RouteOptions } from 'fastify';

// What a route shows a caller besides its own schema: the family of its error envelope and where it
// reads a credential. Each route plugin declares them once (`declareSurface`); a route may override
// either in its own `config`. The error handler (error-handler.ts) and the guards (auth.ts and
// modules/accounts/key-guard.ts) read the route's declaration, never its URL; app.ts refuses to
// start when a route declares nothing.

/**
 * `standard`: `{error: {code, message, type}}`. `native`: `{error: {code, message, status}}` (the
 * native text routes and the Gemini surface). `messages`: standard plus `"type":"error"` (the
 * messages routes, and `/v1/models`, which the messages SDK reads). `openai`: standard plus the
 * `param` the OpenAI SDK reads (chat completions).
 * `of-path`: a route that answers for any path (the CORS preflight) speaks the envelope of the
 * route that serves that path.
 */
export type Envelope = 'standard' | 'native' | 'messages' | 'openai' | 'of-path';

/**
 * `bearer`: `Authorization: Bearer`; `x-api-key` and `x-goog-api-key`: those headers; `query`:
 * `?key=`; `session`: the console's session cookie.
 */
export type KeySource = 'bearer' | 'x-api-key' | 'x-goog-api-key' | 'query' | 'session';

export interface Surface {
  envelope: Envelope;
  /**
   * Where the route's guard looks for the credential; the first is the one a 401 asks for. When a
   * caller sends several, a vendor's header (or `?key=`) wins over Bearer whatever the order here,
   * as SDKs that send both mean their own header.
   */
  keySources: readonly KeySource[];
}

declare module 'fastify' {
  interface FastifyContextConfig {
    envelope?: Envelope;
    keySources?: readonly KeySource[];
  }
}

/** The admin API: the admin token as Bearer, or an operator's console session (the console's operator pages). */
export const ADMIN_SURFACE: Surface = { envelope: 'standard', keySources: ['bearer', 'session'] };
/** The Gemini API's surface under `/gemini/`: its SDK sends `x-goog-api-key` (or `?key=`). */
export const GEMINI_SURFACE: Surface = { envelope: 'native', keySources: ['x-goog-api-key', 'query', 'bearer'] };

/** Declares the surface of every route the plugin `app` registers from now on (a route's own `config` wins). */
export function declareSurface(app: Pick<FastifyInstance, 'addHook'>, surface: Surface): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    route.config = { ...surface, ...route.config };
  });
}

export const isDeclared = (config: RouteOptions['config']): boolean =>
  config?.envelope !== undefined && config.keySources !== undefined;
