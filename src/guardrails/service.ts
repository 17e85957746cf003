import { GatewayError } from '../errors/index.js';
import { buildCheck, maskSpans, type TextCheck } from './checks.js';
import { parseGuardrails, type GuardrailAction, type GuardrailConfig, type GuardrailPolicy, type GuardrailStage } from './policy.js';

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
export function blockedError(policy: GuardrailPolicy, stage: GuardrailStage, failed: boolean): GatewayError {
  const what = stage === 'input' ? 'this request' : "the model's answer";
  const why = failed ? `could not check ${what} and fails closed` : `blocked ${what}`;
  return new GatewayError('guardrail_blocked', `The guardrail "${policy.name}" ${why}.${stage === 'input' && !failed ? ' Change the input and send it again.' : ''}`, {
    output: stage === 'output',
    logDetail: { guardrail: policy.name, stage },
  });
}

/**
 * The guardrails of the gateway (docs/guardrails.md), built once at start-up from the config:
 * which are attached to a call, and running them on a stage's texts. Built-in checks are
 * synchronous and never see the network.
 */
export class Guardrails {
  private readonly active: ActiveGuardrail[];

  constructor(entries: readonly GuardrailConfig[]) {
    const checks = new Map<string, TextCheck>();
    const policies = parseGuardrails(entries, (policy, field) => checks.set(policy.name, buildCheck(policy, field)));
    this.active = policies.map((policy) => ({ policy, check: checks.get(policy.name)! }));
  }

  /** The service, or undefined when the config has no guardrail (the call path then does nothing for them). */
  static fromConfig(entries: readonly GuardrailConfig[]): Guardrails | undefined {
    return entries.length === 0 ? undefined : new Guardrails(entries);
  }

  /** The guardrail named, for a dry run. */
  named(name: string): ActiveGuardrail | undefined {
    return this.active.find((guardrail) => guardrail.policy.name === name);
  }

  /** Every guardrail's policy, in config order. */
  get policies(): GuardrailPolicy[] {
    return this.active.map((guardrail) => guardrail.policy);
  }

  /**
   * Runs one guardrail on a sample text as a stage of a call would (the admin API's dry run):
   * its verdict, and the text as it would go on when it masks. Undefined for an unknown name.
   */
  dryRun(name: string, stage: GuardrailStage, text: string): { verdict: GuardrailVerdict; text: string | null; blocked: boolean } | undefined {
    const guardrail = this.named(name);
    if (guardrail === undefined) return undefined;
    // The stage asked for, whether or not the guardrail runs at it in traffic.
    const policy = guardrail.policy.stages.has(stage) ? guardrail.policy : { ...guardrail.policy, stages: new Set([stage]) };
    const result = runStage([{ policy, check: guardrail.check }], stage, [text]);
    return { verdict: result.verdicts[0]!, text: result.texts?.[0] ?? null, blocked: result.blocked !== null };
  }

  /** The guardrails attached to a call of `caller` to `model` (the catalog id it resolved to), in config order; null when none is (no array is made then). */
  attached(caller: GuardedCaller, model: string): ActiveGuardrail[] | null {
    let found: ActiveGuardrail[] | null = null;
    const key = caller?.kind === 'key' ? caller : null;
    for (const guardrail of this.active) {
      const { apply } = guardrail.policy;
      const applies = apply.all || apply.models.has(model) || (key !== null && (apply.keys.has(key.keyId) || apply.projects.has(key.projectId)));
      if (applies) (found ??= []).push(guardrail);
    }
    return found;
  }
}

/**
 * Runs the guardrails of `stage` on the texts, in order: a masking guardrail's replacements
 * are what the next one sees. The first block stops the stage.
 */
export function runStage(guardrails: readonly ActiveGuardrail[], stage: GuardrailStage, texts: readonly string[]): StageResult {
  let current: string[] | null = null;
  const verdicts: GuardrailVerdict[] = [];
  for (const { policy, check } of guardrails) {
    if (!policy.stages.has(stage)) continue;
    const started = performance.now();
    const seen: readonly string[] = current ?? texts;
    let matched = false;
    let failed = false;
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
      failed = true;
    }
    const latencyMs = performance.now() - started;
    const verdict = (outcome: GuardrailVerdict['outcome']): GuardrailVerdict => ({
      guardrail: policy.name,
      stage,
      action: policy.action,
      outcome,
      matched,
      ...(failed ? { failed: true as const } : {}),
      latencyMs,
    });
    if (failed) {
      if (policy.failClosed) {
        verdicts.push(verdict('blocked'));
        return { texts: current, verdicts, blocked: blockedError(policy, stage, true) };
      }
      verdicts.push(verdict('error'));
      continue;
    }
    if (!matched) {
      verdicts.push(verdict('passed'));
      continue;
    }
    if (policy.action === 'block' || (policy.action === 'mask' && !check.maskable)) {
      verdicts.push(verdict('blocked'));
      return { texts: current, verdicts, blocked: blockedError(policy, stage, false) };
    }
    if (policy.action === 'log') {
      verdicts.push(verdict('logged'));
      continue;
    }
    verdicts.push(verdict('masked'));
    current = masked;
  }
  return { texts: current, verdicts, blocked: null };
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
