import { emptyObject, readPath, type PathResolver, type SafeObject, type SafeValue } from '../values.js';

/** What a node makes available to later templates and expressions (NODE_FIELDS). */
export interface NodeOutput {
  content?: string;
  json?: SafeValue;
  url?: string;
  status?: number;
}

/**
 * The values of one run, read by dot paths: `input` is the user's text, `vars.<name>` the
 * variables, `<node>.<field>` a node's output. Everything is held in null-prototype objects.
 */
export class RunScope implements PathResolver {
  readonly vars: SafeObject;
  private readonly outputs = new Map<string, SafeObject>();

  constructor(
    private readonly inputText: string,
    variables: SafeObject,
  ) {
    this.vars = emptyObject();
    for (const [name, value] of Object.entries(variables)) this.vars[name] = value;
  }

  resolve(path: readonly string[]): SafeValue | undefined {
    const [root, ...rest] = path;
    if (root === undefined) return undefined;
    if (root === 'input' && rest.length === 0) return this.inputText;
    if (root === 'vars') return readPath(this.vars, rest);
    return readPath(this.outputs.get(root), rest);
  }

  setOutput(node: string, output: NodeOutput): void {
    const value = emptyObject();
    if (output.content !== undefined) value.content = output.content;
    if (output.json !== undefined) value.json = output.json;
    if (output.url !== undefined) value.url = output.url;
    if (output.status !== undefined) value.status = output.status;
    this.outputs.set(node, value);
  }

  /** A node's output as later templates read it; null before it ran. */
  outputOf(node: string): SafeObject | null {
    return this.outputs.get(node) ?? null;
  }

  setVariable(name: string, value: SafeValue): void {
    this.vars[name] = value;
  }
}
