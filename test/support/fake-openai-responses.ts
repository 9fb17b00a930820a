import type http from 'node:http';
import { checkResponses, OpenAIRefusal } from './openai-responses-check.ts';
import { halves, pieces, type Script, type ScriptedPart } from './fake-script.ts';

// The Responses API of the OpenAI fake (POST /v1/responses, GET /v1/responses/{id}), served by the
// same server as its chat completions (startFakeOpenAIText). Shapes from openai@6.49
// (resources/responses/responses.d.ts: Response, ResponseOutputItem, ResponseUsage,
// ResponseStreamEvent) and lib/responses/ResponseAccumulator.js, which rebuilds a response from the
// events and refuses ones that name an output or content index it has not seen:
// - an answer is a Response (id resp_..., object "response", status, output items reasoning /
//   message / function_call / custom_tool_call, usage {input_tokens, input_tokens_details.cached_tokens,
//   output_tokens, output_tokens_details.reasoning_tokens, total_tokens});
// - a stream is `event: <type>` + `data: <event>` with a rising sequence_number: response.created,
//   response.in_progress, per item output_item.added, its parts and deltas, output_item.done, then
//   response.completed (no [DONE]);
// - a response is kept unless `store: false`; previous_response_id must name a kept one (400
//   previous_response_not_found); reasoning items carry encrypted_content only when `include` asks.

export interface ResponsesState {
  /** Kept responses and the conversation each ended (its input chain plus its output). */
  stored: Map<string, { response: any; items: any[] }>;
}

interface Options {
  models: string[];
  usage: { prompt_tokens: number; completion_tokens: number; prompt_tokens_details?: { cached_tokens: number }; completion_tokens_details?: { reasoning_tokens: number } };
  script?: Script;
}

export function serveResponses(state: ResponsesState, options: Options, req: http.IncomingMessage, body: any, n: number, res: http.ServerResponse): void {
  const path = (req.url ?? '').split('?')[0]!;
  const get = /^\/v1\/responses\/([^/]+)$/.exec(path);
  if (req.method === 'GET' && get) {
    const kept = state.stored.get(decodeURIComponent(get[1]!));
    if (!kept) throw new OpenAIRefusal(404, `Response with id '${get[1]}' not found.`, null, null);
    return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(kept.response));
  }
  if (req.method !== 'POST' || path !== '/v1/responses') throw new OpenAIRefusal(404, `Invalid URL (${req.method} ${req.url})`);
  const previous = typeof body?.previous_response_id === 'string' ? state.stored.get(body.previous_response_id) : undefined;
  const storedItem = (id: string) => [...state.stored.values()].some((kept) => kept.items.some((item) => item.id === id));
  if (body.previous_response_id != null && !previous) throw new OpenAIRefusal(400, `Previous response with id '${body.previous_response_id}' not found.`, 'previous_response_id', 'previous_response_not_found');
  const conversation = checkResponses(body, previous?.items ?? [], storedItem);
  if (!options.models.includes(body.model)) throw new OpenAIRefusal(400, `The requested model '${body.model}' does not exist.`, 'model', 'model_not_found');
  const parts = options.script?.(body) ?? [{ type: 'text', text: `echo: ${conversation.lastUserText}` }];
  const output = outputItems(parts, body, n);
  const response = responseObject(body, n, output, options.usage);
  if (body.store !== false) state.stored.set(response.id, { response, items: [...conversation.items, ...output] });
  if (!body.stream) return void res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': `req_${n}` }).end(JSON.stringify(response));
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'x-request-id': `req_${n}` });
  let sequence = 0;
  const event = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data, sequence_number: sequence++ })}\n\n`);
  const opening = { ...response, status: 'in_progress', output: [], usage: null, completed_at: null };
  event('response.created', { response: opening });
  event('response.in_progress', { response: opening });
  output.forEach((item, output_index) => streamItem(event, item, output_index));
  event('response.completed', { response });
  res.end();
}

type Emit = (type: string, data: Record<string, unknown>) => void;

function streamItem(event: Emit, item: any, output_index: number): void {
  const ids = { item_id: item.id, output_index };
  if (item.type === 'message') {
    event('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
    const part = item.content[0];
    event('response.content_part.added', { ...ids, content_index: 0, part: { ...part, text: '' } });
    for (const delta of pieces(part.text)) event('response.output_text.delta', { ...ids, content_index: 0, delta, logprobs: [] });
    event('response.output_text.done', { ...ids, content_index: 0, text: part.text, logprobs: [] });
    event('response.content_part.done', { ...ids, content_index: 0, part });
  } else if (item.type === 'reasoning') {
    event('response.output_item.added', { output_index, item: { ...item, summary: [] } });
    const part = item.summary[0];
    event('response.reasoning_summary_part.added', { ...ids, summary_index: 0, part: { ...part, text: '' } });
    for (const delta of pieces(part.text)) event('response.reasoning_summary_text.delta', { ...ids, summary_index: 0, delta });
    event('response.reasoning_summary_text.done', { ...ids, summary_index: 0, text: part.text });
    event('response.reasoning_summary_part.done', { ...ids, summary_index: 0, part });
  } else if (item.type === 'function_call') {
    event('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', arguments: '' } });
    for (const delta of halves(item.arguments)) event('response.function_call_arguments.delta', { ...ids, delta });
    event('response.function_call_arguments.done', { ...ids, name: item.name, arguments: item.arguments });
  } else {
    event('response.output_item.added', { output_index, item: { ...item, input: '' } });
    for (const delta of halves(item.input)) event('response.custom_tool_call_input.delta', { ...ids, delta });
    event('response.custom_tool_call_input.done', { ...ids, input: item.input });
  }
  event('response.output_item.done', { output_index, item });
}

/** The output items for scripted parts; a tool_use naming a custom tool is a custom_tool_call. */
function outputItems(parts: ScriptedPart[], body: any, n: number): any[] {
  const encrypted = (body.include ?? []).includes('reasoning.encrypted_content');
  return parts.map((part, k) => {
    if (part.type === 'text') return { id: `msg_fake${n}_${k}`, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: part.text, annotations: [], logprobs: [] }] };
    if (part.type === 'thinking') return { id: `rs_fake${n}_${k}`, type: 'reasoning', summary: [{ type: 'summary_text', text: part.thinking }], ...(encrypted ? { encrypted_content: part.signature ?? Buffer.from(`fake-reasoning-${n}-${k}`).toString('base64') } : {}) };
    const call_id = part.id ?? `call_fake${n}_${k}`;
    const custom = (body.tools ?? []).some((t: any) => t.type === 'custom' && t.name === part.name);
    if (custom) return { id: `ctc_fake${n}_${k}`, type: 'custom_tool_call', status: 'completed', call_id, name: part.name, input: typeof part.input.input === 'string' ? part.input.input : JSON.stringify(part.input) };
    return { id: `fc_fake${n}_${k}`, type: 'function_call', status: 'completed', call_id, name: part.name, arguments: JSON.stringify(part.input) };
  });
}

function responseObject(body: any, n: number, output: any[], usage: Options['usage']) {
  const created_at = Math.floor(Date.now() / 1000);
  return {
    id: `resp_fake${n}`,
    object: 'response',
    created_at,
    status: 'completed',
    background: body.background ?? false,
    completed_at: created_at,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    max_tool_calls: body.max_tool_calls ?? null,
    model: body.model,
    output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    prompt_cache_key: body.prompt_cache_key ?? null,
    reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
    safety_identifier: body.safety_identifier ?? null,
    service_tier: 'default',
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: { format: body.text?.format ?? { type: 'text' }, verbosity: body.text?.verbosity ?? 'medium' },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_logprobs: body.top_logprobs ?? 0,
    top_p: body.top_p ?? 1,
    truncation: body.truncation ?? 'disabled',
    usage: {
      input_tokens: usage.prompt_tokens,
      input_tokens_details: { cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0 },
      output_tokens: usage.completion_tokens,
      output_tokens_details: { reasoning_tokens: usage.completion_tokens_details?.reasoning_tokens ?? 0 },
      total_tokens: usage.prompt_tokens + usage.completion_tokens,
    },
    user: body.user ?? null,
    metadata: body.metadata ?? {},
  };
}
