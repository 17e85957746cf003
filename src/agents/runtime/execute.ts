import { GatewayError } from '../../errors/index.js';
import { ExpressionError, evaluateExpression } from '../expressions/expression.js';
import { compare, containsValue, isTruthy, OperatorError } from '../expressions/operators.js';
import type { CompiledGraph, ConditionNode, GraphNode, HttpNode, JsonTemplate, LoopNode, OutputNode } from '../graph/types.js';
import { renderTemplate, renderTemplateValue } from '../templates/template.js';
import { emptyObject, parseSafeJson, ValueSizeError, type SafeValue } from '../values.js';
import { RunBudget } from './budget.js';
import { runImageNode, runLlmNode, type ModelNodeContext } from './model-nodes.js';
import { assertTurnImagesAccepted } from './preflight.js';
import { RunScope } from './scope.js';
import type { GeneratedImage, HistoryMessage, NodeUsage, RunResult, RuntimeDependencies, StepValues, TraceStep, Turn } from './types.js';

/** What a run used so far; readable after a failure too (metering, logs, the run record). */
export class RunProgress {
  readonly nodes: NodeUsage[] = [];
  readonly trace: TraceStep[] = [];
  readonly generated: GeneratedImage[] = [];
  /** With `recordValues`: one entry per trace step, what it read and made. */
  readonly values: StepValues[] = [];
}

function expressionFailure(node: string, error: unknown): unknown {
  if (error instanceof ExpressionError || error instanceof OperatorError) {
    return new GatewayError('invalid_agent_graph', `The agent's node "${node}" could not evaluate its condition: ${error.message}.`, {
      logDetail: { node },
    });
  }
  return error;
}

/** Lone UTF-16 surrogates (a caller's `"\ud800"`) as U+FFFD: encodeURIComponent throws on them. */
function encodeUrlValue(text: string): string {
  return encodeURIComponent(text.replace(/\p{Surrogate}/gu, '\uFFFD'));
}

function renderJson(template: JsonTemplate, scope: RunScope, maxBytes: number): SafeValue {
  switch (template.kind) {
    case 'literal':
      return template.value;
    case 'template':
      return renderTemplateValue(template.template, scope, { maxBytes });
    case 'array':
      return template.items.map((item) => renderJson(item, scope, maxBytes));
    case 'object': {
      const object = emptyObject();
      for (const [key, value] of template.entries) object[key] = renderJson(value, scope, maxBytes);
      return object;
    }
  }
}

class Run {
  private readonly budget: RunBudget;
  private readonly scope: RunScope;
  private readonly loopIterations = new Map<string, number>();
  private readonly models: ModelNodeContext;
  /** What the current step read, kept with `recordValues`. */
  private stepInput: SafeValue = null;

  constructor(
    private readonly graph: CompiledGraph,
    turn: Turn,
    history: readonly HistoryMessage[],
    private readonly dependencies: RuntimeDependencies,
    private readonly progress: RunProgress,
  ) {
    this.budget = new RunBudget(dependencies.limits, dependencies.signal);
    this.scope = new RunScope(turn.text, graph.variables);
    this.models = { dependencies, budget: this.budget, scope: this.scope, turn, history, recordUsage: (usage) => progress.nodes.push(usage) };
  }

  async execute(): Promise<RunResult> {
    if (this.models.turn.images.length > 0) assertTurnImagesAccepted(this.graph, this.dependencies.catalog);
    let current: string = this.graph.entry;
    for (;;) {
      const node = this.graph.nodes.get(current);
      if (node === undefined) throw new GatewayError('invalid_agent_graph', `The agent's graph names a node "${current}" it does not have.`);
      this.budget.nodeStarted();
      const startedAt = performance.now();
      const step: TraceStep = { node: node.id, type: node.type, durationMs: 0 };
      this.progress.trace.push(step);
      this.stepInput = null;
      let next: string | RunResult;
      try {
        next = await this.step(node, step);
      } catch (error) {
        throw error instanceof ValueSizeError ? this.budget.valueTooLarge(node.id) : error;
      }
      step.durationMs = Math.round(performance.now() - startedAt);
      if (this.dependencies.recordValues === true) this.progress.values.push({ input: this.stepInput, output: this.scope.outputOf(node.id) });
      if (typeof next !== 'string') return next;
      current = next;
    }
  }

  /** Runs one node; returns the id of the next node, or the result when an output node ends the run. */
  private async step(node: GraphNode, step: TraceStep): Promise<string | RunResult> {
    switch (node.type) {
      case 'input':
        this.stepInput = this.models.turn.text;
        this.scope.setOutput(node.id, { content: this.models.turn.text });
        return node.next;
      case 'llm': {
        step.model = node.model;
        const { prompt, ...output } = await runLlmNode(node, this.models);
        this.stepInput = prompt;
        this.budget.checkValue(node.id, output.json);
        this.scope.setOutput(node.id, output);
        return node.next;
      }
      case 'image': {
        step.model = node.model;
        const { prompt, images } = await runImageNode(node, this.models);
        this.stepInput = prompt;
        this.progress.generated.push(...images);
        step.assetIds = images.map((image) => image.assetId);
        this.scope.setOutput(node.id, {
          content: images[0]!.url,
          url: images[0]!.url,
          json: Object.assign(emptyObject(), { urls: images.map((image) => image.url), asset_ids: images.map((image) => image.assetId) }),
        });
        return node.next;
      }
      case 'condition': {
        const result = this.test(node);
        step.branch = String(result);
        this.scope.setOutput(node.id, { content: String(result), json: Object.assign(emptyObject(), { result }) });
        return result ? node.branches.true : node.branches.false;
      }
      case 'loop':
        return this.loop(node, step);
      case 'transform': {
        const json = renderJson(node.output, this.scope, this.budget.limits.maxValueBytes);
        this.budget.checkValue(node.id, json); // before writing it out: it may repeat a large part many times
        const content = typeof json === 'string' ? json : JSON.stringify(json);
        this.scope.setOutput(node.id, { content, json });
        return node.next;
      }
      case 'http':
        return this.http(node, step);
      case 'output':
        return this.output(node);
    }
  }

  private test(node: ConditionNode): boolean {
    try {
      const test = node.test;
      if (test.kind === 'expression') {
        return isTruthy(evaluateExpression(test.expression, this.scope, { maxValueBytes: this.budget.limits.maxValueBytes }));
      }
      const value = this.scope.resolve(test.path);
      this.stepInput = value ?? null;
      switch (test.operator) {
        case 'truthy':
          return isTruthy(value);
        case 'falsy':
          return !isTruthy(value);
        case 'contains':
          return containsValue(value, test.value);
        default:
          return compare(test.operator, value, test.value);
      }
    } catch (error) {
      throw expressionFailure(node.id, error);
    }
  }

  /**
   * A loop node decides, each time the run reaches it, whether to go round again. `count`
   * runs the body that many times; `while` while its expression holds; both stop the run with
   * a budget error past maxLoopIterations. Taking `done` resets the count, so an enclosing
   * loop can run this one again.
   */
  private loop(node: LoopNode, step: TraceStep): string {
    const iteration = this.loopIterations.get(node.id) ?? 0;
    let again: boolean;
    try {
      again = node.count !== null ? iteration < node.count : isTruthy(evaluateExpression(node.while!, this.scope, { maxValueBytes: this.budget.limits.maxValueBytes }));
    } catch (error) {
      throw expressionFailure(node.id, error);
    }
    if (node.variable !== null) this.scope.setVariable(node.variable, iteration);
    this.scope.setOutput(node.id, { content: String(iteration), json: Object.assign(emptyObject(), { index: iteration }) });
    if (!again) {
      this.loopIterations.delete(node.id);
      step.branch = 'done';
      return node.branches.done;
    }
    this.budget.loopIteration(node.id, iteration);
    this.loopIterations.set(node.id, iteration + 1);
    step.branch = 'continue';
    return node.branches.continue;
  }

  private async http(node: HttpNode, step: TraceStep): Promise<string> {
    const maxBytes = this.budget.limits.maxValueBytes;
    const url = renderTemplate(node.url, this.scope, { encode: encodeUrlValue, maxBytes });
    const bodyValue = node.body === null ? null : renderJson(node.body, this.scope, maxBytes);
    this.budget.checkValue(node.id, bodyValue);
    const body = bodyValue === null ? null : JSON.stringify(bodyValue);
    this.stepInput = Object.assign(emptyObject(), { method: node.method, url, body: bodyValue });
    this.budget.checkAlive();
    let response;
    try {
      response = await this.dependencies.http.call({ method: node.method, url, body }, this.budget.signal, { requestId: this.dependencies.requestId, nodeId: node.id });
    } catch (error) {
      throw this.budget.timedOut ? this.budget.timeoutError() : error;
    }
    step.status = response.status;
    this.budget.checkValue(node.id, response.body);
    let json: SafeValue | undefined;
    if (response.contentType !== null && /^application\/([\w.+-]*\+)?json\b/i.test(response.contentType)) {
      try {
        json = parseSafeJson(response.body);
      } catch {
        json = undefined; // not JSON after all: the text is still in content
      }
    }
    this.scope.setOutput(node.id, { content: response.body, status: response.status, ...(json !== undefined ? { json } : {}) });
    return node.next;
  }

  private output(node: OutputNode): RunResult {
    const text = renderTemplate(node.text, this.scope, { maxBytes: this.budget.limits.maxValueBytes });
    this.scope.setOutput(node.id, { content: text });
    let attachments: GeneratedImage[];
    if (node.attachments === null) {
      attachments = [...this.progress.generated];
    } else {
      const byUrl = new Map(this.progress.generated.map((image) => [image.url, image]));
      const wanted = node.attachments.flatMap((template) => {
        const value = renderTemplateValue(template, this.scope);
        return Array.isArray(value) ? value : [value];
      });
      // Only images this run generated can be attached: they are the ones the gateway serves.
      attachments = [...new Set(wanted.filter((url): url is string => typeof url === 'string' && byUrl.has(url)))].map((url) => byUrl.get(url)!);
    }
    return { text, attachments, generated: this.progress.generated, nodes: this.progress.nodes, trace: this.progress.trace };
  }
}

/**
 * Runs one turn through a compiled graph: from the entry, node by node, until an output node.
 * Budgets (config.agents) bound every run; `progress` keeps what was used even when it fails.
 */
export async function executeGraph(
  graph: CompiledGraph,
  turn: Turn,
  history: readonly HistoryMessage[],
  dependencies: RuntimeDependencies,
  progress: RunProgress = new RunProgress(),
): Promise<RunResult> {
  return new Run(graph, turn, history, dependencies, progress).execute();
}
