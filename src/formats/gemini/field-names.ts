// The Gemini API reads its bodies by the protobuf JSON mapping, which takes a field by its JSON
// name (lowerCamelCase) or by its proto name (snake_case): Google's own REST examples write
// `system_instruction`, `generation_config`, `inline_data`. Our codecs read the JSON names only, so
// a body is renamed to them first. Only the fields of the request's messages are renamed, each
// message by its own field list; the values a caller owns (functionCall.args,
// functionResponse.response, the property names of a Schema's `properties`, the JSON Schemas of
// parametersJsonSchema / responseJsonSchema) are never entered.
import { badRequest } from '../../core/errors.ts';
import { isObject, type Json } from '../../core/text/index.ts';

/**
 * Each message: its fields whose two names differ (several words), and the fields holding other
 * messages (by the message's name here; a repeated field holds a list of them). One-word fields
 * need no entry unless they hold a message. The names are those of @google/genai's types
 * (GenerateContentParameters, Part, Tool, Schema, GenerationConfig, ...).
 */
interface Message {
  /** More-than-one-word scalar fields, and fields that hold values a caller owns (never entered). */
  leaves?: readonly string[];
  /** Message-valued fields. */
  holds?: Readonly<Record<string, string>>;
}

const MESSAGES: Record<string, Message> = {
  request: {
    leaves: ['cachedContent'],
    holds: { contents: 'content', systemInstruction: 'content', tools: 'tool', toolConfig: 'toolConfig', generationConfig: 'generationConfig', safetySettings: 'safetySetting', generateContentRequest: 'request' },
  },
  content: { holds: { parts: 'part' } },
  part: {
    leaves: ['thoughtSignature', 'partMetadata'],
    holds: { inlineData: 'blob', fileData: 'fileData', functionCall: 'functionCall', functionResponse: 'functionResponse', executableCode: 'leaf', codeExecutionResult: 'leaf', videoMetadata: 'videoMetadata', mediaResolution: 'mediaResolution' },
  },
  blob: { leaves: ['mimeType', 'displayName'] },
  fileData: { leaves: ['mimeType', 'fileUri', 'displayName'] },
  functionCall: { leaves: ['willContinue'] },
  functionResponse: { leaves: ['willContinue'], holds: { parts: 'functionResponsePart' } },
  functionResponsePart: { holds: { inlineData: 'blob', fileData: 'fileData' } },
  videoMetadata: { leaves: ['startOffset', 'endOffset'] },
  mediaResolution: { leaves: ['numTokens'] },
  tool: {
    leaves: ['codeExecution', 'urlContext', 'enterpriseWebSearch'],
    holds: { functionDeclarations: 'functionDeclaration', googleSearchRetrieval: 'googleSearchRetrieval', googleSearch: 'googleSearch', computerUse: 'computerUse', fileSearch: 'fileSearch', googleMaps: 'googleMaps', mcpServers: 'mcpServer' },
  },
  functionDeclaration: { leaves: ['parametersJsonSchema', 'responseJsonSchema'], holds: { parameters: 'schema', response: 'schema' } },
  googleSearchRetrieval: { holds: { dynamicRetrievalConfig: 'dynamicRetrievalConfig' } },
  dynamicRetrievalConfig: { leaves: ['dynamicThreshold'] },
  googleSearch: { leaves: ['excludeDomains', 'blockingConfidence', 'searchTypes'], holds: { timeRangeFilter: 'interval' } },
  interval: { leaves: ['startTime', 'endTime'] },
  computerUse: { leaves: ['excludedPredefinedFunctions', 'enablePromptInjectionDetection', 'disabledSafetyPolicies'] },
  fileSearch: { leaves: ['fileSearchStoreNames', 'metadataFilter', 'topK'] },
  googleMaps: { leaves: ['enableWidget', 'authConfig', 'groundingTypes'] },
  mcpServer: { leaves: ['streamableHttpTransport'] },
  toolConfig: { leaves: ['includeServerSideToolInvocations'], holds: { functionCallingConfig: 'functionCallingConfig', retrievalConfig: 'retrievalConfig' } },
  functionCallingConfig: { leaves: ['allowedFunctionNames', 'streamFunctionCallArguments'] },
  retrievalConfig: { leaves: ['languageCode', 'latLng'] },
  safetySetting: {},
  generationConfig: {
    leaves: [
      'stopSequences', 'responseMimeType', 'responseJsonSchema', 'responseModalities', 'candidateCount', 'maxOutputTokens', 'topP', 'topK',
      'presencePenalty', 'frequencyPenalty', 'responseLogprobs', 'enableEnhancedCivicAnswers', 'mediaResolution', 'audioTimestamp', 'enableAffectiveDialog',
    ],
    holds: { responseSchema: 'schema', thinkingConfig: 'thinkingConfig', speechConfig: 'speechConfig', imageConfig: 'imageConfig', routingConfig: 'leaf', modelSelectionConfig: 'leaf' },
  },
  thinkingConfig: { leaves: ['includeThoughts', 'thinkingBudget', 'thinkingLevel'] },
  imageConfig: { leaves: ['aspectRatio', 'imageSize', 'personGeneration', 'outputMimeType', 'outputCompressionQuality'] },
  speechConfig: { leaves: ['languageCode'], holds: { voiceConfig: 'voiceConfig', multiSpeakerVoiceConfig: 'multiSpeakerVoiceConfig' } },
  voiceConfig: { holds: { prebuiltVoiceConfig: 'prebuiltVoiceConfig' } },
  prebuiltVoiceConfig: { leaves: ['voiceName'] },
  multiSpeakerVoiceConfig: { holds: { speakerVoiceConfigs: 'speakerVoiceConfig' } },
  speakerVoiceConfig: { holds: { voiceConfig: 'voiceConfig' } },
  // `properties` is a map: its keys are the caller's property names, its values Schemas.
  schema: {
    leaves: ['maxItems', 'minItems', 'maxLength', 'minLength', 'maxProperties', 'minProperties', 'propertyOrdering'],
    holds: { items: 'schema', anyOf: 'schema', properties: 'schemaMap' },
  },
  // A message entered for its names only (nothing under it is renamed).
  leaf: {},
};

/** A message's own names: proto name -> JSON name, and JSON name -> the message it holds. */
interface Names {
  renames: Map<string, string>;
  holds: Map<string, Names | 'schemaMap'>;
}

const snake = (camel: string) => camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

const NAMES = new Map<string, Names>();
for (const name of Object.keys(MESSAGES)) NAMES.set(name, { renames: new Map(), holds: new Map() });
for (const [name, message] of Object.entries(MESSAGES)) {
  const names = NAMES.get(name)!;
  for (const field of [...(message.leaves ?? []), ...Object.keys(message.holds ?? {})]) if (snake(field) !== field) names.renames.set(snake(field), field);
  for (const [field, held] of Object.entries(message.holds ?? {})) names.holds.set(field, held === 'schemaMap' ? held : NAMES.get(held)!);
}
const REQUEST = NAMES.get('request')!;
const SCHEMA = NAMES.get('schema')!;

/** Deeper than any real request (Schemas nest); a bound keeps a hostile body from exhausting the stack. */
const MAX_DEPTH = 128;

function renamed(value: unknown, names: Names | 'schemaMap', depth: number): unknown {
  if (depth > MAX_DEPTH) throw badRequest(`The body is nested more than ${MAX_DEPTH} levels deep`);
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = renamed(value[i], names, depth + 1);
      if (item !== value[i]) (out ??= value.slice())[i] = item;
    }
    return out ?? value;
  }
  if (!isObject(value)) return value;
  const keys = Object.keys(value);
  // Copied from the first change on, in the caller's key order; untouched otherwise.
  let out: Json | undefined;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const to = names === 'schemaMap' ? undefined : names.renames.get(key);
    const field = to ?? key;
    const held = names === 'schemaMap' ? SCHEMA : names.holds.get(field);
    const item = held ? renamed(value[key], held, depth + 1) : value[key];
    if (to !== undefined && Object.hasOwn(value, to)) throw badRequest(`${key} and ${to} are the same field: send one of them`);
    if (out === undefined && to === undefined && item === value[key]) continue;
    if (out === undefined) {
      out = {};
      for (let j = 0; j < i; j++) out[keys[j]!] = value[keys[j]!];
    }
    out[field] = item;
  }
  return out ?? value;
}

/**
 * A generateContent or countTokens body with its proto (snake_case) field names in their JSON
 * spelling; the same object when it had none to rename (the common case: nothing is copied).
 * Both spellings of one field are a 400 naming them: they may disagree, and which one a Gemini
 * upstream would read is not ours to guess.
 */
export function jsonFieldNames(body: unknown): unknown {
  return renamed(body, REQUEST, 0);
}
