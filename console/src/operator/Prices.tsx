import { useEffect, useState } from 'react';
import { api } from '../api.ts';
import { ErrorNote, Section, TableRegion } from '../components.tsx';
import { useAction, useLoad } from '../hooks.ts';

type ModelPrice = {
  per_image?: Record<string, number | Record<string, number>>;
  per_second?: Record<string, number>;
  per_token?: { input_per_million: number; output_per_million: number };
  per_asset?: number;
};
interface Prices {
  source: 'file' | 'database';
  models: Record<string, ModelPrice>;
}

function summary(price: ModelPrice): string {
  const flat = (table: Record<string, number | Record<string, number>>) =>
    Object.entries(table)
      .map(([tier, v]) => `${tier} ${typeof v === 'number' ? `$${v}` : Object.entries(v).map(([q, p]) => `${q} $${p}`).join('/')}`)
      .join(', ');
  if (price.per_token) return `$${price.per_token.input_per_million} in / $${price.per_token.output_per_million} out per million tokens`;
  if (price.per_image) return `per image: ${flat(price.per_image)}`;
  if (price.per_second) return `per second: ${flat(price.per_second)}`;
  if (price.per_asset !== undefined) return `$${price.per_asset} per asset`;
  return '—';
}

export function PricesPage() {
  const prices = useLoad<Prices>('/admin/prices');
  const [text, setText] = useState('');
  const [saved, setSaved] = useState<string | undefined>();
  const action = useAction();
  useEffect(() => {
    if (prices.data) setText(JSON.stringify({ models: prices.data.models }, null, 2));
  }, [prices.data]);

  const save = () =>
    action.run(async () => {
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch (err) {
        throw new Error(`Not valid JSON: ${(err as Error).message}`);
      }
      await api('PUT', '/admin/prices', body);
      await prices.reload();
      setSaved('Saved: every process uses these prices within a few seconds.');
    });
  const reset = () =>
    action.run(async () => {
      if (!window.confirm('Go back to the prices of the pricing file?')) return;
      await api('DELETE', '/admin/prices');
      await prices.reload();
      setSaved('Back to the pricing file.');
    });

  return (
    <>
      <Section title="Prices in force">
        <ErrorNote message={prices.error} />
        {prices.data && (
          <>
            <p className="muted">Source: {prices.data.source === 'file' ? 'the pricing file (PRICING_FILE)' : 'set by an operator'}. Amounts in USD.</p>
            <TableRegion label="Prices in force">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Model</th>
                    <th scope="col">Price</th>
                  </tr>
                </thead>
                <tbody>
                  {Object.entries(prices.data.models).map(([model, price]) => (
                    <tr key={model}>
                      <td>
                        <code>{model}</code>
                      </td>
                      <td>{summary(price)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableRegion>
          </>
        )}
      </Section>
      <Section title="Edit prices">
        <label>
          Price table (JSON, the format of config/pricing.json)
          <textarea className="code-editor" rows={18} spellCheck={false} value={text} onChange={(e) => setText(e.target.value)} />
        </label>
        <div className="form-actions">
          <button type="button" onClick={save} disabled={action.busy}>
            Save prices
          </button>
          <button type="button" className="secondary" onClick={reset} disabled={action.busy || prices.data?.source === 'file'}>
            Back to the file
          </button>
        </div>
        {saved && <p role="status">{saved}</p>}
        <ErrorNote message={action.error} />
      </Section>
    </>
  );
}
