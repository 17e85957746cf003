import type { RequestLogRow } from '../../src/logs/index.js';

/**
 * A request-log row as the store writes it: a chat call of key_a on gpt-4o through OpenAI that
 * answered 200, with `defaults` (a test's own usual values) and then `overrides` on top.
 */
export function logRow(id: string, defaults: Partial<RequestLogRow>, overrides: Partial<RequestLogRow> = {}): RequestLogRow {
  return {
    request_id: id,
    started_at: 0,
    endpoint: '/v1/chat/completions',
    mode: 'chat',
    platform: null,
    key_id: 'key_a',
    project_id: null,
    fingerprint: 'key_a…1234',
    requested_model: 'gpt-4o',
    resolved_model: 'gpt-4o',
    provider: 'openai',
    status: 200,
    error_code: null,
    latency_ms: 10,
    upstream_latency_ms: 8,
    streaming: 0,
    prompt_tokens: 10,
    completion_tokens: 5,
    cached_tokens: null,
    total_tokens: 15,
    image_count: null,
    audio_seconds: null,
    cost_micro_usd: 100,
    cost_flag: null,
    media: null,
    request_payload: null,
    response_payload: null,
    detail: null,
    ...defaults,
    ...overrides,
  };
}
