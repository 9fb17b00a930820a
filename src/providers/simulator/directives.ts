// Prompt directives steer the simulator for tests and demos: `[sim:fail]`, `[sim:fail=<code>]`,
// `[sim:delay=<seconds>]` and `[sim:reject]` (an avatar asset fails review).

export interface Directives {
  fail?: string;
  delayMs?: number;
  reject: boolean;
}

const PATTERN = /\[sim:(fail|delay|reject)(?:=([^\]\s]{1,64}))?\]/g;

export function parseDirectives(...texts: (string | undefined)[]): Directives {
  const out: Directives = { reject: false };
  for (const text of texts) {
    if (!text) continue;
    for (const [, name, value] of text.matchAll(PATTERN)) {
      if (name === 'fail') out.fail = value || 'upstream_error';
      else if (name === 'reject') out.reject = true;
      else if (name === 'delay' && value !== undefined && Number.isFinite(Number(value)) && Number(value) >= 0) {
        out.delayMs = Math.round(Number(value) * 1000);
      }
    }
  }
  return out;
}
