import { GatewayError } from '../errors/index.js';
import type { CheckScope, CheckerAsk, SpanCheck, TextCheck, VerdictCheck } from './check-types.js';
import { WebhookCheck } from './webhook.js';
import { buildCheck, maskSpans, type CheckDependencies } from './checks.js';
import { parseGuardrail, parseGuardrails, type GuardrailAction, type GuardrailConfig, type GuardrailPolicy, type GuardrailStage } from './policy.js';

/** What a guardrail made of one stage of a call, as the request record keeps it: never what it matched. */
export interface GuardrailVerdict {
  guardrail: string;
  stage: GuardrailStage;
  action: GuardrailAction;
  /** passed: nothing found; masked / blocked / logged: found, and what was done; error: the check failed and the guardrail fails open. A check that failed closed is `blocked`. */
  outcome: 'passed' | 'masked' | 'blocked' | 'logged' | 'error';
  matched: boolean;
  /** The check failed (its outcome says whether it blocked). */
  failed?: true;
  latencyMs: number;
}

/** Who calls, for the guardrails attached to keys and projects (a keyless caller has neither). */
export type GuardedCaller = { kind: 'key'; keyId: string; projectId: string } | { kind: 'anonymous' } | null;

/** A guardrail ready to run: its policy and its built check. */
export interface ActiveGuardrail {
  readonly policy: GuardrailPolicy;
  readonly check: TextCheck;
}

/** One stage's result over some texts: the texts as they go on (null: unchanged), the verdicts, and the block, if one. */
export interface StageResult {
  texts: string[] | null;
  verdicts: GuardrailVerdict[];
  blocked: GatewayError | null;
}

/** The `guardrail_blocked` error of a stage: it names the guardrail, never what it matched. */
export function blockedError(policy: GuardrailPolicy, stage: GuardrailStage, failed: boolean, tool = false): GatewayError {
  const what = tool ? (stage === 'input' ? 'the arguments of this tool call' : "the tool's result") : stage === 'input' ? 'this request' : "the model's answer";
  const why = failed ? `could not check ${what} and fails closed` : `blocked ${what}`;
  return new GatewayError('guardrail_blocked', `The guardrail "${policy.name}" ${why}.${stage === 'input' && !failed ? ' Change the input and send it again.' : ''}`, {
    output: stage === 'output',
    logDetail: { guardrail: policy.name, stage },
  });
}

/** Where a guardrail is defined: the config file (read-only here) or the admin API (kept in the database). */
export type GuardrailSource = 'config' | 'stored';

/** A check that always fails: a stored guardrail this instance cannot build (a webhook key its environment lacks) blocks unless it fails open. */
const UNBUILDABLE: TextCheck = {
  kind: 'verdict',
  maskable: false,
  judge: () => Promise.reject(new Error('this instance could not build the check')),
};

/**
 * The guardrails of the gateway (docs/guardrails.md): the config file's, built once at
 * start-up, then those an administrator defined (src/guardrails/stored.ts), put and taken
 * away live. The config file's run first, in file order, then the stored ones by name; a
 * stored one may not take a config entry's name. Built-in checks are synchronous and never
 * see the network; a checker model, a moderation endpoint or a webhook is asynchronous.
 */
export class Guardrails {
  private readonly configured: ActiveGuardrail[];
  private readonly stored = new Map<string, ActiveGuardrail>();
  /** What runs: the configured ones, then the stored ones by name; replaced whole on a change, so a call in flight keeps the list it read. */
  private active: ActiveGuardrail[];

  constructor(
    entries: readonly GuardrailConfig[],
    private readonly dependencies: CheckDependencies,
  ) {
    const checks = new Map<string, TextCheck>();
    const policies = parseGuardrails(entries, (policy, field) => checks.set(policy.name, buildCheck(policy, field, dependencies)));
    this.configured = policies.map((policy) => ({ policy, check: checks.get(policy.name)! }));
    this.active = this.configured;
  }

  /** The service, or undefined when the config has no guardrail (the call path then does nothing for them). */
  static fromConfig(entries: readonly GuardrailConfig[], dependencies: CheckDependencies): Guardrails | undefined {
    return entries.length === 0 ? undefined : new Guardrails(entries, dependencies);
  }

  /** The catalog models the model-based guardrails call, with the config field naming each (checked at start-up). */
  get checkerModels(): { model: string; field: string }[] {
    return this.configured.flatMap(({ policy }, index) => (policy.check === 'model' ? [{ model: policy.options.model, field: `guardrails[${index}].options.model` }] : []));
  }

  /** The providers the moderation guardrails of the config call, with the field naming each (checked at start-up). */
  get moderationProviders(): { provider: string; field: string }[] {
    return this.configured.flatMap(({ policy }, index) => (policy.check === 'moderation' ? [{ provider: policy.options.provider, field: `guardrails[${index}].options.provider` }] : []));
  }

  /** Closes the webhooks' connections. */
  async close(): Promise<void> {
    await Promise.all(this.active.map(({ check }) => (check instanceof WebhookCheck ? check.close() : undefined)));
  }

  /** Whether the config file defines a guardrail of this name. */
  isConfigured(name: string): boolean {
    return this.configured.some((guardrail) => guardrail.policy.name === name);
  }

  /**
   * Parses and builds one entry as the admin API takes it (GuardrailSchema's shape, defaults
   * filled): the same parser as the config file's, so a problem is a GuardrailConfigError
   * naming the entry's field (`options.patterns[0]`). Builds nothing into what runs.
   */
  build(entry: GuardrailConfig): ActiveGuardrail {
    let check: TextCheck | undefined;
    const policy = parseGuardrail(entry, '', (parsed, field) => {
      check = buildCheck(parsed, field, this.dependencies);
    });
    return { policy, check: check! };
  }

  /**
   * Puts a stored entry into what runs (or replaces the one of its name). An entry this
   * instance cannot build runs with a check that always fails, so a closed guardrail blocks
   * rather than disappears; `unbuildable` is told why. False for a config entry's name.
   */
  putStored(entry: GuardrailConfig, unbuildable: (reason: string) => void): boolean {
    if (this.isConfigured(entry.name)) return false;
    let guardrail: ActiveGuardrail;
    try {
      guardrail = this.build(entry);
    } catch (error) {
      unbuildable((error as Error).message);
      try {
        guardrail = { policy: parseGuardrail(entry, '', () => undefined), check: UNBUILDABLE };
      } catch {
        // Not even its policy parses (written by another version): it cannot say what it attaches to.
        this.removeStored(entry.name);
        return true;
      }
    }
    const earlier = this.stored.get(entry.name);
    this.stored.set(entry.name, guardrail);
    this.rebuild();
    if (earlier?.check instanceof WebhookCheck) void earlier.check.close();
    return true;
  }

  /** Takes a stored guardrail away from what runs. */
  removeStored(name: string): void {
    const earlier = this.stored.get(name);
    if (earlier === undefined) return;
    this.stored.delete(name);
    this.rebuild();
    if (earlier.check instanceof WebhookCheck) void earlier.check.close();
  }

  /** The names of the stored guardrails in force here. */
  storedNames(): string[] {
    return [...this.stored.keys()];
  }

  private rebuild(): void {
    this.active = [...this.configured, ...[...this.stored.values()].sort((a, b) => (a.policy.name < b.policy.name ? -1 : 1))];
  }

  /** The guardrail named, for a dry run. */
  named(name: string): ActiveGuardrail | undefined {
    return this.active.find((guardrail) => guardrail.policy.name === name);
  }

  /** Every guardrail's policy in the order they run, with where it is defined. */
  get policies(): (GuardrailPolicy & { source: GuardrailSource })[] {
    return this.active.map((guardrail) => ({ ...guardrail.policy, source: this.stored.get(guardrail.policy.name) === guardrail ? ('stored' as const) : ('config' as const) }));
  }

  /**
   * Runs one guardrail on a sample text as a stage of a call would (the admin API's dry run):
   * its verdict, and the text as it would go on when it masks. Undefined for an unknown name.
   * A checker model or webhook is called (`ask` makes the model's calls, outside any request).
   */
  async dryRun(name: string, stage: GuardrailStage, text: string, ask?: CheckerAsk): Promise<{ verdict: GuardrailVerdict; text: string | null; blocked: boolean } | undefined> {
    const guardrail = this.named(name);
    if (guardrail === undefined) return undefined;
    // The stage asked for, whether or not the guardrail runs at it in traffic.
    const policy = guardrail.policy.stages.has(stage) ? guardrail.policy : { ...guardrail.policy, stages: new Set([stage]) };
    const scope: CheckScope = { stage, ask, metadata: { requestId: null, keyId: null, projectId: null, model: null, capability: 'dry-run' } };
    const result = await runStage([{ policy, check: guardrail.check }], stage, [text], scope);
    return { verdict: result.verdicts[0]!, text: result.texts?.[0] ?? null, blocked: result.blocked !== null };
  }

  /** The guardrails attached to a call of `caller` to `model` (the catalog id it resolved to; null for a tool call), in config order; null when none is (no array is made then). */
  attached(caller: GuardedCaller, model: string | null): ActiveGuardrail[] | null {
    let found: ActiveGuardrail[] | null = null;
    const key = caller?.kind === 'key' ? caller : null;
    const active = this.active;
    for (const guardrail of active) {
      const { apply } = guardrail.policy;
      const applies = apply.all || (model !== null && apply.models.has(model)) || (key !== null && (apply.keys.has(key.keyId) || apply.projects.has(key.projectId)));
      if (applies) (found ??= []).push(guardrail);
    }
    return found;
  }
}

/** One guardrail's findings over a stage's texts: whether it matched, whether its check failed, and the texts masked (null: none). */
interface Findings {
  matched: boolean;
  failed: boolean;
  masked: string[] | null;
}

function findSpans(policy: GuardrailPolicy, check: SpanCheck, seen: readonly string[]): Findings {
  let matched = false;
  let masked: string[] | null = null;
  try {
    for (const [index, text] of seen.entries()) {
      const spans = check.find(text);
      if (spans.length === 0) continue;
      matched = true;
      if (policy.action !== 'mask' || !check.maskable) break;
      masked ??= [...seen];
      masked[index] = maskSpans(text, spans);
    }
  } catch {
    return { matched, failed: true, masked: null };
  }
  return { matched, failed: false, masked };
}

async function judged(check: VerdictCheck, seen: readonly string[], scope: CheckScope | undefined, guardrail: string): Promise<Findings> {
  try {
    if (scope === undefined) throw new Error('an asynchronous check needs the call\'s scope');
    return { matched: await check.judge(seen, scope, guardrail), failed: false, masked: null };
  } catch {
    return { matched: false, failed: true, masked: null };
  }
}

/**
 * Runs the guardrails of `stage` on the texts, in order: a masking guardrail's replacements
 * are what the next one sees. The first block stops the stage. Synchronous while the checks
 * are (the built-in ones); from the first checker model or webhook on, the rest runs after it
 * answered and the result is a promise. `scope` is what such checks need (the call's signal,
 * its model calls, its metadata).
 */
export function runStage(guardrails: readonly ActiveGuardrail[], stage: GuardrailStage, texts: readonly string[], scope?: CheckScope): StageResult | Promise<StageResult> {
  return continueStage(guardrails, 0, stage, texts, scope, { texts: null, verdicts: [], blocked: null });
}

function continueStage(guardrails: readonly ActiveGuardrail[], from: number, stage: GuardrailStage, texts: readonly string[], scope: CheckScope | undefined, result: StageResult): StageResult | Promise<StageResult> {
  for (let index = from; index < guardrails.length; index += 1) {
    const { policy, check } = guardrails[index]!;
    if (!policy.stages.has(stage)) continue;
    const started = performance.now();
    const seen: readonly string[] = result.texts ?? texts;
    if (check.kind === 'verdict') {
      return judged(check, seen, scope, policy.name).then((findings) =>
        concluded(policy, stage, findings, performance.now() - started, result, scope) ? result : continueStage(guardrails, index + 1, stage, texts, scope, result),
      );
    }
    if (concluded(policy, stage, findSpans(policy, check, seen), performance.now() - started, result, scope)) return result;
  }
  return result;
}

/** One guardrail's verdict as the record keeps it. */
export function verdictOf(policy: GuardrailPolicy, stage: GuardrailStage, outcome: GuardrailVerdict['outcome'], found: { matched: boolean; failed: boolean }, latencyMs: number): GuardrailVerdict {
  return { guardrail: policy.name, stage, action: policy.action, outcome, matched: found.matched, ...(found.failed ? { failed: true as const } : {}), latencyMs };
}

/** Adds one guardrail's verdict to the stage's result (its masked texts, its block); true when it blocked, which ends the stage. */
function concluded(policy: GuardrailPolicy, stage: GuardrailStage, findings: Findings, latencyMs: number, result: StageResult, scope: CheckScope | undefined): boolean {
  const tool = scope?.metadata.tool !== undefined;
  const { matched, failed, masked } = findings;
  const verdict = (outcome: GuardrailVerdict['outcome']) => verdictOf(policy, stage, outcome, findings, latencyMs);
  if (failed) {
    if (policy.failClosed) {
      result.verdicts.push(verdict('blocked'));
      result.blocked = blockedError(policy, stage, true, tool);
      return true;
    }
    result.verdicts.push(verdict('error'));
    return false;
  }
  if (!matched) {
    result.verdicts.push(verdict('passed'));
    return false;
  }
  if (policy.action === 'block' || (policy.action === 'mask' && masked === null)) {
    result.verdicts.push(verdict('blocked'));
    result.blocked = blockedError(policy, stage, false, tool);
    return true;
  }
  if (policy.action === 'log') {
    result.verdicts.push(verdict('logged'));
    return false;
  }
  result.verdicts.push(verdict('masked'));
  result.texts = masked;
  return false;
}

const OUTCOME_RANK: { readonly [O in GuardrailVerdict['outcome']]: number } = { passed: 0, error: 1, logged: 2, masked: 3, blocked: 4 };

/** The `x-modelgate-guardrails` value of some verdicts: `name=outcome` once per guardrail, its weightiest outcome over both stages (blocked, masked, logged, error, passed). */
export function guardrailsHeader(verdicts: readonly GuardrailVerdict[]): string {
  const outcomes = new Map<string, GuardrailVerdict['outcome']>();
  for (const { guardrail, outcome } of verdicts) {
    const earlier = outcomes.get(guardrail);
    if (earlier === undefined || OUTCOME_RANK[outcome] > OUTCOME_RANK[earlier]) outcomes.set(guardrail, outcome);
  }
  return [...outcomes].map(([guardrail, outcome]) => `${guardrail}=${outcome}`).join(',');
}
