/**
 * Content type of each speech `response_format` of the gateway's (OpenAI-shaped) API; mp3 is
 * the default. Opus comes in an Ogg container; pcm is raw 24 kHz 16-bit little-endian samples.
 */
export const SPEECH_CONTENT_TYPES: Readonly<Record<string, string>> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

export const DEFAULT_SPEECH_FORMAT = 'mp3';
