import { createHmac } from 'node:crypto';

/** Longest end-user id kept; a longer one is cut (it is the caller's free text). */
const MAX_END_USER_LENGTH = 256;

function cleaned(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const text = value.replace(/[^\x20-\x7e\u00a0-\uffff]/g, '').trim().slice(0, MAX_END_USER_LENGTH);
  return text.length > 0 ? text : null;
}

/**
 * The end user of a request (decisions §15): the `X-End-User-ID` header, else what the body
 * names — Responses `safety_identifier`, OpenAI `user` (Chat Completions, Responses,
 * embeddings, images, audio), Anthropic Messages `metadata.user_id`. The Gemini API has no
 * such field: only the header names one there. Null when nothing does.
 */
export function endUserOf(header: string | string[] | undefined, body: unknown): string | null {
  const fromHeader = cleaned(Array.isArray(header) ? header[0] : header);
  if (fromHeader !== null) return fromHeader;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const fields = body as { safety_identifier?: unknown; user?: unknown; metadata?: unknown };
  const metadata = typeof fields.metadata === 'object' && fields.metadata !== null ? (fields.metadata as { user_id?: unknown }) : undefined;
  return cleaned(fields.safety_identifier) ?? cleaned(fields.user) ?? cleaned(metadata?.user_id);
}

/**
 * An end user's id as the request log keeps it for a project that hashes them
 * (`projects.<id>.hashEndUsers`): `h:` and an HMAC-SHA256 of the id, keyed by the gateway's
 * own secret, so the same person groups together and no one can read the id back.
 */
export function hashedEndUser(endUser: string, secret: string | Buffer): string {
  return `h:${createHmac('sha256', secret).update(`end-user\0${endUser}`).digest('hex').slice(0, 32)}`;
}
