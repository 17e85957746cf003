/**
 * A small Prometheus registry: counters, gauges and histograms with labels, rendered in the
 * text exposition format 0.0.4. Label values must come from bounded sets (routes, catalog
 * model ids, status codes); callers map anything else to a fixed value.
 */

export type Labels = Readonly<Record<string, string>>;

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function formatNumber(value: number): string {
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return Number.isNaN(value) ? 'NaN' : String(value);
}

/** Labels every sample of a rendering carries (the worker of `serve --workers`), as `name="value"` pairs. */
type ConstantLabels = readonly string[];

function constantLabels(labels: Labels): ConstantLabels {
  return Object.entries(labels).map(([name, value]) => `${name}="${escapeLabel(value)}"`);
}

function labelText(constant: ConstantLabels, names: readonly string[], values: readonly string[], extra?: [string, string]): string {
  const pairs = [...constant, ...names.map((name, index) => `${name}="${escapeLabel(values[index] ?? '')}"`)];
  if (extra !== undefined) pairs.push(`${extra[0]}="${escapeLabel(extra[1])}"`);
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`;
}

function header(name: string, help: string, type: string): string {
  return `# HELP ${name} ${help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}\n# TYPE ${name} ${type}\n`;
}

interface Metric {
  render(constant: ConstantLabels): string;
}

abstract class LabelledMetric<S> implements Metric {
  protected readonly series = new Map<string, { values: string[]; state: S }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}

  /**
   * The state of one labelled series. A caller on the request path keeps it and observes into
   * it (Counter.add, Histogram.record) rather than looking the labels up on every observation.
   */
  seriesOf(labels: Labels): S {
    const values = this.labelNames.map((name) => labels[name] ?? '');
    const id = values.join('\u0000');
    let entry = this.series.get(id);
    if (entry === undefined) {
      entry = { values, state: this.initial() };
      this.series.set(id, entry);
    }
    return entry.state;
  }

  protected abstract initial(): S;
  abstract render(constant: ConstantLabels): string;
}

export interface CounterSeries {
  value: number;
}

export interface HistogramSeries {
  /** Observations per bucket, not cumulative (render sums them); those above the last bound are only in `count`. */
  counts: number[];
  sum: number;
  count: number;
}

export class Counter extends LabelledMetric<CounterSeries> {
  /** Values are added as integers of 1/scale units (exact sums of money), shown divided by scale. */
  constructor(name: string, help: string, labelNames: readonly string[] = [], private readonly scale = 1) {
    super(name, help, labelNames);
  }

  protected initial() {
    return { value: 0 };
  }

  inc(labels: Labels = {}, amount = 1): void {
    this.add(this.seriesOf(labels), amount);
  }

  add(series: CounterSeries, amount = 1): void {
    if (amount < 0) throw new Error(`counter ${this.name} cannot decrease`);
    series.value += amount;
  }

  render(constant: ConstantLabels): string {
    let text = header(this.name, this.help, 'counter');
    for (const { values, state } of this.series.values()) {
      text += `${this.name}${labelText(constant, this.labelNames, values)} ${formatNumber(state.value / this.scale)}\n`;
    }
    return text;
  }
}

/** A gauge read at scrape time from the code that owns the value. */
export class Gauge implements Metric {
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly read: () => number,
  ) {}

  render(constant: ConstantLabels): string {
    return `${header(this.name, this.help, 'gauge')}${this.name}${labelText(constant, [], [])} ${formatNumber(this.read())}\n`;
  }
}

/** A gauge with labels, every series read at scrape time (the state of each configured server, say). */
export class LabelledGauge implements Metric {
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly string[],
    private readonly read: () => readonly { labels: Labels; value: number }[],
  ) {}

  render(constant: ConstantLabels): string {
    let text = header(this.name, this.help, 'gauge');
    for (const { labels, value } of this.read()) {
      text += `${this.name}${labelText(constant, this.labelNames, this.labelNames.map((name) => labels[name] ?? ''))} ${formatNumber(value)}\n`;
    }
    return text;
  }
}

export class Histogram extends LabelledMetric<HistogramSeries> {
  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly buckets: readonly number[],
  ) {
    super(name, help, labelNames);
  }

  protected initial(): HistogramSeries {
    return { counts: this.buckets.map(() => 0), sum: 0, count: 0 };
  }

  observe(labels: Labels, value: number): void {
    this.record(this.seriesOf(labels), value);
  }

  /** One increment per observation: the smallest bucket that holds it (the buckets ascend). */
  record(series: HistogramSeries, value: number): void {
    series.sum += value;
    series.count += 1;
    const index = this.buckets.findIndex((bound) => value <= bound);
    if (index >= 0) series.counts[index]! += 1;
  }

  render(constant: ConstantLabels): string {
    let text = header(this.name, this.help, 'histogram');
    for (const { values, state } of this.series.values()) {
      let cumulative = 0;
      this.buckets.forEach((bound, index) => {
        cumulative += state.counts[index]!;
        text += `${this.name}_bucket${labelText(constant, this.labelNames, values, ['le', formatNumber(bound)])} ${cumulative}\n`;
      });
      text += `${this.name}_bucket${labelText(constant, this.labelNames, values, ['le', '+Inf'])} ${state.count}\n`;
      text += `${this.name}_sum${labelText(constant, this.labelNames, values)} ${formatNumber(state.sum)}\n`;
      text += `${this.name}_count${labelText(constant, this.labelNames, values)} ${state.count}\n`;
    }
    return text;
  }
}

export class Registry {
  private readonly metrics: Metric[] = [];

  register<M extends Metric>(metric: M): M {
    this.metrics.push(metric);
    return metric;
  }

  /** The exposition text; `labels` go on every sample. */
  render(labels: Labels = {}): string {
    const constant = constantLabels(labels);
    return this.metrics.map((metric) => metric.render(constant)).join('');
  }
}

/**
 * Several renderings of one registry (each `serve --workers` process renders its own, under
 * its own constant labels) as one exposition: each family once, with the samples of all.
 */
export function mergeRenderings(texts: readonly string[]): string {
  const headers = new Map<string, string>();
  const samples = new Map<string, string>();
  for (const text of texts) {
    let family = '';
    for (const line of text.split('\n')) {
      if (line.startsWith('# HELP ')) family = line.split(' ', 3)[2]!;
      if (line.startsWith('# ')) {
        if (!samples.has(family)) headers.set(family, `${headers.get(family) ?? ''}${line}\n`);
      } else if (line.length > 0) {
        samples.set(family, `${samples.get(family) ?? ''}${line}\n`);
      }
    }
    // Every family of a text has its samples entry from here on, so a later text's header is not added.
    for (const name of headers.keys()) if (!samples.has(name)) samples.set(name, '');
  }
  return [...headers].map(([name, header]) => `${header}${samples.get(name)}`).join('');
}
