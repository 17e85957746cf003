import type { ChatCall, ChatCompletionResult, Provider, TokenUsage } from '../../src/model-api/index.js';
import type { OpenAIChatScript } from '../fakes/openai.js';

/** One scripted answer: a completion, or an error to throw. */
export type ScriptedAnswer = ChatCompletionResult | Error;

export interface ScriptedChatProvider extends Provider {
  /** Every chat call received, in order. */
  readonly calls: ChatCall[];
}

/**
 * An in-process Provider whose chat answers come from a script: a list consumed in order
 * (the last entry repeats) or a function of the call. For VETTING tests without HTTP
 * upstreams: completions with any finish_reason and usage, and thrown GatewayErrors.
 */
export function scriptedChatProvider(
  name: string,
  script: ScriptedAnswer[] | ((call: ChatCall, index: number) => ScriptedAnswer),
): ScriptedChatProvider {
  const calls: ChatCall[] = [];
  const answerFor = (call: ChatCall, index: number): ScriptedAnswer => {
    if (typeof script === 'function') return script(call, index);
    const answer = script[Math.min(index, script.length - 1)];
    if (answer === undefined) throw new Error(`provider ${name} has no scripted answer`);
    return answer;
  };
  const complete = async (call: ChatCall): Promise<ChatCompletionResult> => {
    calls.push(call);
    const answer = answerFor(call, calls.length - 1);
    if (answer instanceof Error) throw answer;
    return answer;
  };
  return {
    name,
    acceptsRemoteImageUrls: false,
    calls,
    chat: {
      complete,
      stream: () => Promise.reject(new Error('scripted providers do not stream')),
    },
  };
}

export function usage(promptTokens: number, completionTokens: number): TokenUsage {
  return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens, cachedPromptTokens: null };
}

/** An OpenAI chat.completion result with one choice. */
export function completion(content: string | null, options: { finishReason?: string; usage?: TokenUsage | null } = {}): ChatCompletionResult {
  const reported = options.usage === undefined ? usage(10, 5) : options.usage;
  return {
    completion: {
      id: 'chatcmpl-scripted',
      object: 'chat.completion',
      created: 1,
      model: 'scripted',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: options.finishReason ?? 'stop' }],
      ...(reported !== null
        ? { usage: { prompt_tokens: reported.promptTokens, completion_tokens: reported.completionTokens, total_tokens: reported.totalTokens } }
        : {}),
    },
    usage: reported,
  };
}

/** A verifier answer carrying a verdict as structured JSON output. */
export function verdict(passed: boolean, reason: string, requiresAttention = false, tokens: TokenUsage = usage(20, 8)): ChatCompletionResult {
  return completion(JSON.stringify({ passed, reason, requires_attention: requiresAttention }), { usage: tokens });
}

/** The text of every message of a call, for assertions on what a model was shown. */
export function promptText(call: ChatCall): string {
  return JSON.stringify(call.body.messages);
}

/**
 * Drafting and verifying on one OpenAI(-compatible) fake: a first draft the verifier rejects,
 * then a redraft it accepts. The four answers in the order the loop asks for them.
 */
export const REJECTED_THEN_ACCEPTED = {
  rejected: { draft: 'It is 42.', reason: 'The draft gives the product away.' },
  accepted: { draft: 'What do you get if you add 7 six times?', reason: 'Guides without giving the result.' },
  script(): OpenAIChatScript {
    const verdictText = (passed: boolean, reason: string) => JSON.stringify({ passed, reason, requires_attention: false });
    const { rejected, accepted } = REJECTED_THEN_ACCEPTED;
    return {
      kind: 'sequence',
      scripts: [
        { kind: 'reply', text: rejected.draft, usage: { promptTokens: 20, completionTokens: 5 } },
        { kind: 'reply', text: verdictText(false, rejected.reason), usage: { promptTokens: 30, completionTokens: 9 } },
        { kind: 'reply', text: accepted.draft, usage: { promptTokens: 25, completionTokens: 11 } },
        { kind: 'reply', text: verdictText(true, accepted.reason), usage: { promptTokens: 30, completionTokens: 9 } },
      ],
    };
  },
};
