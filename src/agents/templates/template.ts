import { parsePath, PathError } from '../paths.js';
import { valueToText, ValueSizeError, type PathResolver, type SafeValue } from '../values.js';

/**
 * Templates in string config values: literal text with `{{ path }}` placeholders. A template
 * is parsed once (at validation) and rendered in one pass: inserted values are copied into the
 * result and never scanned for placeholders again, so user input or model output can never
 * inject a template.
 */
export type TemplatePart = { kind: 'text'; text: string } | { kind: 'value'; path: readonly string[] };

export interface Template {
  readonly source: string;
  readonly parts: readonly TemplatePart[];
}

export class TemplateError extends Error {
  override name = 'TemplateError';
}

const OPEN = '{{';
const CLOSE = '}}';

export function parseTemplate(source: string): Template {
  const parts: TemplatePart[] = [];
  let position = 0;
  while (position < source.length) {
    const open = source.indexOf(OPEN, position);
    if (open === -1) {
      parts.push({ kind: 'text', text: source.slice(position) });
      break;
    }
    if (open > position) parts.push({ kind: 'text', text: source.slice(position, open) });
    const close = source.indexOf(CLOSE, open + OPEN.length);
    if (close === -1) throw new TemplateError(`"{{" at character ${open} is never closed with "}}"`);
    const inner = source.slice(open + OPEN.length, close);
    try {
      parts.push({ kind: 'value', path: parsePath(inner) });
    } catch (error) {
      if (error instanceof PathError) throw new TemplateError(`placeholder {{${inner.slice(0, 60)}}}: ${error.message}`);
      throw error;
    }
    position = close + CLOSE.length;
  }
  return { source, parts };
}

/** Every path a template reads. */
export function templatePaths(template: Template): (readonly string[])[] {
  return template.parts.flatMap((part) => (part.kind === 'value' ? [part.path] : []));
}

export interface RenderOptions {
  /** Applied to each inserted value (the http node percent-encodes values inserted into URLs). */
  encode?: (text: string) => string;
  /**
   * Largest result in UTF-8 bytes (the run's value budget); past it rendering stops with a
   * ValueSizeError, before a template that repeats a large value builds a string of gigabytes.
   */
  maxBytes?: number;
}

export function renderTemplate(template: Template, resolver: PathResolver, options: RenderOptions = {}): string {
  const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
  let text = '';
  let bytes = 0;
  for (const part of template.parts) {
    let piece: string;
    if (part.kind === 'text') {
      piece = part.text;
    } else {
      const value = valueToText(resolver.resolve(part.path));
      piece = options.encode === undefined ? value : options.encode(value);
    }
    bytes += Buffer.byteLength(piece, 'utf8');
    if (bytes > maxBytes) throw new ValueSizeError(`the rendered text is larger than ${maxBytes} bytes`);
    text += piece;
  }
  return text;
}

/**
 * A template that is exactly one placeholder yields the value itself (an object stays an
 * object); anything else renders to text. Used where JSON is built (transform, http body).
 */
export function renderTemplateValue(template: Template, resolver: PathResolver, options: RenderOptions = {}): SafeValue {
  const only = template.parts.length === 1 ? template.parts[0]! : undefined;
  if (only?.kind === 'value') return resolver.resolve(only.path) ?? null;
  return renderTemplate(template, resolver, options);
}
