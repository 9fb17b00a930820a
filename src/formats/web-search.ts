// Web search is the one vendor-run tool every format but chat completions has: the Responses API's
// `web_search`, the messages API's `web_search_20250305` and the Gemini API's `googleSearch`. Offered
// in one, it is offered in the others as their own (the vendor runs it; the answer's text carries
// what it found). Other vendor-run tools have no counterpart and stay refused.
import type { HostedTool, Json, WireFormat } from '../core/text/index.ts';

const isWebSearch = (h: HostedTool): boolean => {
  const tool = h.tool as Json;
  if (h.format === 'responses') return typeof tool.type === 'string' && /^web_search(_preview)?(_\d{4}_\d{2}_\d{2})?$/.test(tool.type);
  if (h.format === 'messages') return typeof tool.type === 'string' && tool.type.startsWith('web_search_');
  if (h.format === 'gemini') return 'googleSearch' in tool || 'google_search' in tool;
  return false;
};

const WEB_SEARCH: Partial<Record<WireFormat, Json>> = {
  responses: { type: 'web_search' },
  messages: { type: 'web_search_20250305', name: 'web_search' },
  gemini: { googleSearch: {} },
};

/** The hosted tool as `format` offers it, or undefined where it has none. */
export function hostedIn(h: HostedTool, format: WireFormat): HostedTool | undefined {
  if (h.format === format) return h;
  const own = isWebSearch(h) ? WEB_SEARCH[format] : undefined;
  return own ? { ...h, format, tool: own } : undefined;
}
