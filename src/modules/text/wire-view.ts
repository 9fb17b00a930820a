import type { ContentPart, TextMessage as NeutralMessage, WireCall } from '../../core/text/index.ts';
import { DEFAULT_MAX_OUTPUT } from './native.mapping.ts';
import type { TextPart, TextRequest } from '../../core/text/provider.ts';

// What the money and the limits read of a wire call (the hold's prompt count, the output ceiling,
// the context-window limit): its turns as text and images. Everything else that goes upstream
// (tool definitions and calls, their results, the output schema, thinking) is counted as its text.

function partsOf(part: ContentPart): TextPart[] {
  switch (part.type) {
    case 'text':
      return [{ type: 'text', text: part.text }];
    case 'thinking':
      return part.text ? [{ type: 'text', text: part.text }] : [];
    case 'image':
      // An image the vendor fetches itself is counted as the smallest one (its bytes are not here).
      return part.source.kind === 'base64' ? [{ type: 'image', mediaType: part.source.mediaType, data: part.source.data }] : [{ type: 'text', text: '[image]' }];
    case 'document':
      return part.source.kind === 'base64' && part.source.mediaType.startsWith('text/') ? [{ type: 'text', text: Buffer.from(part.source.data, 'base64').toString() }] : [{ type: 'text', text: `[document ${part.title ?? ''}]` }];
    case 'tool_call':
      return [{ type: 'text', text: `${part.name}(${part.arguments})` }];
    case 'tool_result':
      return part.content.flatMap(partsOf);
  }
}

export function wireView(wire: WireCall): TextRequest {
  const { request } = wire;
  const system: string[] = [];
  const messages: TextRequest['messages'] = [];
  const addTo = (role: 'user' | 'assistant', message: NeutralMessage) => {
    const parts = message.content.flatMap(partsOf);
    if (parts.length) messages.push({ role, parts });
  };
  for (const message of request.messages) {
    if (message.role === 'system' || message.role === 'developer') system.push(message.content.flatMap(partsOf).map((p) => (p.type === 'text' ? p.text : '')).join('\n'));
    else addTo(message.role, message);
  }
  const extra = [request.tools, request.toolChoice, request.output].filter((v) => v !== undefined);
  return {
    model: wire.model,
    ...(system.length ? { system: system.join('\n') } : {}),
    messages,
    maxTokens: request.maxOutputTokens ?? DEFAULT_MAX_OUTPUT,
    ...(request.stop?.length ? { stopSequences: request.stop } : {}),
    ...(extra.length ? { promptExtra: JSON.stringify(extra) } : {}),
    wire,
  };
}
