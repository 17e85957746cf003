import type { ChatCall, ReasoningEffort, ReasoningRequest } from '../../model-api/index.js';

/*
 * The reasoning and sampling extensions of a call (ChatCall.extensions), and the one table by
 * which an effort and a thinking budget stand for each other when a vendor takes only one of
 * them: the budgets are the middle of the ranges the vendors document for such efforts.
 */

const CHAT_EFFORTS = new Set<string>(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']);

/** The reasoning a call asks for: its extension, else chat's own `reasoning_effort`; null for none. */
export function reasoningOf(call: Pick<ChatCall, 'body' | 'extensions'>): ReasoningRequest | null {
  const own = call.extensions?.reasoning;
  if (own !== undefined) return own;
  const effort = call.body.reasoning_effort;
  if (typeof effort !== 'string' || !CHAT_EFFORTS.has(effort)) return null;
  return { param: 'reasoning_effort', effort: effort as ReasoningEffort, budgetTokens: null, includeThoughts: false };
}

/** `top_k` of a call: its extension, else the body's own (as OpenAI-compatible servers take it); null for none. */
export function topKOf(call: Pick<ChatCall, 'body' | 'extensions'>): number | null {
  const value = call.extensions?.topK?.value ?? call.body.top_k;
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : null;
}

/** The caller's field for `top_k`, for a notice that it was dropped. */
export function topKParam(call: Pick<ChatCall, 'extensions'>): string {
  return call.extensions?.topK?.param ?? 'top_k';
}

const BUDGET_OF_EFFORT: Record<ReasoningEffort, number> = {
  none: 0,
  minimal: 512,
  low: 2_048,
  medium: 8_192,
  high: 24_576,
  xhigh: 32_768,
  max: 32_768,
};

/** A thinking budget for a reasoning request: its own, else the one its effort stands for; null: the model decides. */
export function thinkingBudgetOf(reasoning: ReasoningRequest): number | null {
  if (reasoning.budgetTokens !== null) return reasoning.budgetTokens;
  return reasoning.effort === null ? null : BUDGET_OF_EFFORT[reasoning.effort];
}

/**
 * An effort every reasoning model of OpenAI's chat completions takes (low, medium, high) for a
 * reasoning request: its own effort, the nearest for `none`/`minimal` (low) and `xhigh`/`max`
 * (high), or the one its budget falls in; null when the model decides (adaptive).
 */
export function chatEffortOf(reasoning: ReasoningRequest): 'low' | 'medium' | 'high' | null {
  const budget = reasoning.effort === null ? reasoning.budgetTokens : BUDGET_OF_EFFORT[reasoning.effort];
  if (budget === null) return null;
  if (budget < BUDGET_OF_EFFORT.medium) return 'low';
  if (budget < BUDGET_OF_EFFORT.high) return 'medium';
  return 'high';
}
