// The whole output is one fenced block, or one bare object; JSON found inside other text is not
// structured output (it could be the checked text echoed back).
const FENCED = /^```(?:json)?[ \t]*\r?\n([\s\S]*?)\r?\n?```$/i;

/**
 * Reads a model's structured output: the object, when the whole output is exactly one JSON
 * object (bare, or one fenced block) with exactly `fields` as its members; null otherwise.
 * Never searches free text: "verdict: pass" in prose, or an object with more members than were
 * asked for, is not the structured output that was asked for, whatever it says. The field types
 * are the caller's to check. VETTING's verifier and the model-based guardrails read their
 * verdicts with it (docs/vetting.md, docs/guardrails.md).
 */
export function readExactObject(output: string, fields: readonly string[]): Record<string, unknown> | null {
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
  const keys = Object.keys(value);
  if (keys.length !== fields.length || !keys.every((key) => fields.includes(key))) return null;
  return value as Record<string, unknown>;
}
