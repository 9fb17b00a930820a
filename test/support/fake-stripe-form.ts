// Stripe's request bodies: application/x-www-form-urlencoded with nested keys in brackets, as the
// SDK writes them (stripe-node src/utils.ts stringifyRequestData, qs-compatible): `a[b]=1`,
// `line_items[0][price_data][currency]=usd`, arrays by index. Brackets may come percent-encoded or
// not; both decode the same. A repeated key, a bracket left open or an index that skips ahead is a
// malformed body, as it would be at Stripe.

export type FormValue = string | FormObject | FormValue[];
export interface FormObject {
  [key: string]: FormValue;
}

export class FormError extends Error {}

function pathOf(key: string): string[] {
  const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
  if (!match) throw new FormError(`Invalid parameter name: ${key}`);
  const rest = [...match[2]!.matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1]!);
  if (rest.some((part) => part === '')) throw new FormError(`Invalid array syntax in ${key}: send arrays by index`);
  return [match[1]!, ...rest];
}

/** Objects whose keys are exactly 0..n-1 become arrays (how the SDK writes arrays). */
function arrays(value: FormValue, name: string): FormValue {
  if (typeof value === 'string' || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  const indexed = keys.length > 0 && keys.every((k) => /^\d+$/.test(k));
  if (indexed) {
    const sorted = keys.map(Number).sort((a, b) => a - b);
    if (sorted.some((n, i) => n !== i)) throw new FormError(`Invalid array: ${name} has indexes that skip (${sorted.join(', ')})`);
    return sorted.map((i) => arrays(value[String(i)]!, `${name}[${i}]`));
  }
  return Object.fromEntries(keys.map((k) => [k, arrays(value[k]!, `${name}[${k}]`)]));
}

export function parseForm(body: string): FormObject {
  const root: FormObject = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const path = pathOf(key);
    let at: FormObject = root;
    for (const [i, part] of path.entries()) {
      const last = i === path.length - 1;
      const existing = at[part];
      if (last) {
        if (existing !== undefined) throw new FormError(`Duplicate parameter: ${key}`);
        at[part] = value;
      } else {
        if (typeof existing === 'string') throw new FormError(`Invalid parameter: ${path.slice(0, i + 1).join('.')} is both a value and an object`);
        at = (existing as FormObject | undefined) ?? (at[part] = {});
      }
    }
  }
  return Object.fromEntries(Object.entries(root).map(([k, v]) => [k, arrays(v, k)])) as FormObject;
}
