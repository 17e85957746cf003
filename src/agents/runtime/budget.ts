import { GatewayError } from '../../errors/index.js';
import { valueBytes, type SafeValue } from '../values.js';
import type { RunLimits } from './types.js';

/** A run stopped by one of its budgets: the author's graph did more than the operator allows. */
export function budgetExceeded(what: string, setting: string, limit: number): GatewayError {
  return new GatewayError(
    'invalid_agent_graph',
    `The agent run stopped: ${what} exceeded its limit of ${limit} (agents.${setting}). Change the agent's graph, or ask the operator to raise agents.${setting}.`,
    { logDetail: { budget: setting, limit } },
  );
}

/**
 * Counts what a run uses against config.agents, and owns the run's deadline: its signal
 * aborts when the caller goes away or when runTimeoutMs has passed, and is passed into every
 * model and http call.
 */
export class RunBudget {
  private nodeExecutions = 0;
  private modelCalls = 0;
  private readonly deadline: AbortSignal;
  readonly signal: AbortSignal;

  constructor(
    readonly limits: RunLimits,
    outer: AbortSignal | undefined,
  ) {
    this.deadline = AbortSignal.timeout(limits.runTimeoutMs);
    this.signal = outer === undefined ? this.deadline : AbortSignal.any([outer, this.deadline]);
  }

  get timedOut(): boolean {
    return this.deadline.aborted;
  }

  timeoutError(): GatewayError {
    return new GatewayError(
      'provider_timeout',
      `The agent run took longer than its limit of ${this.limits.runTimeoutMs} ms (agents.runTimeoutMs) and was stopped.`,
      { logDetail: { budget: 'runTimeoutMs', limit: this.limits.runTimeoutMs } },
    );
  }

  /** Throws when the run must stop (deadline passed or caller gone). */
  checkAlive(): void {
    if (this.timedOut) throw this.timeoutError();
    if (this.signal.aborted) throw new GatewayError('internal_error', 'The agent run was cancelled because the request ended.');
  }

  nodeStarted(): void {
    this.checkAlive();
    this.nodeExecutions += 1;
    if (this.nodeExecutions > this.limits.maxNodeExecutions) {
      throw budgetExceeded('the number of node executions', 'maxNodeExecutions', this.limits.maxNodeExecutions);
    }
  }

  modelCallStarted(): void {
    this.modelCalls += 1;
    if (this.modelCalls > this.limits.maxModelCalls) throw budgetExceeded('the number of model calls', 'maxModelCalls', this.limits.maxModelCalls);
  }

  loopIteration(node: string, iteration: number): void {
    if (iteration >= this.limits.maxLoopIterations) {
      throw budgetExceeded(`the loop "${node}"`, 'maxLoopIterations', this.limits.maxLoopIterations);
    }
  }

  checkValue(node: string, value: SafeValue | undefined): void {
    if (valueBytes(value, this.limits.maxValueBytes) > this.limits.maxValueBytes) throw this.valueTooLarge(node);
  }

  valueTooLarge(node: string): GatewayError {
    return budgetExceeded(`a value made by node "${node}"`, 'maxValueBytes', this.limits.maxValueBytes);
  }
}
