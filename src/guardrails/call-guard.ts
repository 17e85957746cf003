import type { GatewayError } from '../errors/index.js';
import type { EventStream, StreamReader } from '../model-api/index.js';
import { deltaText, inputSlots, outputSlots, withTexts } from './call-text.js';
import { runStage, type ActiveGuardrail, type GuardrailVerdict } from './service.js';

/**
 * The guardrails of one model call, as the call path runs them (src/calls/checked-call.ts):
 * the input stage inside the provider capability the call is made through (so every method
 * that sends a body to a model sends the checked, perhaps masked, body), the output stage on
 * the answer once it came, and on a stream's assembled text as it comes, its tail held back.
 */
export class CallGuard {
  /** The body last checked and what it became: a routed call's attempts send the same body, checked once. */
  private checkedInput: { body: object; checked: Record<string, unknown>; masked: boolean } | null = null;

  constructor(
    private readonly capabilityName: string,
    private readonly guardrails: readonly ActiveGuardrail[],
    private readonly record: (verdicts: readonly GuardrailVerdict[]) => void,
  ) {}

  /** The capability with its body-sending methods guarded on input; other members as they are. */
  capability<T extends object>(capability: T): T {
    if (!this.guardrails.some((guardrail) => guardrail.policy.stages.has('input'))) return capability;
    return new Proxy(capability, {
      get: (target, property, receiver) => {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof value !== 'function') return value;
        if (typeof property !== 'string' || !GUARDED_METHODS.has(property)) return (value as (...args: unknown[]) => unknown).bind(target);
        return (call: { body: Record<string, unknown> }, ...rest: unknown[]) => (value as (...args: unknown[]) => unknown).call(target, this.input(call), ...rest);
      },
    });
  }

  private input<C extends { body: Record<string, unknown> }>(call: C): C {
    if (this.checkedInput === null || this.checkedInput.body !== call.body) {
      const slots = inputSlots(this.capabilityName, call.body);
      const result = runStage(this.guardrails, 'input', slots.map((slot) => slot.text));
      this.record(result.verdicts);
      if (result.blocked !== null) throw result.blocked;
      const masked = result.texts !== null;
      this.checkedInput = { body: call.body, checked: masked ? withTexts(call.body, slots, result.texts!) : call.body, masked };
    }
    // A masked body is sent as the object: the caller's bytes (sourceJson) still hold what was masked.
    return this.checkedInput.masked ? { ...call, body: this.checkedInput.checked, sourceJson: undefined } : call;
  }

  /** Whether any guardrail checks the answer. */
  get checksOutput(): boolean {
    return this.guardrails.some((guardrail) => guardrail.policy.stages.has('output'));
  }

  /** The answer after the output stage: a whole answer checked (perhaps masked, or the block thrown), a stream guarded as it goes. */
  answer<R>(result: R): R {
    if (!this.checksOutput || typeof result !== 'object' || result === null) return result;
    const stream = result as unknown as EventStream<{ type: string }>;
    if (typeof stream.read === 'function' && typeof stream.resume === 'function') return new GuardedStream(stream, this.capabilityName, this.guardrails, this.record) as unknown as R;
    const key = ANSWER_KEYS[this.capabilityName];
    const answer = key === undefined ? undefined : (result as Record<string, unknown>)[key];
    if (key === undefined || typeof answer !== 'object' || answer === null) return result;
    const slots = outputSlots(this.capabilityName, answer as Record<string, unknown>);
    const checked = runStage(this.guardrails, 'output', slots.map((slot) => slot.text));
    this.record(checked.verdicts);
    if (checked.blocked !== null) throw checked.blocked;
    if (checked.texts === null) return result;
    return { ...result, [key]: withTexts(answer as Record<string, unknown>, slots, checked.texts) } as R;
  }
}

/** The provider methods that send a caller's body to a model. */
const GUARDED_METHODS = new Set(['complete', 'stream', 'create', 'embed', 'generate', 'speak']);

/** Where a whole answer's value is on the result of each capability. */
const ANSWER_KEYS: Readonly<Record<string, string>> = { chat: 'completion', responses: 'response', messages: 'message' };

interface Failure {
  type: 'stream-failed';
  message: string;
  error: GatewayError;
}

/**
 * A stream whose answer text is checked as it comes: events are handed on once the text up to
 * them lies `window` characters before the end of what has come and what came has passed the
 * output guardrails; at the end the rest is checked and handed on. A check that blocks (a
 * masking guardrail too: what a stream sent cannot be replaced) ends the stream with a
 * `stream-failed` event carrying the `guardrail_blocked` error, which the relay writes as the
 * format's own error event; the provider's later events are dropped.
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
  private readonly wholeText: ActiveGuardrail[];
  private readonly totals = new Map<string, GuardrailVerdict>();
  private readonly logged = new Set<string>();

  constructor(
    private readonly inner: EventStream<E>,
    private readonly capabilityName: string,
    guardrails: readonly ActiveGuardrail[],
    private readonly record: (verdicts: readonly GuardrailVerdict[]) => void,
  ) {
    const output = guardrails
      .filter((guardrail) => guardrail.policy.stages.has('output'))
      .map((guardrail) => (guardrail.policy.action === 'mask' ? { ...guardrail, policy: { ...guardrail.policy, action: 'block' as const } } : guardrail));
    this.streamed = output.filter((guardrail) => guardrail.check.maskable);
    this.wholeText = output.filter((guardrail) => !guardrail.check.maskable);
    this.window = Math.max(0, ...this.streamed.map((guardrail) => guardrail.policy.window));
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
    // With a whole-text check (a JSON schema) nothing is handed on before the end.
    const boundary = this.wholeText.length > 0 ? 0 : this.text.length - this.window;
    if (boundary <= this.released) return !this.paused;
    if (!this.checkTail(this.streamed)) return true;
    return this.release(boundary);
  }

  private onEnd(): void {
    if (this.stopped) return;
    if (!this.checkTail(this.streamed) || !this.check(this.wholeText, this.text)) return;
    this.release(Number.POSITIVE_INFINITY);
    this.stopped = true;
    this.record([...this.totals.values()]);
    this.reader?.onEnd();
  }

  /** Checks what was not handed on yet, with a window before it (a match across the boundary is found whole). */
  private checkTail(guardrails: readonly ActiveGuardrail[]): boolean {
    return this.check(guardrails, this.text.slice(Math.max(0, this.released - this.window)));
  }

  /** Runs the guardrails on `text`: false when one blocked (the stream then ended with the error). */
  private check(guardrails: readonly ActiveGuardrail[], text: string): boolean {
    const active = guardrails.filter((guardrail) => !this.logged.has(guardrail.policy.name));
    if (active.length === 0) return true;
    const result = runStage(active, 'output', [text]);
    for (const verdict of result.verdicts) {
      const earlier = this.totals.get(verdict.guardrail);
      this.totals.set(verdict.guardrail, earlier === undefined ? verdict : { ...verdict, latencyMs: earlier.latencyMs + verdict.latencyMs });
      if (verdict.outcome === 'logged' || verdict.outcome === 'error') this.logged.add(verdict.guardrail);
    }
    if (result.blocked === null) return true;
    this.stopped = true;
    this.record([...this.totals.values()]);
    this.reader?.onEvents([{ type: 'stream-failed', message: result.blocked.message, error: result.blocked }]);
    this.reader?.onEnd();
    return false;
  }

  /** Hands on the held events whose text ends at or before `boundary`. */
  private release(boundary: number): boolean {
    let count = 0;
    while (count < this.held.length && this.heldEnds[count]! <= boundary) count += 1;
    if (count === 0) return !this.paused;
    const events = this.held.splice(0, count);
    this.released = this.heldEnds.splice(0, count).at(-1)!;
    const goOn = this.reader?.onEvents(events) ?? true;
    if (!goOn) this.paused = true;
    return goOn;
  }
}
