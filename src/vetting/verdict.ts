import { readExactObject } from '../json/index.js';
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

/**
 * Reads a verdict from the verifier's structured output, or null when it is not exactly a
 * verdict object (readExactObject: one bare or fenced object with the schema's three fields,
 * additionalProperties false). Never searches free text: "verdict: pass" in prose is not a verdict.
 */
export function readVerdict(output: string): Verdict | null {
  const value = readExactObject(output, VERDICT_FIELDS);
  if (value === null) return null;
  const { passed, reason, requires_attention: requiresAttention } = value;
  if (typeof passed !== 'boolean' || typeof reason !== 'string' || typeof requiresAttention !== 'boolean') return null;
  return { passed, reason, requires_attention: requiresAttention };
}
