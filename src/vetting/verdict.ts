import type { JsonObject } from '../model-api/index.js';
import type { Verdict } from './types.js';

/** The verdict's fields: all required, and no others (readVerdict refuses an object with more). */
const VERDICT_FIELDS: readonly string[] = ['passed', 'reason', 'requires_attention'];

/** JSON schema of the verdict; adapters map it to each vendor's structured output (docs/vetting.md). */
export const VERDICT_SCHEMA: JsonObject = {
  type: 'object',
  properties: {
    passed: { type: 'boolean', description: 'true only when the draft follows every rule' },
    reason: { type: 'string', description: 'why, in one or two sentences, without quoting protected content' },
    requires_attention: { type: 'boolean', description: 'true when the conversation needs a human to look at it' },
  },
  required: [...VERDICT_FIELDS],
  additionalProperties: false,
};

export const VERDICT_RESPONSE_FORMAT: JsonObject = {
  type: 'json_schema',
  json_schema: { name: 'vetting_verdict', strict: true, schema: VERDICT_SCHEMA },
};

// The whole output is one fenced block, or one bare object; JSON found inside other text is not
// a verdict (it could be the draft or the student echoed back).
const FENCED = /^```(?:json)?[ \t]*\r?\n([\s\S]*?)\r?\n?```$/i;

/**
 * Reads a verdict from the verifier's structured output, or null when it is not exactly a
 * verdict object. Never searches free text: "verdict: pass" in prose is not a verdict.
 */
export function readVerdict(output: string): Verdict | null {
  const trimmed = output.trim();
  const json = FENCED.exec(trimmed)?.[1]?.trim() ?? trimmed;
  if (!json.startsWith('{')) return null;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  // Exactly the schema's three fields (additionalProperties false): an object with more is not
  // the structured output that was asked for, whatever it says.
  const keys = Object.keys(value);
  if (keys.length !== VERDICT_FIELDS.length || !keys.every((key) => VERDICT_FIELDS.includes(key))) return null;
  const { passed, reason, requires_attention: requiresAttention } = value as Record<string, unknown>;
  if (typeof passed !== 'boolean' || typeof reason !== 'string' || typeof requiresAttention !== 'boolean') return null;
  return { passed, reason, requires_attention: requiresAttention };
}
