import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/**
 * Guardrails as the config file states them (decisions §13, docs/guardrails.md): named checks
 * attached to keys, projects, models or all traffic, run on a call's input, its output or
 * both. The schema here is part of the config's one schema; `parseGuardrails` checks what the
 * schema cannot (unique names, each check's own options, patterns that compile) once at
 * start-up and turns each entry into the typed policy the guardrails service runs.
 */

export const GUARDRAIL_CHECKS = ['pii', 'secrets', 'regex', 'keywords', 'json_schema', 'model', 'moderation', 'webhook'] as const;
export type GuardrailCheckName = (typeof GUARDRAIL_CHECKS)[number];

export const PII_KINDS = ['email', 'phone', 'card', 'iban', 'ip', 'us_ssn', 'uk_nino', 'es_dni'] as const;
export type PiiKind = (typeof PII_KINDS)[number];

export type GuardrailStage = 'input' | 'output';
export type GuardrailAction = 'block' | 'mask' | 'log';

const Stage = Type.Union([Type.Literal('input'), Type.Literal('output')]);

/** One guardrail entry of the config file. */
export const GuardrailSchema = Type.Object(
  {
    name: Type.String({ pattern: '^[a-z0-9][a-z0-9_-]*$', maxLength: 64, description: 'unique; named in errors, the x-modelgate-guardrails header and the request log' }),
    check: Type.Union(
      GUARDRAIL_CHECKS.map((name) => Type.Literal(name)),
      { description: 'pii | secrets | regex | keywords | json_schema | model | moderation | webhook' },
    ),
    stage: Type.Union([Stage, Type.Array(Stage, { minItems: 1, maxItems: 2 })], { default: ['input'], description: 'input (before the call), output (after it), or both' }),
    action: Type.Union([Type.Literal('block'), Type.Literal('mask'), Type.Literal('log')], { default: 'block', description: 'block: refuse; mask: replace what matched; log: record only' }),
    onError: Type.Union([Type.Literal('closed'), Type.Literal('open')], { default: 'closed', description: 'closed: a check that fails blocks; open: it passes (recorded as an error)' }),
    apply: Type.Object(
      {
        all: Type.Boolean({ default: false, description: 'every keyed request' }),
        keys: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'key ids' }),
        projects: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'project ids' }),
        models: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'catalog ids the call resolved to' }),
      },
      { additionalProperties: false, default: {} },
    ),
    window: Type.Integer({ minimum: 16, maximum: 65_536, default: 256, description: 'streamed output: characters held back from the caller until checked' }),
    options: Type.Record(Type.String(), Type.Unknown(), { default: {}, description: 'options of the check (docs/guardrails.md)' }),
  },
  { additionalProperties: false },
);
export type GuardrailConfig = Static<typeof GuardrailSchema>;

const PiiOptions = Type.Object(
  { kinds: Type.Array(Type.Union(PII_KINDS.map((kind) => Type.Literal(kind))), { minItems: 1, default: [...PII_KINDS] }) },
  { additionalProperties: false },
);
const SecretsOptions = Type.Object({}, { additionalProperties: false });
const RegexOptions = Type.Object(
  {
    patterns: Type.Array(Type.String({ minLength: 1, maxLength: 1000 }), { minItems: 1, maxItems: 200 }),
    caseSensitive: Type.Boolean({ default: false }),
  },
  { additionalProperties: false },
);
const KeywordOptions = Type.Object(
  {
    words: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 10_000 }),
    caseSensitive: Type.Boolean({ default: false }),
  },
  { additionalProperties: false },
);
const JsonSchemaOptions = Type.Object({ schema: Type.Record(Type.String(), Type.Unknown()) }, { additionalProperties: false });
export const MODEL_CHECK_TASKS = ['prompt_injection', 'moderation'] as const;
const ModelOptions = Type.Object(
  {
    model: Type.String({ minLength: 1, description: 'a chat model of the catalog (id or alias), called through the gateway' }),
    task: Type.Union(MODEL_CHECK_TASKS.map((task) => Type.Literal(task)), { default: 'prompt_injection' }),
    instructions: Type.Optional(Type.String({ minLength: 1, maxLength: 20_000, description: "the checker's system prompt, instead of the task's own" })),
    timeoutMs: Type.Integer({ minimum: 100, maximum: 120_000, default: 10_000 }),
  },
  { additionalProperties: false },
);
const ModerationOptions = Type.Object(
  {
    provider: Type.String({ minLength: 1, maxLength: 64, description: 'a provider instance of the gateway that has a moderation endpoint' }),
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: "the provider's moderation model; default: its own" })),
    thresholds: Type.Record(Type.String({ minLength: 1, maxLength: 100 }), Type.Number({ minimum: 0, maximum: 1 }), {
      default: {},
      description: 'per category, the score from which it flags; categories without one flag as the provider says',
    }),
    timeoutMs: Type.Integer({ minimum: 100, maximum: 120_000, default: 10_000 }),
  },
  { additionalProperties: false },
);
const WebhookOptions = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2000, description: 'https URL the texts are POSTed to' }),
    secretEnv: Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description: 'environment variable holding the HMAC key of the signature' }),
    timeoutMs: Type.Integer({ minimum: 100, maximum: 60_000, default: 5_000 }),
    allowAddresses: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'CIDRs the webhook may reach although private, loopback or link-local' }),
  },
  { additionalProperties: false },
);

const OPTION_SCHEMAS: { readonly [C in GuardrailCheckName]: TSchema } = {
  pii: PiiOptions,
  secrets: SecretsOptions,
  regex: RegexOptions,
  keywords: KeywordOptions,
  json_schema: JsonSchemaOptions,
  model: ModelOptions,
  moderation: ModerationOptions,
  webhook: WebhookOptions,
};

/** Each check with its options, typed. */
export type GuardrailCheckSpec =
  | { check: 'pii'; options: Static<typeof PiiOptions> }
  | { check: 'secrets'; options: Static<typeof SecretsOptions> }
  | { check: 'regex'; options: Static<typeof RegexOptions> }
  | { check: 'keywords'; options: Static<typeof KeywordOptions> }
  | { check: 'json_schema'; options: Static<typeof JsonSchemaOptions> }
  | { check: 'model'; options: Static<typeof ModelOptions> }
  | { check: 'moderation'; options: Static<typeof ModerationOptions> }
  | { check: 'webhook'; options: Static<typeof WebhookOptions> };

/** The checks that judge a whole text rather than find spans in it: they cannot mask. */
const VERDICT_CHECKS: ReadonlySet<GuardrailCheckName> = new Set(['json_schema', 'model', 'moderation', 'webhook']);

/** A guardrail as the service runs it: its config, parsed. */
export type GuardrailPolicy = GuardrailCheckSpec & {
  name: string;
  stages: ReadonlySet<GuardrailStage>;
  action: GuardrailAction;
  failClosed: boolean;
  apply: { all: boolean; keys: ReadonlySet<string>; projects: ReadonlySet<string>; models: ReadonlySet<string> };
  window: number;
};

/** A problem of the guardrails' settings, naming the field (the config loader stops start-up with it). */
export class GuardrailConfigError extends Error {}

/** The field `rest` of the entry at `at` (`guardrails[2]`; empty for one entry on its own, as the admin API takes it). */
export function fieldOf(at: string, rest: string): string {
  return at === '' ? rest : `${at}.${rest}`;
}

/**
 * Parses the `guardrails` entries (already checked against GuardrailSchema, defaults filled)
 * into policies. Throws a GuardrailConfigError naming the first field at fault. `compile`
 * builds each check once (a bad pattern or schema is found here, not on the first request).
 */
export function parseGuardrails(entries: readonly GuardrailConfig[], compile: (policy: GuardrailPolicy, field: string) => void): GuardrailPolicy[] {
  const names = new Map<string, number>();
  return entries.map((entry, index) => {
    const at = `guardrails[${index}]`;
    const earlier = names.get(entry.name);
    if (earlier !== undefined) throw new GuardrailConfigError(`invalid setting ${at}.name: "${entry.name}" is already the name of guardrails[${earlier}]; give each guardrail its own name`);
    names.set(entry.name, index);
    return parseGuardrail(entry, at, compile);
  });
}

/**
 * Parses one entry, checked against GuardrailSchema with its defaults filled: the config
 * file's (`at` is `guardrails[i]`) or one an administrator sends (`at` is empty, so a
 * problem names the entry's own field: `options.patterns[0]`).
 */
export function parseGuardrail(entry: GuardrailConfig, at: string, compile: (policy: GuardrailPolicy, field: string) => void): GuardrailPolicy {
  const schema = OPTION_SCHEMAS[entry.check];
  const options = Value.Default(schema, Value.Clone(entry.options)) as Record<string, unknown>;
  const problem = Value.Errors(schema, options).First();
  if (problem !== undefined) {
    const field = problem.path.replace(/^\//, '').replaceAll('/', '.');
    throw new GuardrailConfigError(`invalid setting ${fieldOf(at, 'options')}${field === '' ? '' : `.${field}`} (check ${entry.check}): ${problem.message.charAt(0).toLowerCase()}${problem.message.slice(1)}`);
  }
  const stages = new Set<GuardrailStage>(typeof entry.stage === 'string' ? [entry.stage] : entry.stage);
  if (entry.check === 'json_schema' && stages.has('input')) {
    throw new GuardrailConfigError(`invalid setting ${fieldOf(at, 'stage')}: a json_schema guardrail checks the model's answer; set stage: output`);
  }
  if (VERDICT_CHECKS.has(entry.check) && entry.action === 'mask') {
    throw new GuardrailConfigError(`invalid setting ${fieldOf(at, 'action')}: a ${entry.check} guardrail judges the whole text and has nothing to mask; use block or log`);
  }
  const apply = entry.apply;
  if (!apply.all && apply.keys.length === 0 && apply.projects.length === 0 && apply.models.length === 0) {
    throw new GuardrailConfigError(`invalid setting ${fieldOf(at, 'apply')}: attach the guardrail to keys, projects, models, or all: true`);
  }
  const policy = {
    name: entry.name,
    check: entry.check,
    options,
    stages,
    action: entry.action,
    failClosed: entry.onError === 'closed',
    apply: { all: apply.all, keys: new Set(apply.keys), projects: new Set(apply.projects), models: new Set(apply.models) },
    window: entry.window,
  } as GuardrailPolicy;
  compile(policy, at);
  return policy;
}
