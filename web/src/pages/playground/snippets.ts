import type { PlaygroundEndpoint } from '@modelgate/admin-api';
import { curlCommand } from '../../format.js';

/**
 * "Show code": the call the playground just made (or is about to make), as a curl command
 * and as the official SDK of its API for Node (openai, or @google/genai for the Gemini API),
 * against the public API with the key left as $MODELGATE_API_KEY. Attachments are long data
 * URIs: the snippets name them instead.
 */

const ATTACHMENT = /^data:([\w.+-]+\/[\w.+-]+);base64,/;
/** A Gemini inlineData part's bytes: base64 alone, its type beside it. */
const INLINE_BYTES = /^[A-Za-z0-9+/=]{200,}$/;

/** The body with every base64 data URI (an attached file) replaced by a placeholder naming its type. */
export function withPlaceholders(value: unknown): unknown {
  if (typeof value === 'string') {
    const type = ATTACHMENT.exec(value)?.[1];
    return type === undefined ? value : `data:${type};base64,<base64 of the file>`;
  }
  if (Array.isArray(value)) return value.map(withPlaceholders);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([name, field]) => [name, name === 'data' && typeof field === 'string' && INLINE_BYTES.test(field) ? '<base64 of the file>' : withPlaceholders(field)]));
  }
  return value;
}

const indented = (value: unknown) => JSON.stringify(value, null, 2);

function sdkCall(endpoint: PlaygroundEndpoint, body: Record<string, unknown>): string {
  const json = indented(body);
  switch (endpoint) {
    case 'chat/completions':
      return body.stream === true
        ? `const stream = await client.chat.completions.create(${json});\nfor await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta?.content ?? '');`
        : `const completion = await client.chat.completions.create(${json});\nconsole.log(completion.choices[0].message.content);`;
    case 'chat/vetting':
      return `const reply = await client.post('/chat/vetting', { body: ${json} });\nconsole.log(reply.choices[0].message.content, reply.vetting_info);`;
    case 'vetting/full':
      return `const reply = await client.post('/vetting/full', { body: ${json} });\nconsole.log(reply.result.content, reply.verification);`;
    case 'embeddings':
      return `const embeddings = await client.embeddings.create(${json});\nconsole.log(embeddings.data[0].embedding.length);`;
    case 'images/generations':
      return `const images = await client.images.generate(${json});\nwriteFileSync('image.png', Buffer.from(images.data[0].b64_json, 'base64'));`;
    case 'audio/speech':
      return `const speech = await client.audio.speech.create(${json});\nwriteFileSync('speech.${String(body.response_format ?? 'mp3')}', Buffer.from(await speech.arrayBuffer()));`;
    case 'audio/transcriptions':
      return `const transcription = await client.audio.transcriptions.create({ ...${json}, file: createReadStream('audio.mp3') });\nconsole.log(transcription.text);`;
  }
}

export interface Snippets {
  curl: string;
  sdk: string;
  /** The SDK the `sdk` snippet uses, as its heading names it. */
  sdkLabel: string;
}

export function snippetsOf(origin: string, endpoint: PlaygroundEndpoint, body: Record<string, unknown>): Snippets {
  const shown = withPlaceholders(body) as Record<string, unknown>;
  const fsName = endpoint === 'audio/transcriptions' ? 'createReadStream' : endpoint === 'images/generations' || endpoint === 'audio/speech' ? 'writeFileSync' : null;
  const fsImport = fsName === null ? '' : `import { ${fsName} } from 'node:fs';\n`;
  return {
    curl: curlCommand(`${origin}/v1/${endpoint}`, shown),
    sdk: `${fsImport}import OpenAI from 'openai';\n\nconst client = new OpenAI({ baseURL: '${origin}/v1', apiKey: process.env.MODELGATE_API_KEY });\n${sdkCall(endpoint, shown)}`,
    sdkLabel: 'openai SDK (Node)',
  };
}

/** A Gemini API call (generateContent, or streamGenerateContent as server-sent events) as curl and as @google/genai, whose `config` holds the body's systemInstruction and generationConfig. */
export function geminiSnippetsOf(origin: string, model: string, stream: boolean, body: Record<string, unknown>): Snippets {
  const shown = withPlaceholders(body) as Record<string, unknown>;
  const { contents, systemInstruction, generationConfig } = shown;
  const config = { ...(systemInstruction === undefined ? {} : { systemInstruction }), ...(generationConfig as Record<string, unknown> | undefined) };
  const parameters = indented({ model, contents, ...(Object.keys(config).length > 0 ? { config } : {}) });
  const call = stream
    ? `for await (const chunk of await client.models.generateContentStream(${parameters})) process.stdout.write(chunk.text ?? '');`
    : `const response = await client.models.generateContent(${parameters});\nconsole.log(response.text);`;
  const method = stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
  return {
    curl: curlCommand(`${origin}/v1beta/models/${model}:${method}`, shown),
    sdk: `import { GoogleGenAI } from '@google/genai';\n\nconst client = new GoogleGenAI({ apiKey: process.env.MODELGATE_API_KEY, httpOptions: { baseUrl: '${origin}' } });\n${call}`,
    sdkLabel: '@google/genai SDK (Node)',
  };
}
