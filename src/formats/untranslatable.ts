import { unsupportedField } from '../errors/index.js';

/** A request field with no equivalent in the internal call. */
export interface Untranslatable {
  param: string;
  /** What the field is, for the message: "a server tool (code_execution_20250522)". */
  what: string;
}

/**
 * Sorts the top-level members of a body that its decoder does not translate: those `refused`
 * names have no equivalent (untranslatable), the rest only tune the vendor's serving (dropped
 * and told, decisions §9).
 */
export function sortUntranslatedFields(
  body: Readonly<Record<string, unknown>>,
  translated: ReadonlySet<string>,
  refused: Readonly<Record<string, string>>,
  into: { dropped: string[]; untranslatable: Untranslatable[] },
): void {
  for (const key of Object.keys(body)) {
    if (translated.has(key) || body[key] === undefined) continue;
    const what = refused[key];
    if (what !== undefined) into.untranslatable.push({ param: key, what });
    else into.dropped.push(key);
  }
}

/** Throws the 400 naming the first field the internal call cannot carry, if any; `api` is the format's name ("the Messages API"). */
export function refuseUntranslatableFields(untranslatable: readonly Untranslatable[], api: string): void {
  const first = untranslatable[0];
  if (first === undefined) return;
  throw unsupportedField(
    `${first.param}: ${first.what} has no equivalent for this model's provider, which does not speak ${api} itself. Remove it, or pick a model whose provider does.`,
    first.param,
  );
}
