// A chat completions body (OpenAI) into the neutral request.
import { decodeOutputFormat, thinkingForEffort } from '../openai-shared.ts';
import {
  arr, InvalidTextField, isObject, obj, optBool, optNum, optStr, optStrings, pushPart, sourceFromUrl, str, unknownType, UntranslatableField,
  type ContentPart, type TextMessage, type TextRequest, type ToolChoice,
} from '../../core/text/index.ts';

const textParts = (v: unknown, field: string): ContentPart[] => {
  if (v === null || v === undefined) return [];
  if (typeof v === 'string') return v === '' ? [] : [{ type: 'text', text: v }];
  return arr(v, field).flatMap((p, i) => {
    const part = obj(p, `${field}[${i}]`);
    if (part.type === 'text') return [{ type: 'text' as const, text: str(part.text, `${field}[${i}].text`) }];
    if (part.type === 'refusal') return [{ type: 'text' as const, text: str(part.refusal, `${field}[${i}].refusal`) }];
    throw unknownType(`${field}[${i}].type`, part.type);
  });
};

const userParts = (v: unknown, field: string): ContentPart[] => {
  if (typeof v === 'string') return [{ type: 'text', text: v }];
  return arr(v, field).map((p, i): ContentPart => {
    const f = `${field}[${i}]`;
    const part = obj(p, f);
    if (part.type === 'text') return { type: 'text', text: str(part.text, `${f}.text`) };
    if (part.type === 'image_url') {
      const img = obj(part.image_url, `${f}.image_url`);
      const detail = optStr(img.detail, `${f}.image_url.detail`) as 'auto' | 'low' | 'high' | undefined;
      return { type: 'image', source: sourceFromUrl(str(img.url, `${f}.image_url.url`)), ...(detail ? { detail } : {}) };
    }
    if (part.type === 'file') {
      const file = obj(part.file, `${f}.file`);
      const filename = optStr(file.filename, `${f}.file.filename`);
      const named = filename ? { filename } : {};
      if (typeof file.file_id === 'string') return { type: 'document', source: { kind: 'file', fileId: file.file_id, format: 'chat' }, ...named };
      const data = str(file.file_data, `${f}.file.file_data`);
      const source = sourceFromUrl(data, 'application/pdf');
      // Bare base64 (no data: prefix) is what some clients send for a PDF.
      return { type: 'document', source: source.kind === 'url' ? { kind: 'base64', mediaType: 'application/pdf', data } : source, ...named };
    }
    if (part.type === 'input_audio') throw new UntranslatableField(`${f}`, 'audio input has no counterpart in the upstream format');
    throw unknownType(`${f}.type`, part.type);
  });
};

const decodeMessage = (messages: TextMessage[], m: unknown, i: number): void => {
  const f = `messages[${i}]`;
  const msg = obj(m, f);
  switch (msg.role) {
    case 'system':
    case 'developer':
      messages.push({ role: msg.role, content: textParts(msg.content, `${f}.content`) });
      return;
    case 'user':
      messages.push({ role: 'user', content: userParts(msg.content, `${f}.content`) });
      return;
    case 'assistant': {
      const content = textParts(msg.content, `${f}.content`);
      if (typeof msg.reasoning_content === 'string' && msg.reasoning_content) content.unshift({ type: 'thinking', text: msg.reasoning_content });
      if (msg.tool_calls !== undefined && msg.tool_calls !== null)
        arr(msg.tool_calls, `${f}.tool_calls`).forEach((c, j) => {
          const call = obj(c, `${f}.tool_calls[${j}]`);
          if (call.type !== 'function') throw new UntranslatableField(`${f}.tool_calls[${j}].type`, `${String(call.type)} tool calls have no counterpart in other formats`);
          const fn = obj(call.function, `${f}.tool_calls[${j}].function`);
          content.push({ type: 'tool_call', id: str(call.id, `${f}.tool_calls[${j}].id`), name: str(fn.name, `${f}.tool_calls[${j}].function.name`), arguments: str(fn.arguments, `${f}.tool_calls[${j}].function.arguments`) });
        });
      messages.push({ role: 'assistant', content });
      return;
    }
    case 'tool': {
      const content = textParts(msg.content, `${f}.content`) as Array<{ type: 'text'; text: string }>;
      pushPart(messages, 'user', { type: 'tool_result', callId: str(msg.tool_call_id, `${f}.tool_call_id`), content });
      return;
    }
    case 'function':
      throw new UntranslatableField(`${f}.role`, 'legacy function messages have no counterpart in other formats; use tool messages');
    default:
      throw new InvalidTextField(`${f}.role`, 'must be system, developer, user, assistant or tool');
  }
};

const decodeToolChoice = (v: unknown): ToolChoice | undefined => {
  if (v === undefined || v === null) return undefined;
  if (v === 'auto' || v === 'none' || v === 'required') return { type: v };
  const c = obj(v, 'tool_choice');
  if (c.type === 'function') return { type: 'tool', name: str(obj(c.function, 'tool_choice.function').name, 'tool_choice.function.name') };
  throw new UntranslatableField('tool_choice', `${String(c.type)} tool choice has no counterpart in the upstream format`);
};

export const decodeTool = (t: unknown, f: string) => {
  const tool = obj(t, f);
  if (tool.type !== 'function') throw new UntranslatableField(`${f}.type`, `${String(tool.type)} tools have no counterpart in other formats`);
  const fn = obj(tool.function, `${f}.function`);
  const strict = optBool(fn.strict, `${f}.function.strict`);
  return {
    name: str(fn.name, `${f}.function.name`),
    ...(typeof fn.description === 'string' ? { description: fn.description } : {}),
    parameters: fn.parameters === undefined ? { type: 'object', properties: {} } : obj(fn.parameters, `${f}.function.parameters`),
    ...(strict !== undefined ? { strict } : {}),
  };
};

export const decodeRequest = (input: unknown): TextRequest => {
  const body = obj(input, 'body');
  if (typeof body.n === 'number' && body.n > 1) throw new UntranslatableField('n', 'several choices per call have no counterpart in other formats');
  if (Array.isArray(body.modalities) && body.modalities.includes('audio')) throw new UntranslatableField('modalities', 'audio output has no counterpart in the upstream format');
  const messages: TextMessage[] = [];
  arr(body.messages, 'messages').forEach((m, i) => decodeMessage(messages, m, i));
  const streamOptions = isObject(body.stream_options) ? body.stream_options : {};
  const metadata = isObject(body.metadata) ? (body.metadata as Record<string, string>) : undefined;
  const req: TextRequest = {
    model: str(body.model, 'model'),
    messages,
    tools: body.tools === undefined || body.tools === null ? undefined : arr(body.tools, 'tools').map((t, i) => decodeTool(t, `tools[${i}]`)),
    toolChoice: decodeToolChoice(body.tool_choice),
    parallelToolCalls: optBool(body.parallel_tool_calls, 'parallel_tool_calls'),
    thinking: thinkingForEffort(optStr(body.reasoning_effort, 'reasoning_effort')),
    output: decodeOutputFormat(body.response_format, 'response_format'),
    maxOutputTokens: optNum(body.max_completion_tokens, 'max_completion_tokens') ?? optNum(body.max_tokens, 'max_tokens'),
    temperature: optNum(body.temperature, 'temperature'),
    topP: optNum(body.top_p, 'top_p'),
    stop: optStrings(body.stop, 'stop'),
    stream: optBool(body.stream, 'stream'),
    streamUsage: optBool(streamOptions.include_usage, 'stream_options.include_usage'),
    user: optStr(body.user, 'user') ?? optStr(body.safety_identifier, 'safety_identifier'),
    metadata,
  };
  for (const k of Object.keys(req) as Array<keyof TextRequest>) if (req[k] === undefined) delete req[k];
  return req;
};

