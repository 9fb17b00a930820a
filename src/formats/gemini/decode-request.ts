// A Gemini generateContent body into the neutral request (the model comes from the URL path).
import {
  arr, isObject, obj, optBool, optNum, optStr, optStrings, pushPart, str, unknownType, unwrapOpaque, UntranslatableField,
  type ContentPart, type DocumentPart, type HostedTool, type ImagePart, type Json, type MediaSource, type OutputFormat, type TextMessage, type TextRequest, type ThinkingSettings, type ToolChoice, type ToolDefinition, type Untranslatable,
} from '../../core/text/index.ts';
import { jsonSchemaOf } from './schema.ts';

const GEMINI_FILES = 'generativelanguage.googleapis.com';

const media = (mimeType: string, source: MediaSource, f: string): ImagePart | DocumentPart => {
  if (mimeType.startsWith('image/')) return { type: 'image', source };
  if (mimeType === 'application/pdf' || mimeType.startsWith('text/')) return { type: 'document', source };
  throw new UntranslatableField(f, `${mimeType} content has no counterpart in the upstream format`);
};

/**
 * An id for a call Gemini left without one. OpenAI takes chat call ids of at most 40 characters and
 * Anthropic only letters, digits, `_` and `-`; Gemini's function names may be 64 long and hold `.` and `:`.
 */
const madeId = (name: string, n: number): string => `call_${name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 24)}_${n}`;

/** Calls without ids (most Gemini calls) get one, and their responses find it again by the function's name. */
class CallIds {
  private n = 0;
  private readonly pending = new Map<string, string[]>();
  call(name: string, id: unknown): string {
    const callId = typeof id === 'string' && id ? id : madeId(name, this.n++);
    this.pending.set(name, [...(this.pending.get(name) ?? []), callId]);
    return callId;
  }
  result(name: string, id: unknown): string {
    const queue = this.pending.get(name) ?? [];
    if (typeof id === 'string' && id) {
      this.pending.set(name, queue.filter((x) => x !== id));
      return id;
    }
    return queue.shift() ?? madeId(name, this.n++);
  }
}

/** An inlineData or fileData part (a content part, or a part of a function's response) as an image or document. */
const mediaPart = (v: unknown, f: string): ImagePart | DocumentPart | undefined => {
  const p = obj(v, f);
  if (isObject(p.inlineData)) {
    const mimeType = str(p.inlineData.mimeType, `${f}.inlineData.mimeType`);
    return media(mimeType, { kind: 'base64', mediaType: mimeType, data: str(p.inlineData.data, `${f}.inlineData.data`) }, `${f}.inlineData`);
  }
  if (isObject(p.fileData)) {
    const uri = str(p.fileData.fileUri, `${f}.fileData.fileUri`);
    const mimeType = str(p.fileData.mimeType, `${f}.fileData.mimeType`);
    const source: MediaSource = uri.includes(GEMINI_FILES) ? { kind: 'file', fileId: uri, format: 'gemini', mediaType: mimeType } : { kind: 'url', url: uri, mediaType: mimeType };
    return media(mimeType, source, `${f}.fileData`);
  }
  return undefined;
};

/**
 * One part; a kind only Gemini has (executableCode and codeExecutionResult of its code tool, ...) is
 * noted in `left` and left out: a Gemini upstream gets it in the body as it came.
 */
const decodePart = (v: unknown, f: string, ids: CallIds, left: Untranslatable[]): ContentPart | undefined => {
  const p = obj(v, f);
  const sig = typeof p.thoughtSignature === 'string' ? { signature: unwrapOpaque(p.thoughtSignature, 'gemini') } : {};
  if (typeof p.text === 'string') return p.thought === true ? { type: 'thinking', text: p.text, ...sig } : { type: 'text', text: p.text, ...sig };
  const m = mediaPart(p, f);
  if (m) return m;
  if (isObject(p.functionCall)) {
    const name = str(p.functionCall.name, `${f}.functionCall.name`);
    return { type: 'tool_call', id: ids.call(name, p.functionCall.id), name, arguments: JSON.stringify(p.functionCall.args ?? {}), ...sig };
  }
  if (isObject(p.functionResponse)) {
    const r = p.functionResponse;
    const name = str(r.name, `${f}.functionResponse.name`);
    const response = isObject(r.response) ? r.response : {};
    const keys = Object.keys(response);
    const isError = keys.length === 1 && keys[0] === 'error';
    const only = keys.length === 1 ? response[keys[0]] : undefined;
    const text = typeof only === 'string' ? only : JSON.stringify(response);
    // Media the function returned (Gemini 3 multimodal function responses) belong to its result.
    const media = r.parts === undefined ? [] : arr(r.parts, `${f}.functionResponse.parts`).map((m, k) => {
      const part = mediaPart(m, `${f}.functionResponse.parts[${k}]`);
      if (!part) throw new UntranslatableField(`${f}.functionResponse.parts[${k}]`, 'this part has no counterpart in the upstream format');
      return part;
    });
    return { type: 'tool_result', callId: ids.result(name, r.id), name, content: [{ type: 'text', text }, ...media], ...(isError ? { isError: true } : {}) };
  }
  const kind = Object.keys(p).find((k) => k !== 'thoughtSignature');
  left.push({ field: `${f}.${kind ?? 'type'}`, reason: 'this part has no counterpart in the upstream format' });
  return undefined;
};

/**
 * A history part into the conversation. A streamed answer comes back as the chunks it arrived in (the
 * Gemini SDK's chat keeps each chunk's content): a thought in pieces, its signature on the last one, and
 * the empty text of the finish chunk. The pieces join into the one thought the signature was made for,
 * and empty text, which other vendors refuse, is left out.
 */
const pushHistoryPart = (messages: TextMessage[], role: TextMessage['role'], part: ContentPart): void => {
  if ((part.type === 'text' || part.type === 'thinking') && part.text === '' && !part.signature) return;
  const last = messages[messages.length - 1];
  const prev = last?.role === role ? last.content[last.content.length - 1] : undefined;
  if (part.type === 'thinking' && prev?.type === 'thinking' && !prev.signature && !prev.redacted) {
    prev.text += part.text;
    if (part.signature) prev.signature = part.signature;
    return;
  }
  pushPart(messages, role, part);
};

/** Function declarations; Google's own tools (googleSearch, codeExecution, ...) kept as they came for a Gemini upstream. */
const decodeTools = (v: unknown, hosted: HostedTool[]): ToolDefinition[] | undefined => {
  if (v === undefined) return undefined;
  return arr(v, 'tools').flatMap((t, i) => {
    const tool = obj(t, `tools[${i}]`);
    const { functionDeclarations, ...own } = tool;
    const other = Object.keys(own)[0];
    if (other) hosted.push({ format: 'gemini', tool: own, field: `tools[${i}].${other}`, reason: 'this tool runs on Google\'s servers and has no counterpart in the upstream format' });
    return arr(functionDeclarations ?? [], `tools[${i}].functionDeclarations`).map((d, j) => {
      const f = `tools[${i}].functionDeclarations[${j}]`;
      const decl = obj(d, f);
      const schema = decl.parametersJsonSchema ?? (decl.parameters === undefined ? undefined : jsonSchemaOf(decl.parameters, `${f}.parameters`));
      return {
        name: str(decl.name, `${f}.name`),
        ...(typeof decl.description === 'string' ? { description: decl.description } : {}),
        parameters: schema === undefined ? { type: 'object', properties: {} } : obj(schema, `${f}.parameters`),
      };
    });
  });
};

const decodeToolChoice = (v: unknown): { choice?: ToolChoice; only?: string[] } => {
  if (!isObject(v) || !isObject(v.functionCallingConfig)) return {};
  const c = v.functionCallingConfig;
  const names = c.allowedFunctionNames === undefined ? undefined : arr(c.allowedFunctionNames, 'toolConfig.functionCallingConfig.allowedFunctionNames').map(String);
  if (c.mode === 'NONE') return { choice: { type: 'none' } };
  if (c.mode === 'ANY') return names?.length === 1 ? { choice: { type: 'tool', name: names[0] } } : { choice: { type: 'required' }, only: names };
  if (c.mode === 'AUTO' || c.mode === 'VALIDATED' || c.mode === undefined || c.mode === 'MODE_UNSPECIFIED') return { choice: { type: 'auto' }, only: names };
  throw unknownType('toolConfig.functionCallingConfig.mode', c.mode);
};

const decodeThinking = (v: unknown): ThinkingSettings | undefined => {
  if (!isObject(v)) return undefined;
  const budget = optNum(v.thinkingBudget, 'generationConfig.thinkingConfig.thinkingBudget');
  const include = optBool(v.includeThoughts, 'generationConfig.thinkingConfig.includeThoughts');
  const inc = include !== undefined ? { includeThoughts: include } : {};
  const level = optStr(v.thinkingLevel, 'generationConfig.thinkingConfig.thinkingLevel')?.toLowerCase();
  if (level && level !== 'thinking_level_unspecified') return { mode: 'adaptive', effort: level as ThinkingSettings['effort'], ...inc };
  if (budget === 0) return { mode: 'disabled', ...inc };
  if (budget === undefined || budget < 0) return { mode: 'adaptive', ...inc };
  return { mode: 'enabled', budgetTokens: budget, ...inc };
};

const decodeOutput = (g: Json): OutputFormat | undefined => {
  if (g.responseMimeType !== 'application/json') return undefined;
  const schema = g.responseJsonSchema ?? (g.responseSchema === undefined ? undefined : jsonSchemaOf(g.responseSchema, 'generationConfig.responseSchema'));
  return schema === undefined ? { type: 'json_object' } : { type: 'json_schema', schema: obj(schema, 'generationConfig.responseJsonSchema') };
};

export const decodeRequest = (input: unknown, model = ''): TextRequest => {
  const body = obj(input, 'body');
  const ids = new CallIds();
  const messages: TextMessage[] = [];
  const left: Untranslatable[] = [];
  if (body.systemInstruction !== undefined) {
    const s = obj(body.systemInstruction, 'systemInstruction');
    messages.push({ role: 'system', content: arr(s.parts ?? [], 'systemInstruction.parts').flatMap((p, i) => decodePart(p, `systemInstruction.parts[${i}]`, ids, left) ?? []) });
  }
  arr(body.contents, 'contents').forEach((c, i) => {
    const content = obj(c, `contents[${i}]`);
    const role = content.role === 'model' ? 'assistant' : 'user';
    arr(content.parts ?? [], `contents[${i}].parts`).forEach((p, j) => {
      const part = decodePart(p, `contents[${i}].parts[${j}]`, ids, left);
      if (part) pushHistoryPart(messages, role, part);
    });
  });
  const g = body.generationConfig === undefined ? {} : obj(body.generationConfig, 'generationConfig');
  if (typeof g.candidateCount === 'number' && g.candidateCount > 1) throw new UntranslatableField('generationConfig.candidateCount', 'several candidates per call have no counterpart in other formats');
  if (Array.isArray(g.responseModalities) && g.responseModalities.some((m) => m !== 'TEXT')) throw new UntranslatableField('generationConfig.responseModalities', 'only text answers translate to other formats');
  const { choice, only } = decodeToolChoice(body.toolConfig);
  const hostedTools: HostedTool[] = [];
  const tools = decodeTools(body.tools, hostedTools);
  const req: TextRequest = {
    model,
    messages,
    tools: only && tools ? tools.filter((t) => only.includes(t.name)) : tools,
    hostedTools: hostedTools.length > 0 ? hostedTools : undefined,
    untranslatable: left.length > 0 ? left : undefined,
    toolChoice: choice,
    thinking: decodeThinking(g.thinkingConfig),
    output: decodeOutput(g),
    maxOutputTokens: optNum(g.maxOutputTokens, 'generationConfig.maxOutputTokens'),
    temperature: optNum(g.temperature, 'generationConfig.temperature'),
    topP: optNum(g.topP, 'generationConfig.topP'),
    topK: optNum(g.topK, 'generationConfig.topK'),
    stop: optStrings(g.stopSequences, 'generationConfig.stopSequences'),
  };
  for (const k of Object.keys(req) as Array<keyof TextRequest>) if (req[k] === undefined) delete req[k];
  return req;
};
