import { DEFAULT_SPEECH_FORMAT, SPEECH_CONTENT_TYPES } from '../shared/speech-formats.js';
import type { SpeechCall, SpeechProvider, SpeechResult } from '../../model-api/index.js';
import type { OpenAICompatibleClient } from './client.js';

/** `POST /audio/speech`: the audio bytes, with the content type of the format asked for. */
export class OpenAICompatibleSpeech implements SpeechProvider {
  constructor(private readonly client: OpenAICompatibleClient) {}

  async speak(call: SpeechCall): Promise<SpeechResult> {
    const response = await this.client.postForBytes('/audio/speech', { model: call.upstreamModel, ...call.body }, call, 'audio/*');
    const audio = response.body;
    const format = typeof call.body.response_format === 'string' ? call.body.response_format : DEFAULT_SPEECH_FORMAT;
    // A compatible server may offer formats OpenAI does not; then its own content type is kept.
    const upstreamType = response.headers['content-type'];
    const contentType = SPEECH_CONTENT_TYPES[format] ?? (typeof upstreamType === 'string' ? upstreamType : 'application/octet-stream');
    return { audio, contentType };
  }
}
