import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';

// axe-core's WCAG 2 A/AA rules on a console page, as the browser suites run them.

const AXE = fs.readFileSync(path.resolve(import.meta.dirname, '../../node_modules/axe-core/axe.min.js'), 'utf8');

/** The serious and critical findings on the page, one line each (empty = clean). */
export async function axeProblems(page: Page, name: string): Promise<string[]> {
  // Evaluated through the DevTools protocol: the console's CSP (rightly) refuses inline scripts.
  await page.evaluate(AXE);
  const violations: { id: string; impact: string; nodes: number }[] = await page.evaluate(async () => {
    const result = await (window as any).axe.run(document, { runOnly: ['wcag2a', 'wcag2aa'] });
    return result.violations.map((v: any) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${name}: ${v.id} (${v.impact}, ${v.nodes} nodes)`);
}
