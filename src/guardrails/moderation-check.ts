import type { ModerationProvider } from '../model-api/index.js';
import type { CheckScope, VerdictCheck } from './check-types.js';
import type { GuardrailCheckSpec } from './policy.js';

/**
 * A guardrail whose check is a provider's moderation endpoint (docs/guardrails.md#moderation):
 * a classifier, called directly rather than through the chat call path. The texts are sent as
 * one input; a category with a threshold flags from that score on, any other as the provider
 * flags it. A provider that has no such endpoint, errors, answers no verdict or takes longer
 * than `timeoutMs` is a failed check: closed unless the guardrail says onError: open.
 */

type ModerationOptions = Extract<GuardrailCheckSpec, { check: 'moderation' }>['options'];

/** The moderation endpoint of a provider instance, looked up at each check (instances change live); undefined when it has none. */
export type ModerationSource = (provider: string) => ModerationProvider | undefined;

async function judgeByModeration(options: ModerationOptions, source: ModerationSource | undefined, texts: readonly string[], scope: CheckScope): Promise<boolean> {
  const moderation = source?.(options.provider);
  if (moderation === undefined) throw new Error(`the provider ${options.provider} has no moderation endpoint`);
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = scope.signal === undefined ? timeout : AbortSignal.any([scope.signal, timeout]);
  const call = moderation.moderate({ signal, requestId: scope.metadata.requestId ?? 'guardrail-dry-run', input: texts.join('\n\n'), ...(options.model === undefined ? {} : { upstreamModel: options.model }) });
  // A provider that ignores the signal still loses the race.
  const result = await Promise.race([
    call,
    new Promise<never>((_resolve, reject) => {
      if (signal.aborted) reject(new Error('aborted'));
      signal.addEventListener('abort', () => reject(new Error(timeout.aborted ? `no verdict within ${options.timeoutMs} ms` : 'aborted')), { once: true });
    }),
  ]);
  for (const [category, flagged] of Object.entries(result.categories)) {
    if (flagged && options.thresholds[category] === undefined) return true;
  }
  for (const [category, threshold] of Object.entries(options.thresholds)) {
    const score = result.scores[category];
    if (score !== undefined && score >= threshold) return true;
  }
  // A verdict without categories (an endpoint that gives only the flag) stands as given.
  return Object.keys(result.categories).length === 0 && result.flagged;
}

export function moderationCheck(options: ModerationOptions, source: ModerationSource | undefined): VerdictCheck {
  return { kind: 'verdict', maskable: false, judge: (texts, scope) => judgeByModeration(options, source, texts, scope) };
}
