import { FormData } from 'undici';
import { audioSeconds } from '../shared/audio-duration.js';
import { isRecord } from '../shared/message-content.js';
import type { TranscriptionCall, TranscriptionProvider, TranscriptionResult } from '../../model-api/index.js';
import type { OpenAICompatibleClient } from './client.js';
import { parseJson, usageFromWire } from './wire.js';

interface WireTranscription {
  /** verbose_json (whisper-1). */
  duration?: unknown;
  /** `{type: "tokens", input_tokens, …}` (gpt-4o-transcribe) or `{type: "duration", seconds}` (whisper-1). */
  usage?: { type?: unknown; seconds?: unknown } | null;
}

function durationOf(body: WireTranscription): number | null {
  return audioSeconds(body.duration) ?? (body.usage?.type === 'duration' ? audioSeconds(body.usage.seconds) : null);
}

/**
 * `POST /audio/transcriptions` as a multipart form. The response body comes back byte for
 * byte (JSON, or text for the text/srt/vtt formats); duration and usage are read from JSON.
 */
export class OpenAICompatibleTranscription implements TranscriptionProvider {
  constructor(private readonly client: OpenAICompatibleClient) {}

  async transcribe(call: TranscriptionCall): Promise<TranscriptionResult> {
    // undici's own FormData: the dispatcher encodes it as multipart (Node's global one it rejects).
    const form = new FormData();
    form.append('model', call.upstreamModel);
    for (const [name, value] of Object.entries(call.fields)) {
      for (const item of Array.isArray(value) ? value : [value]) form.append(name, item);
    }
    form.append('file', new Blob([call.file.data], { type: call.file.contentType }), call.file.filename);
    const response = await this.client.postForm('/audio/transcriptions', form, call);
    const body = response.body;
    const upstreamType = response.headers['content-type'];
    const contentType = typeof upstreamType === 'string' ? upstreamType : 'application/json';
    const parsed = contentType.includes('json') ? parseJson(body.toString('utf8')) : undefined;
    const json = isRecord(parsed) ? (parsed as WireTranscription) : undefined;
    return {
      body,
      contentType,
      durationSeconds: json !== undefined ? durationOf(json) : null,
      usage: json?.usage?.type === 'duration' ? null : usageFromWire(json?.usage),
    };
  }
}
