// The request checks of the Gemini text fake. Proto JSON: an unknown field anywhere is 400 `Invalid
// JSON payload received. Unknown name "x"`. Field lists from @google/genai 2.32 (dist/node/index.mjs:
// partToMldev, functionCallToMldev, toolToMldev, toolConfigToMldev, functionCallingConfigToMldev;
// dist/genai.d.ts: FunctionDeclaration, FunctionResponse, ThinkingConfig, FunctionCallingConfigMode):
// - contents[] with role user|model and non-empty parts, each with exactly one data field (text,
//   inlineData, fileData, functionCall, functionResponse, executableCode, codeExecutionResult...);
//   `thought` and `thoughtSignature` ride beside it;
// - a function response turn must come right after a function call turn and answer as many calls;
// - tools: functionDeclarations (name, description, parameters or parametersJsonSchema, ...) and the
//   built-in tools; toolConfig.functionCallingConfig {mode, allowedFunctionNames};
// - generationConfig.thinkingConfig {includeThoughts, thinkingBudget | thinkingLevel}.

export class Refusal extends Error {
  constructor(readonly code: number, readonly status: string, message: string, readonly details?: unknown[]) {
    super(message);
  }
}
export const bad = (message: string) => new Refusal(400, 'INVALID_ARGUMENT', message);

export const TOP = ['contents', 'generationConfig', 'safetySettings', 'systemInstruction', 'tools', 'toolConfig', 'cachedContent', 'labels', 'serviceTier', 'continuationToken', 'store'];
const CONFIG = ['stopSequences', 'responseMimeType', 'responseSchema', 'responseJsonSchema', 'responseModalities', 'candidateCount', 'maxOutputTokens', 'temperature', 'topP', 'topK', 'seed', 'presencePenalty', 'frequencyPenalty', 'responseLogprobs', 'logprobs', 'thinkingConfig', 'mediaResolution', 'speechConfig', 'imageConfig', 'audioTranscriptionConfig', 'enableEnhancedCivicAnswers'];
const DATA = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult', 'toolCall', 'toolResponse'];
const PART = [...DATA, 'thought', 'thoughtSignature', 'videoMetadata', 'partMetadata', 'mediaResolution', 'audioTranscription', 'mediaProcessing', 'speechMetadata'];
const TOOL = ['functionDeclarations', 'googleSearch', 'googleSearchRetrieval', 'codeExecution', 'urlContext', 'fileSearch', 'computerUse', 'googleMaps', 'mcpServers'];
const DECLARATION = ['name', 'description', 'parameters', 'parametersJsonSchema', 'response', 'responseJsonSchema', 'behavior'];

export function closed(object: unknown, allowed: string[], path: string) {
  if (typeof object !== 'object' || object === null || Array.isArray(object)) throw bad(`Invalid value at '${path}': expected an object`);
  const unknown = Object.keys(object).find((k) => !allowed.includes(k));
  if (unknown) throw bad(`Invalid JSON payload received. Unknown name "${unknown}" at '${path}': Cannot find field.`);
}

function part(p: any, at: string, where: string) {
  closed(p, PART, at);
  if (DATA.filter((k) => p[k] !== undefined).length !== 1) throw bad(`* ${where}.${at}.data: required oneof field 'data' must have one initialized field`);
  if (p.inlineData) closed(p.inlineData, ['mimeType', 'data', 'displayName'], `${at}.inline_data`);
  if (p.thought !== undefined && typeof p.thought !== 'boolean') throw bad(`Invalid value at '${at}.thought' (TYPE_BOOL), ${JSON.stringify(p.thought)}`);
  if (p.thoughtSignature !== undefined && !(typeof p.thoughtSignature === 'string' && /^[A-Za-z0-9+/_-]*=*$/.test(p.thoughtSignature))) throw bad(`Invalid value at '${at}.thought_signature' (TYPE_BYTES), Base64 decoding failed for "${p.thoughtSignature}"`);
  if (p.functionCall) {
    closed(p.functionCall, ['id', 'name', 'args'], `${at}.function_call`);
    if (!p.functionCall.name) throw bad(`* ${where}.${at}.function_call.name: Name cannot be empty.`);
    if (p.functionCall.args !== undefined && (typeof p.functionCall.args !== 'object' || Array.isArray(p.functionCall.args))) throw bad(`Invalid value at '${at}.function_call.args' (type.googleapis.com/google.protobuf.Struct)`);
  }
  if (p.functionResponse) {
    closed(p.functionResponse, ['id', 'name', 'response', 'parts', 'willContinue', 'scheduling'], `${at}.function_response`);
    if (!p.functionResponse.name) throw bad(`* ${where}.${at}.function_response.name: Name cannot be empty.`);
    if (p.functionResponse.response !== undefined && (typeof p.functionResponse.response !== 'object' || Array.isArray(p.functionResponse.response))) throw bad(`Invalid value at '${at}.function_response.response' (type.googleapis.com/google.protobuf.Struct)`);
  }
}

/** Checks contents; answers the last user text (what the fake echoes). */
export function checkContents(contents: any, where: string): string {
  if (!Array.isArray(contents) || contents.length === 0) throw bad(`* ${where}.contents: contents is not specified`);
  let text = '';
  let calls = 0;
  contents.forEach((content: any, i: number) => {
    closed(content, ['role', 'parts'], `contents[${i}]`);
    if (content.role !== undefined && !['user', 'model'].includes(content.role)) throw bad('Please use a valid role: user, model.');
    if (!Array.isArray(content.parts) || content.parts.length === 0) throw bad(`* ${where}.contents[${i}].parts: contents.parts must not be empty.`);
    content.parts.forEach((p: any, j: number) => {
      part(p, `contents[${i}].parts[${j}]`, where);
      if (typeof p.text === 'string' && content.role !== 'model' && !p.thought) text = p.text;
    });
    const responses = content.parts.filter((p: any) => p.functionResponse).length;
    if (responses && !calls) throw bad('Please ensure that function response turn comes immediately after a function call turn.');
    if (responses && responses !== calls) throw bad('Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.');
    calls = content.role === 'model' ? content.parts.filter((p: any) => p.functionCall).length : 0;
  });
  return text;
}

function tools(body: any) {
  if (!Array.isArray(body.tools)) throw bad("Invalid value at 'tools': expected a list");
  body.tools.forEach((tool: any, i: number) => {
    closed(tool, TOOL, `tools[${i}]`);
    (tool.functionDeclarations ?? []).forEach((d: any, k: number) => {
      const at = `tools[${i}].function_declarations[${k}]`;
      closed(d, DECLARATION, at);
      if (typeof d.name !== 'string' || !/^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$/.test(d.name)) throw bad(`* GenerateContentRequest.${at}.name: Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 128.`);
      if (d.parameters !== undefined && d.parametersJsonSchema !== undefined) throw bad(`* GenerateContentRequest.${at}: parameters and parameters_json_schema cannot both be set.`);
    });
  });
  const config = body.toolConfig;
  if (config !== undefined) {
    closed(config, ['functionCallingConfig', 'retrievalConfig', 'includeServerSideToolInvocations'], 'tool_config');
    const calling = config.functionCallingConfig;
    if (calling !== undefined) {
      closed(calling, ['mode', 'allowedFunctionNames'], 'tool_config.function_calling_config');
      if (calling.mode !== undefined && !['MODE_UNSPECIFIED', 'AUTO', 'ANY', 'NONE', 'VALIDATED'].includes(calling.mode)) throw bad(`Invalid value at 'tool_config.function_calling_config.mode' (type.googleapis.com/google.ai.generativelanguage.v1beta.FunctionCallingConfig.Mode), "${calling.mode}"`);
    }
  }
}

export function checkGenerate(body: any): string {
  closed(body, TOP, 'request');
  const text = checkContents(body.contents, 'GenerateContentRequest');
  if (body.systemInstruction !== undefined) {
    closed(body.systemInstruction, ['role', 'parts'], 'system_instruction');
    (body.systemInstruction.parts ?? []).forEach((p: any, j: number) => part(p, `system_instruction.parts[${j}]`, 'GenerateContentRequest'));
  }
  if (body.tools !== undefined) tools(body);
  else if (body.toolConfig !== undefined) tools({ ...body, tools: [] });
  if (body.generationConfig !== undefined) {
    closed(body.generationConfig, CONFIG, 'generation_config');
    const { temperature, topP, maxOutputTokens, thinkingConfig } = body.generationConfig;
    if (temperature !== undefined && !(temperature >= 0 && temperature <= 2)) throw bad('temperature must be in [0, 2]');
    if (topP !== undefined && !(topP >= 0 && topP <= 1)) throw bad('top_p must be in [0, 1]');
    if (maxOutputTokens !== undefined && !Number.isInteger(maxOutputTokens)) throw bad("Invalid value at 'generation_config.max_output_tokens' (TYPE_INT32)");
    if (thinkingConfig !== undefined) {
      closed(thinkingConfig, ['includeThoughts', 'thinkingBudget', 'thinkingLevel'], 'generation_config.thinking_config');
      if (thinkingConfig.thinkingBudget !== undefined && !Number.isInteger(thinkingConfig.thinkingBudget)) throw bad("Invalid value at 'generation_config.thinking_config.thinking_budget' (TYPE_INT32)");
      if (thinkingConfig.thinkingLevel !== undefined && !['THINKING_LEVEL_UNSPECIFIED', 'MINIMAL', 'LOW', 'MEDIUM', 'HIGH'].includes(thinkingConfig.thinkingLevel)) throw bad(`Invalid value at 'generation_config.thinking_config.thinking_level', "${thinkingConfig.thinkingLevel}"`);
      if (thinkingConfig.thinkingBudget !== undefined && thinkingConfig.thinkingLevel !== undefined) throw bad('You can only set only one of thinking budget and thinking level.');
    }
  }
  return text;
}
