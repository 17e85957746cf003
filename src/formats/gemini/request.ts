import { invalidBody, unsupportedField } from '../../errors/index.js';
import type { CallExtensions, JsonObject, ReasoningEffort, ReasoningRequest } from '../../model-api/index.js';
import type { DecodedCall } from '../types.js';
import { refuseUntranslatableFields, sortUntranslatedFields, type Untranslatable } from '../untranslatable.js';
import { jsonSchemaOf } from './schema.js';

/** A Gemini API `Content`: a turn of the conversation. */
export interface GeminiContent extends JsonObject {
  role?: string;
  parts?: JsonObject[];
}

/** The body of generateContent / streamGenerateContent (and countTokens' generateContentRequest) as the gateway reads it. */
export interface GeminiBody extends JsonObject {
  contents?: GeminiContent[];
  systemInstruction?: GeminiContent;
  generationConfig?: JsonObject;
  tools?: JsonObject[];
  toolConfig?: JsonObject;
}

/** A Gemini API request as the route read it: the model and the method from the path, the body as sent. */
export interface GeminiRequest {
  /** The catalog id or alias the path named (`models/{model}:generateContent`). */
  model: string;
  stream: boolean;
  body: GeminiBody;
}

/** A field the internal call cannot carry, and leaving it out would change the answer: refused unless the provider speaks the Gemini API itself. */
export interface GeminiDecodedCall extends DecodedCall {
  untranslatable: Untranslatable[];
  /** The caller's body, for the prompt's estimate when nothing better is known (count.ts). */
  source: GeminiBody;
}

/** Top-level fields translated into the internal call (or read for its extensions). */
const TRANSLATED_FIELDS = new Set(['model', 'contents', 'systemInstruction', 'generationConfig', 'tools', 'toolConfig']);

/** Top-level fields only Google can serve: refused for the others. */
const REFUSED_FIELDS: Record<string, string> = {
  cachedContent: 'a context cache held in a Google account',
};

/** Built-in tools only Google runs; `googleSearch` is mapped to the target's own web search. */
const REFUSED_TOOLS: Record<string, string> = {
  codeExecution: 'code execution, which only Google runs',
  urlContext: 'URL context, which only Google fetches',
  fileSearch: 'file search over stores held in a Google account',
  googleMaps: 'Google Maps grounding',
  computerUse: 'computer use',
  retrieval: 'retrieval from a Google data store',
  enterpriseWebSearch: 'enterprise web search',
};

const SEARCH_TOOLS = new Set(['googleSearch', 'googleSearchRetrieval']);

/** generationConfig members mapped; the others are dropped and named, unless REFUSED_CONFIG lists them. */
const MAPPED_CONFIG = new Set([
  'temperature',
  'topP',
  'topK',
  'maxOutputTokens',
  'stopSequences',
  'candidateCount',
  'seed',
  'presencePenalty',
  'frequencyPenalty',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  'thinkingConfig',
  'responseModalities',
]);

const REFUSED_CONFIG: Record<string, string> = {
  responseLogprobs: 'log probabilities',
  logprobs: 'log probabilities',
  speechConfig: 'spoken output',
  imageConfig: 'image output',
};

const THINKING_LEVELS = new Set<ReasoningEffort>(['minimal', 'low', 'medium', 'high']);

/**
 * A Gemini API request as the internal chat call (OpenAI's shape): `systemInstruction` as the
 * system message, `user` / `model` turns as user / assistant messages, `functionCall` parts as
 * tool calls (an id made for a call without one) and `functionResponse` parts as `tool`
 * messages answering them, `inlineData` as image or file parts; `generationConfig` as sampling,
 * limits, stop sequences, candidates (`n`) and `response_format`; `thinkingConfig` as the
 * reasoning extension, `topK` and `googleSearch` as theirs; function declarations and
 * `toolConfig` as tools and `tool_choice`. `safetySettings` and fields the gateway does not know
 * are listed in `dropped`; what has no equivalent (`cachedContent`, built-in tools only Google
 * runs, log probabilities) in `untranslatable`, because a provider that speaks the Gemini API
 * takes the request as sent (the route refuses them for the others: refuseUntranslatable).
 */
export function decodeGeminiRequest(request: GeminiRequest): GeminiDecodedCall {
  const { body } = request;
  const decoder = new Decoder();
  const extensions: CallExtensions = {};
  sortUntranslatedFields(body, TRANSLATED_FIELDS, REFUSED_FIELDS, decoder);
  const messages = decoder.messages(body);
  const chat: JsonObject = { messages };
  const config = isRecord(body.generationConfig) ? body.generationConfig : {};
  Object.assign(chat, decoder.generationConfig(config, extensions));
  Object.assign(chat, decoder.tools(body, extensions));
  const candidates = typeof config.candidateCount === 'number' ? config.candidateCount : 1;
  return {
    model: request.model,
    stream: request.stream,
    body: chat,
    maxOutputTokens: typeof config.maxOutputTokens === 'number' ? config.maxOutputTokens : null,
    choices: candidates,
    untranslatable: decoder.untranslatable,
    source: body,
    dropped: decoder.dropped,
    extensions: Object.keys(extensions).length > 0 ? extensions : undefined,
  };
}

/** Throws the 400 naming the first field the internal call cannot carry, if any. */
export function refuseUntranslatable(decoded: GeminiDecodedCall): void {
  refuseUntranslatableFields(decoded.untranslatable, 'the Gemini API');
}

/** A function call of an earlier turn, for the responses that answer it. */
interface CallMade {
  id: string;
  name: string;
  answered: boolean;
}

class Decoder {
  readonly dropped: string[] = [];
  readonly untranslatable: Untranslatable[] = [];
  private readonly calls: CallMade[] = [];

  messages(body: GeminiBody): JsonObject[] {
    const messages: JsonObject[] = [];
    if (body.systemInstruction !== undefined) {
      if (!isRecord(body.systemInstruction)) throw invalidBody('systemInstruction must be a Content object with parts.', 'systemInstruction');
      const text = this.texts(body.systemInstruction.parts, 'systemInstruction.parts');
      if (text.length > 0) messages.push({ role: 'system', content: text });
    }
    if (!Array.isArray(body.contents) || body.contents.length === 0) throw invalidBody('contents must be a non-empty array of Content objects.', 'contents');
    body.contents.forEach((content, index) => {
      const param = `contents[${index}]`;
      if (!isRecord(content) || !Array.isArray(content.parts)) throw invalidBody(`${param} must be a Content object with parts.`, `${param}.parts`);
      const role = content.role ?? 'user';
      if (role === 'model') messages.push(this.modelTurn(content.parts, `${param}.parts`));
      else if (role === 'user' || role === 'function') messages.push(...this.userTurn(content.parts, `${param}.parts`));
      else throw invalidBody(`${param}.role must be "user" or "model".`, `${param}.role`);
    });
    return messages;
  }

  /** A model turn: its text and function calls as one assistant message; its thoughts are Gemini's own and stay out. */
  private modelTurn(parts: JsonObject[], param: string): JsonObject {
    const texts: string[] = [];
    const toolCalls: JsonObject[] = [];
    parts.forEach((part, index) => {
      const at = `${param}[${index}]`;
      if (!isRecord(part)) throw invalidBody(`${at} must be a Part object.`, at);
      if (isRecord(part.functionCall)) {
        const call = part.functionCall;
        if (typeof call.name !== 'string') throw invalidBody(`${at}.functionCall.name must be a string.`, `${at}.functionCall.name`);
        const id = typeof call.id === 'string' && call.id.length > 0 ? call.id : `call_${this.calls.length + 1}`;
        this.calls.push({ id, name: call.name, answered: false });
        toolCalls.push({ id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) } });
      } else if (typeof part.text === 'string') {
        if (part.thought !== true) texts.push(part.text);
      } else {
        this.otherPart(part, at);
      }
    });
    const message: JsonObject = { role: 'assistant', content: texts.length > 0 ? texts.join('') : null };
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    else if (message.content === null) message.content = '';
    return message;
  }

  /** A user turn: its function responses as `tool` messages first, then the rest as one user message. */
  private userTurn(parts: JsonObject[], param: string): JsonObject[] {
    const tools: JsonObject[] = [];
    const content: JsonObject[] = [];
    parts.forEach((part, index) => {
      const at = `${param}[${index}]`;
      if (!isRecord(part)) throw invalidBody(`${at} must be a Part object.`, at);
      if (isRecord(part.functionResponse)) tools.push(this.functionResponse(part.functionResponse, `${at}.functionResponse`));
      else if (typeof part.text === 'string') content.push({ type: 'text', text: part.text });
      else if (isRecord(part.inlineData)) content.push(inlinePart(part.inlineData, `${at}.inlineData`));
      else this.otherPart(part, at);
    });
    if (content.length === 0) return tools;
    const only = content.length === 1 ? content[0] : undefined;
    return [...tools, { role: 'user', content: only?.type === 'text' ? only.text : content }];
  }

  /** A function's result answers the call of the same id, or else the first unanswered call of its name. */
  private functionResponse(response: JsonObject, param: string): JsonObject {
    if (typeof response.name !== 'string') throw invalidBody(`${param}.name must be the name of the function called.`, `${param}.name`);
    const name = response.name;
    const call =
      (typeof response.id === 'string' ? this.calls.find((made) => made.id === response.id) : undefined) ??
      this.calls.find((made) => made.name === name && !made.answered);
    if (call === undefined) throw invalidBody(`${param} answers no functionCall of an earlier model turn: send the model's functionCall part before it.`, param);
    call.answered = true;
    return { role: 'tool', tool_call_id: call.id, content: JSON.stringify(response.response ?? {}) };
  }

  private otherPart(part: JsonObject, param: string): void {
    if (part.fileData !== undefined) {
      throw unsupportedField(`${param}.fileData: a file by reference names a file the gateway cannot see; send its bytes as inlineData.`, `${param}.fileData`);
    }
    if (part.executableCode !== undefined || part.codeExecutionResult !== undefined) {
      this.untranslatable.push({ param, what: 'code Google ran in an earlier turn' });
      return;
    }
    // A part of no kind the internal call has (videoMetadata alone, a signature alone) carries nothing to translate.
    this.dropped.push(param);
  }

  private texts(parts: unknown, param: string): string {
    if (!Array.isArray(parts)) throw invalidBody(`${param} must be an array of parts.`, param);
    return parts
      .map((part, index) => {
        const at = `${param}[${index}]`;
        if (!isRecord(part) || typeof part.text !== 'string') throw invalidBody(`${at} must be a text part here.`, at);
        return part.text;
      })
      .join('\n');
  }

  generationConfig(config: JsonObject, extensions: CallExtensions): JsonObject {
    const chat: JsonObject = {};
    const at = (key: string) => `generationConfig.${key}`;
    for (const key of Object.keys(config)) {
      if (config[key] === undefined || MAPPED_CONFIG.has(key)) continue;
      const refused = REFUSED_CONFIG[key];
      if (refused !== undefined) this.untranslatable.push({ param: at(key), what: refused });
      else this.dropped.push(at(key));
    }
    const copy = (from: string, to: string) => {
      if (config[from] !== undefined && config[from] !== null) chat[to] = config[from];
    };
    copy('temperature', 'temperature');
    copy('topP', 'top_p');
    copy('maxOutputTokens', 'max_completion_tokens');
    copy('stopSequences', 'stop');
    copy('seed', 'seed');
    copy('presencePenalty', 'presence_penalty');
    copy('frequencyPenalty', 'frequency_penalty');
    if (typeof config.candidateCount === 'number' && config.candidateCount !== 1) chat.n = config.candidateCount;
    if (typeof config.topK === 'number') extensions.topK = { param: at('topK'), value: config.topK };
    if (Array.isArray(config.responseModalities) && config.responseModalities.some((modality) => String(modality).toUpperCase() !== 'TEXT')) {
      this.untranslatable.push({ param: at('responseModalities'), what: 'an output other than text' });
    }
    const reasoning = reasoningOf(config.thinkingConfig);
    if (reasoning !== null) extensions.reasoning = reasoning;
    const format = this.responseFormat(config);
    if (format !== null) chat.response_format = format;
    return chat;
  }

  private responseFormat(config: JsonObject): JsonObject | null {
    const mime = config.responseMimeType;
    const schema = config.responseJsonSchema ?? (config.responseSchema === undefined ? undefined : jsonSchemaOf(config.responseSchema));
    if (mime === undefined || mime === 'text/plain') return schema === undefined ? null : { type: 'json_schema', json_schema: { name: 'response', schema } };
    if (mime !== 'application/json') {
      this.untranslatable.push({ param: 'generationConfig.responseMimeType', what: `an answer of type ${String(mime)}` });
      return null;
    }
    return schema === undefined ? { type: 'json_object' } : { type: 'json_schema', json_schema: { name: 'response', schema } };
  }

  tools(body: GeminiBody, extensions: CallExtensions): JsonObject {
    const chat: JsonObject = {};
    const functions: JsonObject[] = [];
    if (body.tools !== undefined) {
      if (!Array.isArray(body.tools)) throw invalidBody('tools must be an array of Tool objects.', 'tools');
      body.tools.forEach((tool, index) => {
        const param = `tools[${index}]`;
        if (!isRecord(tool)) throw invalidBody(`${param} must be a Tool object.`, param);
        for (const [kind, value] of Object.entries(tool)) {
          if (kind === 'functionDeclarations') functions.push(...declarations(value, `${param}.functionDeclarations`));
          else if (SEARCH_TOOLS.has(kind)) extensions.webSearch = webSearchOf(value, `${param}.${kind}`);
          else this.untranslatable.push({ param: `${param}.${kind}`, what: REFUSED_TOOLS[kind] ?? `a ${kind} tool` });
        }
      });
    }
    const calling = isRecord(body.toolConfig) ? body.toolConfig : {};
    for (const key of Object.keys(calling)) if (key !== 'functionCallingConfig') this.dropped.push(`toolConfig.${key}`);
    const choice = toolChoiceOf(calling.functionCallingConfig, functions);
    if (functions.length > 0) chat.tools = choice.tools;
    if (choice.choice !== undefined && functions.length > 0) chat.tool_choice = choice.choice;
    return chat;
  }
}

function declarations(value: unknown, param: string): JsonObject[] {
  if (!Array.isArray(value)) throw invalidBody(`${param} must be an array of FunctionDeclaration objects.`, param);
  return value.map((declaration, index) => {
    const at = `${param}[${index}]`;
    if (!isRecord(declaration) || typeof declaration.name !== 'string') throw invalidBody(`${at}.name must be a string.`, `${at}.name`);
    const parameters = declaration.parametersJsonSchema ?? (declaration.parameters === undefined ? { type: 'object', properties: {} } : jsonSchemaOf(declaration.parameters));
    const fn: JsonObject = { name: declaration.name, parameters };
    if (typeof declaration.description === 'string') fn.description = declaration.description;
    return { type: 'function', function: fn };
  });
}

function webSearchOf(value: unknown, param: string): NonNullable<CallExtensions['webSearch']> {
  const excluded = isRecord(value) && Array.isArray(value.excludeDomains) ? value.excludeDomains.filter((domain): domain is string => typeof domain === 'string') : null;
  return { param, maxUses: null, allowedDomains: null, blockedDomains: excluded };
}

/** `functionCallingConfig` as `tool_choice`: ANY with one allowed function names it, with several keeps only those. */
function toolChoiceOf(config: unknown, functions: JsonObject[]): { choice?: unknown; tools: JsonObject[] } {
  if (!isRecord(config) || config.mode === undefined) return { tools: functions };
  const allowed = Array.isArray(config.allowedFunctionNames) ? config.allowedFunctionNames.filter((name): name is string => typeof name === 'string') : [];
  switch (config.mode) {
    case 'AUTO':
    case 'VALIDATED':
    case 'MODE_UNSPECIFIED':
      return { choice: 'auto', tools: functions };
    case 'NONE':
      return { choice: 'none', tools: functions };
    case 'ANY': {
      if (allowed.length === 1) return { choice: { type: 'function', function: { name: allowed[0] } }, tools: functions };
      const kept = allowed.length === 0 ? functions : functions.filter((tool) => allowed.includes(String((tool.function as JsonObject).name)));
      return { choice: 'required', tools: kept };
    }
    default:
      throw invalidBody('toolConfig.functionCallingConfig.mode must be AUTO, ANY, NONE or VALIDATED.', 'toolConfig.functionCallingConfig.mode');
  }
}

/**
 * `thinkingConfig` as the reasoning the caller asked for: a budget (0 turns thinking off, -1
 * leaves it to the model), or a level as an effort; null when it asks for neither.
 */
function reasoningOf(value: unknown): ReasoningRequest | null {
  if (value === undefined || value === null) return null;
  const param = 'generationConfig.thinkingConfig';
  if (!isRecord(value)) throw invalidBody(`${param} must be an object.`, param);
  const shown = value.includeThoughts === true;
  const budget = value.thinkingBudget;
  const level = typeof value.thinkingLevel === 'string' ? (value.thinkingLevel.toLowerCase() as ReasoningEffort) : undefined;
  if (level !== undefined && !THINKING_LEVELS.has(level)) throw invalidBody(`${param}.thinkingLevel must be one of MINIMAL, LOW, MEDIUM, HIGH.`, `${param}.thinkingLevel`);
  if (budget !== undefined && (typeof budget !== 'number' || !Number.isInteger(budget) || budget < -1)) {
    throw invalidBody(`${param}.thinkingBudget must be an integer: -1 (the model decides), 0 (no thinking) or a token budget.`, `${param}.thinkingBudget`);
  }
  if (budget === undefined && level === undefined) return shown ? { param, effort: null, budgetTokens: null, includeThoughts: true } : null;
  return { param, effort: level ?? null, budgetTokens: typeof budget === 'number' && budget >= 0 ? budget : null, includeThoughts: shown };
}

/** `inlineData` as the internal call's image part (an image) or file part (a document, audio). */
function inlinePart(data: JsonObject, param: string): JsonObject {
  if (typeof data.mimeType !== 'string' || typeof data.data !== 'string') throw invalidBody(`${param} needs a mimeType and base64 data.`, param);
  const uri = `data:${data.mimeType};base64,${data.data}`;
  if (data.mimeType.startsWith('image/')) return { type: 'image_url', image_url: { url: uri } };
  const extension = data.mimeType.split('/')[1]?.replace(/[^a-z0-9]/gi, '') ?? 'bin';
  return { type: 'file', file: { filename: `inline.${extension}`, file_data: uri } };
}

function isRecord(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
