// The neutral request into a Gemini generateContent body (the model goes into the URL path).
import {
  argumentsObject, budgetForEffort, isInstruction, textOf, toolNamesById, UntranslatableField,
  type ContentPart, type Json, type MediaSource, type TextRequest, type ThinkingSettings,
} from '../../core/text/index.ts';

const EXT_TYPES: Record<string, string> = { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', pdf: 'application/pdf' };

const mediaPart = (s: MediaSource, field: string): Json => {
  if (s.kind === 'base64') return { inlineData: { mimeType: s.mediaType, data: s.data } };
  if (s.kind === 'file' && s.format !== 'gemini') throw new UntranslatableField(field, `a file id issued by the ${s.format} API`);
  const uri = s.kind === 'file' ? s.fileId : s.url;
  const mimeType = s.mediaType ?? EXT_TYPES[/\.([a-z0-9]+)(?:[?#]|$)/i.exec(uri)?.[1]?.toLowerCase() ?? ''];
  if (!mimeType) throw new UntranslatableField(field, 'Gemini needs the media type of a URL it fetches, and this URL does not show it');
  return { fileData: { mimeType, fileUri: uri } };
};

const sig = (p: { signature?: { format: string; value: string } }): Json =>
  p.signature?.format === 'gemini' ? { thoughtSignature: p.signature.value } : {};

const parts = (p: ContentPart, field: string, names: Map<string, string>): Json[] => {
  switch (p.type) {
    case 'text':
      return [{ text: p.text, ...sig(p) }];
    case 'image':
    case 'document':
      return [mediaPart(p.source, `${field}.source`)];
    case 'thinking':
      // Thoughts another vendor produced cannot be replayed to Gemini; its own carry their signature.
      return p.signature?.format === 'gemini' && !p.redacted ? [{ text: p.text, thought: true, thoughtSignature: p.signature.value }] : [];
    case 'tool_call':
      return [{ functionCall: { id: p.id, name: p.name, args: argumentsObject(p.arguments) }, ...sig(p) }];
    case 'tool_result': {
      const name = p.name ?? names.get(p.callId);
      if (!name) throw new UntranslatableField(`${field}.callId`, 'a tool result whose call is not in the conversation (Gemini needs the function name)');
      const text = textOf(p.content);
      const response = p.isError ? { error: text } : { output: text };
      return [
        { functionResponse: { id: p.callId, name, response } },
        ...p.content.flatMap((c, k) => (c.type === 'text' ? [] : [mediaPart(c.source, `${field}.content[${k}].source`)])),
      ];
    }
  }
};

/** Gemini 2.5 and 3 both take a token budget; -1 lets the model decide. */
export const thinkingConfig = (t: ThinkingSettings | undefined): Json | undefined => {
  if (!t) return undefined;
  const include = t.includeThoughts || t.summary ? { includeThoughts: true } : {};
  if (t.mode === 'disabled' || t.effort === 'none') return { thinkingBudget: 0 };
  if (t.budgetTokens !== undefined) return { thinkingBudget: t.budgetTokens, ...include };
  return { thinkingBudget: t.effort ? budgetForEffort(t.effort) : -1, ...include };
};

/**
 * Gemini 3 and later refuse a replayed model turn whose calls lack the signature they were issued with.
 * Calls another vendor made never had one: Google's documented sentinel stands in for it.
 */
export const SKIP_SIGNATURE = 'skip_thought_signature_validator';
const signsCalls = (model: string): boolean => /^(models\/)?gemini-([3-9]|\d\d)/.test(model);

const signForeignCalls = (contents: Json[]): void => {
  for (const c of contents) {
    if (c.role !== 'model') continue;
    const calls = (c.parts as Json[]).filter((p) => p.functionCall);
    if (calls.length && !calls.some((p) => p.thoughtSignature)) calls[0].thoughtSignature = SKIP_SIGNATURE;
  }
};

export const encodeRequest = (req: TextRequest, targetModel = ''): Json => {
  const names = toolNamesById(req.messages);
  // Gemini takes instructions once, up front: later system turns join them, in order.
  const system = req.messages.filter(isInstruction).flatMap((m) => m.content.map((p) => ({ text: textOf([p]) })).filter((p) => p.text !== ''));
  const contents: Json[] = [];
  req.messages.forEach((m, i) => {
    if (isInstruction(m)) return;
    const role = m.role === 'assistant' ? 'model' : 'user';
    const ps = m.content.flatMap((p, j) => parts(p, `messages[${i}].content[${j}]`, names));
    if (!ps.length) return;
    const last = contents[contents.length - 1];
    if (last && last.role === role) (last.parts as Json[]).push(...ps);
    else contents.push({ role, parts: ps });
  });
  if (signsCalls(targetModel)) signForeignCalls(contents);
  const c = req.toolChoice;
  const mode = c?.type === 'none' ? 'NONE' : c?.type === 'required' || c?.type === 'tool' ? 'ANY' : c?.type === 'auto' ? 'AUTO' : undefined;
  const out = req.output;
  const thinking = thinkingConfig(req.thinking);
  const generationConfig: Json = {
    ...(req.maxOutputTokens !== undefined ? { maxOutputTokens: req.maxOutputTokens } : {}),
    ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
    ...(req.topP !== undefined ? { topP: req.topP } : {}),
    ...(req.topK !== undefined ? { topK: req.topK } : {}),
    ...(req.stop?.length ? { stopSequences: req.stop } : {}),
    ...(out ? { responseMimeType: 'application/json', ...(out.type === 'json_schema' ? { responseJsonSchema: out.schema } : {}) } : {}),
    ...(thinking ? { thinkingConfig: thinking } : {}),
  };
  const own = (req.hostedTools ?? []).filter((h) => h.format === 'gemini').map((h) => h.tool as Json);
  return {
    contents,
    ...(system.length ? { systemInstruction: { parts: system } } : {}),
    ...(req.tools?.length || own.length ? { tools: [...(req.tools?.length ? [{ functionDeclarations: req.tools.map((d) => ({
      name: d.name, ...(d.description !== undefined ? { description: d.description } : {}), parametersJsonSchema: d.parameters,
    })) }] : []), ...own] } : {}),
    ...(mode ? { toolConfig: { functionCallingConfig: { mode, ...(c?.type === 'tool' ? { allowedFunctionNames: [c.name] } : {}) } } } : {}),
    ...(Object.keys(generationConfig).length ? { generationConfig } : {}),
  };
};
