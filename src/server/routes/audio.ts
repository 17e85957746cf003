import multipart, { type MultipartFile } from '@fastify/multipart';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { GatewayError, invalidBody } from '../../errors/index.js';
import { MAX_AUDIO_SECONDS, SPEECH_CONTENT_TYPES } from '../../providers/index.js';
import type { JsonObject } from '../../model-api/index.js';
import type { RouteModule } from '../app.js';
import { formatBytes } from '../error-mapping.js';
import {
  admitCall,
  connectionGoneSignal,
  ERROR_RESPONSES,
  MODEL_ROUTE_SCHEMA,
  refuseStreaming,
  sendBytes,
} from './model-call.js';
import { upstreamBody } from '../../formats/index.js';

/** Largest audio upload (OpenAI's own limit is 25 MB). */
export const TRANSCRIPTION_FILE_LIMIT_BYTES = 25 * 1024 * 1024;
const MAX_FORM_FIELDS = 32;
/** Largest text field (busboy's own default, stated so that a longer one is refused, not cut). */
const FORM_FIELD_LIMIT_BYTES = 1024 * 1024;

/** The OpenAI speech request; other fields (instructions, speed, …) pass through. */
const SpeechRequest = Type.Object(
  {
    model: Type.String({ minLength: 1 }),
    input: Type.String({ minLength: 1, maxLength: 4096 }),
    voice: Type.Union([Type.String({ minLength: 1 }), Type.Object({ id: Type.String() }, { additionalProperties: true })]),
    response_format: Type.Optional(Type.String({ description: 'mp3 (default), opus, aac, flac, wav or pcm' })),
  },
  { additionalProperties: true },
);

type SpeechBody = Static<typeof SpeechRequest> & JsonObject;

/** The multipart form, documented for the OpenAPI document; the handler reads and checks it. */
const TranscriptionForm = Type.Object(
  {
    file: Type.String({ format: 'binary', description: `The audio file, at most ${formatBytes(TRANSCRIPTION_FILE_LIMIT_BYTES)}` }),
    model: Type.String(),
    duration_seconds: Type.Optional(Type.Number({ minimum: 0, maximum: MAX_AUDIO_SECONDS, description: 'Audio length, for cost logging (not sent upstream)' })),
    duration_minutes: Type.Optional(Type.Number({ minimum: 0, maximum: MAX_AUDIO_SECONDS / 60, description: 'Audio length, for cost logging (not sent upstream)' })),
    language: Type.Optional(Type.String()),
    prompt: Type.Optional(Type.String()),
    response_format: Type.Optional(Type.String({ description: 'json (default), text, srt, verbose_json or vtt' })),
  },
  { additionalProperties: true },
);

const AudioBytes = {
  description: 'Audio bytes; the content type follows response_format',
  content: Object.fromEntries(Object.values(SPEECH_CONTENT_TYPES).map((type) => [type, { schema: Type.String({ format: 'binary' }) }])),
};

/** Form fields the gateway keeps for itself: durations (cost logging) and `stream` (refused when true). */
const GATEWAY_FIELDS = new Set(['model', 'duration_seconds', 'duration_minutes', 'stream']);

interface TranscriptionForm {
  file: { data: Buffer; filename: string; contentType: string } | null;
  fields: Record<string, string | string[]>;
}

/** A field's value; repeated fields (`timestamp_granularities[]`) keep every value. */
function addField(fields: Record<string, string | string[]>, name: string, value: string): void {
  const existing = fields[name];
  if (existing === undefined) fields[name] = value;
  else fields[name] = [...(Array.isArray(existing) ? existing : [existing]), value];
}

/** The single value of a gateway field (the first, if it was repeated). */
function single(fields: Record<string, string | string[]>, name: string): string | undefined {
  const value = fields[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Reads the multipart form: one `file`, text fields. Multipart failures become gateway errors. */
async function readForm(request: FastifyRequest): Promise<TranscriptionForm> {
  const form: TranscriptionForm = { file: null, fields: {} };
  try {
    for await (const part of request.parts()) {
      if (part.type === 'field') {
        if (part.valueTruncated) {
          throw new GatewayError('request_too_large', `The form field "${part.fieldname}" is longer than the limit of ${formatBytes(FORM_FIELD_LIMIT_BYTES)}. Send a shorter value.`);
        }
        // A part sent as application/json arrives parsed: it goes on as JSON text, not "[object Object]".
        addField(form.fields, part.fieldname, typeof part.value === 'string' ? part.value : JSON.stringify(part.value));
      } else if (part.fieldname === 'file' && form.file === null) {
        form.file = { data: await part.toBuffer(), filename: part.filename || 'audio', contentType: part.mimetype || 'application/octet-stream' };
      } else {
        await (part as MultipartFile).toBuffer();
        throw invalidBody(`Unexpected file field "${part.fieldname}"; send exactly one audio file named "file".`, part.fieldname);
      }
    }
  } catch (error) {
    throw multipartError(error);
  }
  if (form.file === null && Object.keys(form.fields).length === 0) {
    throw invalidBody('The multipart form holds no parts: check that the boundary in the Content-Type header is the one that separates the parts of the body.');
  }
  return form;
}

function multipartError(error: unknown): unknown {
  switch ((error as { code?: string }).code) {
    case 'FST_REQ_FILE_TOO_LARGE':
      return new GatewayError('request_too_large', `The audio file is larger than the limit of ${formatBytes(TRANSCRIPTION_FILE_LIMIT_BYTES)}. Send a shorter or compressed file.`);
    case 'FST_PARTS_LIMIT':
    case 'FST_FILES_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return new GatewayError('request_too_large', `The form has too many parts; send one file and at most ${MAX_FORM_FIELDS} fields.`);
    case 'FST_PROTO_VIOLATION':
      return invalidBody('The form contains a forbidden "__proto__" or "constructor" field name.');
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return new GatewayError('unsupported_media_type', 'This endpoint accepts Content-Type: multipart/form-data with the audio in a "file" field.');
    default:
      return error instanceof GatewayError ? error : invalidBody('The multipart form could not be read; send multipart/form-data with a "file" and a "model" field.');
  }
}

/** `duration_seconds` or `duration_minutes`, in seconds; null when neither was sent. */
function durationOf(fields: Record<string, string | string[]>): number | null {
  for (const [name, factor] of [['duration_seconds', 1], ['duration_minutes', 60]] as const) {
    const raw = single(fields, name);
    if (raw === undefined) continue;
    const value = Number(raw);
    if (raw.trim() === '' || !(value >= 0 && value <= MAX_AUDIO_SECONDS / factor)) {
      throw invalidBody(`${name} must be a number from 0 to ${MAX_AUDIO_SECONDS / factor} (a day).`, name);
    }
    return value * factor;
  }
  return null;
}

export const audioRoutes: RouteModule = async (app) => {
  app.post(
    '/v1/audio/speech',
    {
      config: { scope: 'model:request' },
      schema: {
        ...MODEL_ROUTE_SCHEMA,
        summary: 'Create speech',
        description: 'OpenAI-compatible text-to-speech; the response is the audio bytes. `stream` is not honoured here; `stream_format: "sse"` is a 400.',
        body: SpeechRequest,
        response: { 200: AudioBytes, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      const body = request.body as SpeechBody;
      request.call.describe({ mode: 'audio_speech', payload: body });
      // OpenAI's SSE format would come back whole, labelled as audio: the answer here is audio bytes.
      if (body.stream_format === 'sse') throw invalidBody('/v1/audio/speech answers with audio bytes, not events; remove stream_format or set it to "audio".', 'stream_format');
      const call = await admitCall(request, reply, { mode: 'audio_speech', model: body.model, capability: 'speech' }, () => ({
        tokens: Math.ceil(body.input.length / 4),
        costUsd: null,
      }));
      const signal = connectionGoneSignal(reply);
      const result = await call.invoke((speech, attempt) => speech.speak({ ...attempt, body: upstreamBody(body), signal, requestId: request.id }), signal);
      request.call.answered({ payload: { contentType: result.contentType, bytes: result.audio.length } });
      return sendBytes(reply, result.contentType, result.audio);
    },
  );

  // Multipart is parsed only in this encapsulated context, so every other endpoint keeps
  // answering 415 to anything but JSON.
  await app.register(async (transcription) => {
    await transcription.register(multipart, {
      limits: { fileSize: TRANSCRIPTION_FILE_LIMIT_BYTES, fieldSize: FORM_FIELD_LIMIT_BYTES, files: 1, fields: MAX_FORM_FIELDS, parts: MAX_FORM_FIELDS + 1 },
    });
    transcription.post(
      '/v1/audio/transcriptions',
      {
        config: { scope: 'model:request' },
        schema: {
          ...MODEL_ROUTE_SCHEMA,
          summary: 'Create a transcription',
          description: `OpenAI-compatible transcription of a multipart upload (audio at most ${formatBytes(TRANSCRIPTION_FILE_LIMIT_BYTES)}). Never streams: \`stream: true\` is a 400.`,
          consumes: ['multipart/form-data'],
          body: TranscriptionForm,
          response: { 200: Type.Unknown({ description: 'Transcription JSON, or text for text/srt/vtt formats' }), ...ERROR_RESPONSES },
        },
        // The form is streamed, not parsed into request.body: readForm checks it instead.
        validatorCompiler: () => () => true,
      },
      async (request, reply) => {
        const { call: requestCall } = request;
        requestCall.describe({ mode: 'audio_transcription', payload: null });
        const { file, fields } = await readForm(request);
        requestCall.logRequestAs({ ...fields, file: file === null ? null : { filename: file.filename, contentType: file.contentType, bytes: file.data.length } });
        refuseStreaming(single(fields, 'stream'), '/v1/audio/transcriptions');
        const model = single(fields, 'model');
        if (model === undefined || model.length === 0) throw invalidBody('model is required: a transcription model from GET /v1/models.', 'model');
        if (file === null || file.data.length === 0) throw invalidBody('file is required: the audio to transcribe, as a multipart file field named "file".', 'file');
        requestCall.carried({ images: 0, files: 1, mimeTypes: [file.contentType], bytes: file.data.length });
        const suppliedSeconds = durationOf(fields);
        requestCall.audioLasted(suppliedSeconds);

        const call = await admitCall(request, reply, { mode: 'audio_transcription', model, capability: 'transcription' }, ({ target }) => {
          const perMinute = target.resolved.model.entry.pricing?.audio_per_minute ?? null;
          return { tokens: 0, costUsd: perMinute !== null && suppliedSeconds !== null ? (perMinute * suppliedSeconds) / 60 : null };
        });
        const signal = connectionGoneSignal(reply);
        const result = await call.invoke(
          (transcription, attempt) => transcription.transcribe({ ...attempt, file, fields: upstreamFields(fields), signal, requestId: request.id }),
          signal,
        );
        requestCall.audioLasted(suppliedSeconds ?? result.durationSeconds);
        requestCall.answered({ payload: result.body.toString('utf8') });
        return sendBytes(reply, result.contentType, result.body);
      },
    );
  });
};

function upstreamFields(fields: Record<string, string | string[]>): Record<string, string | string[]> {
  const forwarded: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(fields)) if (!GATEWAY_FIELDS.has(name)) forwarded[name] = value;
  return forwarded;
}
