import { badRequest } from '../../core/errors.ts';
import type { WireFormat } from '../../core/text/index.ts';
import type { TextRequest } from '../../core/text/provider.ts';

// The ranges a vendor refuses sampling values outside of, for the surfaces whose schema leaves them
// to the upstream (messages and Responses bodies are the upstream's to judge): the simulator judges
// like the vendor, so a client sees on the simulator the 400 it would get from the real API.
// Chat completions and Gemini bodies are range-checked by their route schemas before this.

interface Range {
  field: string;
  min: number;
  max: number;
}

const RANGES: Partial<Record<WireFormat, { temperature: Range; topP: Range; topK?: Range }>> = {
  messages: { temperature: { field: 'temperature', min: 0, max: 1 }, topP: { field: 'top_p', min: 0, max: 1 }, topK: { field: 'top_k', min: 0, max: Number.MAX_SAFE_INTEGER } },
  responses: { temperature: { field: 'temperature', min: 0, max: 2 }, topP: { field: 'top_p', min: 0, max: 1 } },
};

/** Throws the vendor's 400 for the first sampling value out of its range. */
export function judgeSampling(view: TextRequest): void {
  const wire = view.wire;
  const ranges = wire && RANGES[wire.format];
  if (!ranges) return;
  const { temperature, topP, topK } = wire.request;
  for (const [value, range] of [[temperature, ranges.temperature], [topP, ranges.topP], [topK, ranges.topK]] as const) {
    if (value === undefined || !range || (value >= range.min && value <= range.max)) continue;
    throw badRequest(range.max === Number.MAX_SAFE_INTEGER ? `${range.field}: must be at least ${range.min}` : `${range.field}: range: ${range.min}..${range.max}`);
  }
}
