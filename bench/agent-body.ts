// An agent-sized messages body (~35 KB, the shape a coding agent sends: a long system prompt, ten
// tool definitions, a conversation with a tool call and its result, some non-ASCII text), for the
// benches' AB_BODY=agent. The same text every time, as an agent's prefix repeats from call to call.
const lines = (n: number) => Array.from({ length: n }, (_, i) => `Line ${i}: the quick brown fox jumps over the lazy dog, "quoted" and é text.`).join('\n');

export function agentBody(model: string): string {
  const tools = Array.from({ length: 10 }, (_, i) => ({
    name: `tool_${i}`,
    description: lines(3),
    input_schema: { type: 'object', properties: { path: { type: 'string', description: 'a path' }, n: { type: 'integer' } }, required: ['path'] },
  }));
  const messages = [
    { role: 'user', content: lines(160) },
    { role: 'assistant', content: [{ type: 'text', text: 'ok' }, { type: 'tool_use', id: 'toolu_1', name: 'tool_1', input: { path: '/x' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: lines(80) }] },
  ];
  return JSON.stringify({ model, max_tokens: 64, system: lines(160), tools, messages });
}
