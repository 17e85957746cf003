import type { GatewayError } from '../errors/index.js';
import type { EventStream, StreamReader } from '../model-api/index.js';
import { deltaText, inputSlots, outputSlots, withDeltaText, withTexts } from './call-text.js';
import type { CheckScope, SpanCheck } from './check-types.js';
import type { Span } from './pii.js';
import type { GuardrailPolicy } from './policy.js';
import { blockedError, runStage, verdictOf, type ActiveGuardrail, type GuardrailVerdict, type StageResult } from './service.js';

/** What a stage's run needs besides the guardrails: the call's scope less its stage. */
export type CallScope = Omit<CheckScope, 'stage'>;

/**
 * The guardrails of one model call, as the call path runs them (src/calls/checked-call.ts):
 * the input stage inside the provider capability the call is made through (so every method
 * that sends a body to a model sends the checked, perhaps masked, body), the output stage on
 * the answer once it came, and on a stream's assembled text as it comes, its tail held back.
 * A stage with a checker model or a webhook is awaited before the call goes on.
 */
export class CallGuard {
  /** The body last checked and what it became: a routed call's attempts send the same body, checked once. */
  private checkedInput: { body: object; checked: Promise<{ body: Record<string, unknown>; masked: boolean }> } | null = null;

  constructor(
    private readonly capabilityName: string,
    private readonly guardrails: readonly ActiveGuardrail[],
    private readonly record: (verdicts: readonly GuardrailVerdict[]) => void,
    private readonly scope: CallScope,
  ) {}

  /** The capability with its body-sending methods guarded on input; other members as they are. */
  capability<T extends object>(capability: T): T {
    if (!this.guardrails.some((guardrail) => guardrail.policy.stages.has('input'))) return capability;
    return new Proxy(capability, {
      get: (target, property, receiver) => {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof value !== 'function') return value;
        if (typeof property !== 'string' || !GUARDED_METHODS.has(property)) return (value as (...args: unknown[]) => unknown).bind(target);
        return async (call: { body: Record<string, unknown> }, ...rest: unknown[]) => (value as (...args: unknown[]) => unknown).call(target, await this.input(call), ...rest);
      },
    });
  }

  private async input<C extends { body: Record<string, unknown> }>(call: C): Promise<C> {
    if (this.checkedInput === null || this.checkedInput.body !== call.body) {
      const slots = inputSlots(this.capabilityName, call.body);
      const checked = Promise.resolve(runStage(this.guardrails, 'input', slots.map((slot) => slot.text), { ...this.scope, stage: 'input' })).then((result) => {
        this.record(result.verdicts);
        if (result.blocked !== null) throw result.blocked;
        return result.texts === null ? { body: call.body, masked: false } : { body: withTexts(call.body, slots, result.texts), masked: true };
      });
      this.checkedInput = { body: call.body, checked };
    }
    const { body, masked } = await this.checkedInput.checked;
    // A masked body is sent as the object: the caller's bytes (sourceJson) still hold what was masked.
    return masked ? { ...call, body, sourceJson: undefined } : call;
  }

  /** Whether any guardrail checks the answer. */
  get checksOutput(): boolean {
    return this.guardrails.some((guardrail) => guardrail.policy.stages.has('output'));
  }

  /** The answer after the output stage: a whole answer checked (perhaps masked, or the block thrown), a stream guarded as it goes. */
  async answer<R>(result: R): Promise<R> {
    if (!this.checksOutput || typeof result !== 'object' || result === null) return result;
    const stream = result as unknown as EventStream<{ type: string }>;
    if (typeof stream.read === 'function' && typeof stream.resume === 'function') return new GuardedStream(stream, this.capabilityName, this.guardrails, this.record, this.scope) as unknown as R;
    const key = ANSWER_KEYS[this.capabilityName];
    const answer = key === undefined ? undefined : (result as Record<string, unknown>)[key];
    if (key === undefined || typeof answer !== 'object' || answer === null) return result;
    const slots = outputSlots(this.capabilityName, answer as Record<string, unknown>);
    const checked = await runStage(this.guardrails, 'output', slots.map((slot) => slot.text), { ...this.scope, stage: 'output' });
    this.record(checked.verdicts);
    if (checked.blocked !== null) throw checked.blocked;
    if (checked.texts === null) return result;
    return { ...result, [key]: withTexts(answer as Record<string, unknown>, slots, checked.texts) } as R;
  }
}

/** The provider methods that send a caller's body to a model. */
const GUARDED_METHODS = new Set(['complete', 'stream', 'create', 'embed', 'generate', 'speak']);

/** Where a whole answer's value is on the result of each capability. */
const ANSWER_KEYS: Readonly<Record<string, string>> = { chat: 'completion', responses: 'response', messages: 'message', geminiApi: 'response' };

/** The capabilities whose stream events withDeltaText can rewrite: there `mask` masks within the window. */
const MASKABLE_STREAMS: ReadonlySet<string> = new Set(['chat', 'messages', 'geminiApi']);

interface Failure {
  type: 'stream-failed';
  message: string;
  error: GatewayError;
}

/** A masking guardrail of a stream. */
interface StreamMask {
  policy: GuardrailPolicy;
  check: SpanCheck;
}

/** What a mask found: offsets in the assembled text as the provider sent it. */
type Finding = Span & { policy: GuardrailPolicy };

/**
 * A stream whose answer text is checked as it comes: events are handed on once the text up to
 * them lies `window` characters before the end of what has come and what came has passed the
 * output guardrails; at the end the rest is checked and handed on. A masking guardrail's
 * findings are replaced in the held events before they are handed on (chat, Messages and the
 * Gemini API; on Responses it blocks). A check that blocks ends the stream with a
 * `stream-failed` event carrying the `guardrail_blocked` error, which the relay writes as the
 * format's own error event; the provider's later events are dropped. Whole-text checks (a JSON
 * schema, a checker model, a webhook) hold the whole answer until it ended and was judged.
 */
class GuardedStream<E extends { type: string }> implements EventStream<E | Failure> {
  private reader: StreamReader<E | Failure> | null = null;
  private readonly held: E[] = [];
  /** The length of the text after each held event. */
  private readonly heldEnds: number[] = [];
  private text = '';
  /** Characters of the text handed on. */
  private released = 0;
  private stopped = false;
  private paused = false;
  private readonly window: number;
  private readonly streamed: ActiveGuardrail[];
  private readonly masks: StreamMask[];
  private readonly wholeText: ActiveGuardrail[];
  private readonly totals = new Map<string, GuardrailVerdict>();
  private readonly logged = new Set<string>();
  /** What the masks found, in order, none overlapping: replaced as their events are handed on. */
  private found: Finding[] = [];

  constructor(
    private readonly inner: EventStream<E>,
    private readonly capabilityName: string,
    guardrails: readonly ActiveGuardrail[],
    private readonly record: (verdicts: readonly GuardrailVerdict[]) => void,
    private readonly scope: CallScope,
  ) {
    const output = guardrails.filter((guardrail) => guardrail.policy.stages.has('output'));
    const masking = MASKABLE_STREAMS.has(capabilityName);
    const spanChecks = output.filter((guardrail) => guardrail.check.kind === 'spans' && guardrail.check.maskable);
    this.masks = masking ? spanChecks.filter((guardrail) => guardrail.policy.action === 'mask').map(({ policy, check }) => ({ policy, check: check as SpanCheck })) : [];
    // Where a stream cannot be rewritten, what a stream sent cannot be replaced: mask blocks.
    this.streamed = spanChecks
      .filter((guardrail) => !masking || guardrail.policy.action !== 'mask')
      .map((guardrail) => (guardrail.policy.action === 'mask' ? { ...guardrail, policy: { ...guardrail.policy, action: 'block' as const } } : guardrail));
    this.wholeText = output.filter((guardrail) => guardrail.check.kind === 'verdict' || !guardrail.check.maskable);
    this.window = Math.max(0, ...spanChecks.map((guardrail) => guardrail.policy.window));
  }

  read(reader: StreamReader<E | Failure>): void {
    this.reader = reader;
    this.inner.read({ onEvents: (events) => this.onEvents(events), onEnd: () => this.onEnd() });
  }

  resume(): void {
    this.paused = false;
    this.inner.resume();
  }

  private onEvents(events: readonly E[]): boolean {
    if (this.stopped) return true;
    for (const event of events) {
      this.text += deltaText(this.capabilityName, event);
      this.held.push(event);
      this.heldEnds.push(this.text.length);
    }
    // With a whole-text check nothing is handed on before the end.
    const boundary = this.wholeText.length > 0 ? 0 : this.text.length - this.window;
    if (boundary <= this.released) return !this.paused;
    if (!this.checkTail()) return true;
    return this.release(boundary);
  }

  private onEnd(): void {
    if (this.stopped) return;
    if (!this.checkTail()) return;
    const judged = runStage(this.unlogged(this.wholeText), 'output', [this.text], { ...this.scope, stage: 'output' });
    if (judged instanceof Promise) {
      // A checker model or webhook: the answer waits for it (no more events come).
      judged.then((result) => this.ended(result), (error: unknown) => this.ended({ texts: null, verdicts: [], blocked: error as GatewayError }));
      return;
    }
    this.ended(judged);
  }

  private ended(result: StageResult): void {
    if (this.stopped || !this.concluded(result)) return;
    this.release(Number.POSITIVE_INFINITY);
    this.stopped = true;
    this.record([...this.totals.values()]);
    this.reader?.onEnd();
  }

  private unlogged(guardrails: readonly ActiveGuardrail[]): ActiveGuardrail[] {
    return guardrails.filter((guardrail) => !this.logged.has(guardrail.policy.name));
  }

  /**
   * Checks what was not handed on yet, with a window before it (a match across the boundary is
   * found whole): false when a guardrail blocked (the stream then ended with the error).
   */
  private checkTail(): boolean {
    const from = Math.max(0, this.released - this.window);
    const tail = this.text.slice(from);
    if (!this.findMasks(tail, from)) return false;
    const active = this.unlogged(this.streamed);
    return active.length === 0 || this.concluded(runStage(active, 'output', [tail]) as StageResult);
  }

  /**
   * Runs the masking guardrails on the tail: what they find is replaced when its events go out.
   * A finding that begins in text already handed on (longer than the window) cannot be: it blocks.
   */
  private findMasks(tail: string, from: number): boolean {
    if (this.masks.length === 0) return true;
    const kept = this.found.filter((span) => span.start < this.released);
    const fresh: Finding[] = [];
    for (const { policy, check } of this.masks) {
      const started = performance.now();
      let spans: Span[];
      try {
        spans = check.find(tail).map((span) => ({ ...span, start: span.start + from, end: span.end + from }));
      } catch {
        this.total(verdictOf(policy, 'output', policy.failClosed ? 'blocked' : 'error', { matched: false, failed: true }, performance.now() - started));
        if (policy.failClosed) return this.fail(blockedError(policy, 'output', true));
        continue;
      }
      for (const span of spans) {
        // Found before: it may have grown, the part already sent carried its label.
        const earlier = kept.find((known) => known.start === span.start);
        if (earlier !== undefined) earlier.end = Math.max(earlier.end, span.end);
        else if (span.start < this.released) {
          this.total(verdictOf(policy, 'output', 'blocked', { matched: true, failed: false }, performance.now() - started));
          return this.fail(blockedError(policy, 'output', false));
        } else fresh.push({ ...span, policy });
      }
      this.total(verdictOf(policy, 'output', spans.length > 0 || this.totals.get(policy.name)?.matched === true ? 'masked' : 'passed', { matched: spans.length > 0, failed: false }, performance.now() - started));
    }
    fresh.sort((a, b) => a.start - b.start || b.end - a.end);
    const spans = [...kept];
    for (const span of fresh) if (spans.length === 0 || span.start >= spans.at(-1)!.end) spans.push(span);
    this.found = spans;
    return true;
  }

  /** Adds a stage result's verdicts to the stream's; false when it blocked (the stream then ended with the error). */
  private concluded(result: StageResult): boolean {
    for (const verdict of result.verdicts) this.total(verdict);
    return result.blocked === null || this.fail(result.blocked);
  }

  /** One verdict for each guardrail over the whole stream: latencies add up, a match once seen stays. */
  private total(verdict: GuardrailVerdict): void {
    const earlier = this.totals.get(verdict.guardrail);
    this.totals.set(verdict.guardrail, earlier === undefined ? verdict : { ...verdict, matched: verdict.matched || earlier.matched, latencyMs: earlier.latencyMs + verdict.latencyMs });
    if (verdict.outcome === 'logged' || verdict.outcome === 'error') this.logged.add(verdict.guardrail);
  }

  private fail(error: GatewayError): false {
    this.stopped = true;
    this.record([...this.totals.values()]);
    this.reader?.onEvents([{ type: 'stream-failed', message: error.message, error }]);
    this.reader?.onEnd();
    return false;
  }

  /** Hands on the held events whose text ends at or before `boundary`, what the masks found replaced in them. */
  private release(boundary: number): boolean {
    let count = 0;
    while (count < this.held.length && this.heldEnds[count]! <= boundary) count += 1;
    if (count === 0) return !this.paused;
    let start = this.released;
    const events: E[] = [];
    for (const [index, event] of this.held.splice(0, count).entries()) {
      const end = this.heldEnds[index]!;
      const masked = this.masked(event, start, end);
      if (masked === null) return this.fail(blockedError(this.found.find((span) => span.start < end && span.end > start)!.policy, 'output', false));
      events.push(masked);
      start = end;
    }
    this.released = this.heldEnds.splice(0, count).at(-1)!;
    const goOn = this.reader?.onEvents(events) ?? true;
    if (!goOn) this.paused = true;
    return goOn;
  }

  /**
   * The event with the findings in its text [start, end) replaced: a finding's label where it
   * begins, the rest of it left out. Null for an event that cannot be rewritten (several choices).
   */
  private masked(event: E, start: number, end: number): E | null {
    const spans = this.found.filter((span) => span.start < end && span.end > start);
    if (spans.length === 0) return event;
    let text = '';
    let at = start;
    for (const span of spans) {
      if (span.start > at) text += this.text.slice(at, span.start);
      if (span.start >= start) text += `[${span.label}]`;
      at = Math.min(end, span.end);
    }
    if (at < end) text += this.text.slice(at, end);
    return withDeltaText(this.capabilityName, event, text);
  }
}
