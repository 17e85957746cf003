import { Ajv, type ValidateFunction } from 'ajv';
import { credentialSpans } from '../redaction/index.js';
import type { TextCheck } from './check-types.js';
import { modelCheck } from './model-check.js';
import { moderationCheck, type ModerationSource } from './moderation-check.js';
import { findPii, withoutOverlaps, type Span } from './pii.js';
import { fieldOf, GuardrailConfigError, type GuardrailCheckSpec } from './policy.js';
import { WebhookCheck, type WebhookTransport } from './webhook.js';

/**
 * The checks: the built-in ones find the spans of a text they object to (none: it passes),
 * synchronously; a checker model or a webhook judges a stage's texts asynchronously. Built
 * once from a guardrail's options at start-up; a pattern that does not compile, a schema ajv
 * refuses or a webhook without its key stops start-up naming the field.
 */

/** What building a check may need from outside: the environment (a webhook's key) and, in tests, the webhook's transport. */
export interface CheckDependencies {
  env: Readonly<Record<string, string | undefined>>;
  webhookTransport?: WebhookTransport;
  /** The providers' moderation endpoints (absent when the config is checked before the providers exist: the check then fails). */
  moderation?: ModerationSource;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function spansOf(pattern: RegExp, text: string, label: string): Span[] {
  const spans: Span[] = [];
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    if (match[0].length === 0) {
      pattern.lastIndex += 1;
      continue;
    }
    spans.push({ start: match.index, end: match.index + match[0].length, label });
  }
  return spans;
}

/** The model's answer as JSON: the whole text, or one fenced block that is the whole text. */
const FENCED = /^```(?:json)?[ \t]*\r?\n([\s\S]*?)\r?\n?```$/i;

export function buildCheck(spec: GuardrailCheckSpec, field: string, dependencies: CheckDependencies): TextCheck {
  switch (spec.check) {
    case 'pii': {
      const kinds = spec.options.kinds;
      return { kind: 'spans', maskable: true, find: (text) => findPii(text, kinds) };
    }
    case 'secrets':
      return { kind: 'spans', maskable: true, find: (text) => withoutOverlaps(credentialSpans(text).map((span) => ({ ...span, label: 'secret' }))) };
    case 'keywords': {
      const words = [...spec.options.words].sort((a, b) => b.length - a.length).map(escapeRegExp);
      // Whole words only: "class" is not found in "classic".
      const pattern = new RegExp(`(?<![\\p{L}\\p{N}_])(?:${words.join('|')})(?![\\p{L}\\p{N}_])`, spec.options.caseSensitive ? 'gu' : 'giu');
      return { kind: 'spans', maskable: true, find: (text) => spansOf(pattern, text, 'keyword') };
    }
    case 'regex': {
      const patterns = spec.options.patterns.map((source, index) => {
        try {
          return new RegExp(source, spec.options.caseSensitive ? 'g' : 'gi');
        } catch (error) {
          throw new GuardrailConfigError(`invalid setting ${fieldOf(field, 'options')}.patterns[${index}]: not a valid regular expression (${(error as Error).message})`);
        }
      });
      return { kind: 'spans', maskable: true, find: (text) => withoutOverlaps(patterns.flatMap((pattern) => spansOf(pattern, text, 'match'))) };
    }
    case 'json_schema': {
      let validate: ValidateFunction;
      try {
        validate = new Ajv({ allErrors: false, strict: false }).compile(spec.options.schema);
      } catch (error) {
        throw new GuardrailConfigError(`invalid setting ${fieldOf(field, 'options')}.schema: not a JSON schema ajv compiles (${(error as Error).message})`);
      }
      return {
        kind: 'spans',
        maskable: false,
        find: (text) => {
          const trimmed = text.trim();
          const json = FENCED.exec(trimmed)?.[1] ?? trimmed;
          let value: unknown;
          try {
            value = JSON.parse(json);
          } catch {
            return [{ start: 0, end: text.length, label: 'json' }];
          }
          return validate(value) ? [] : [{ start: 0, end: text.length, label: 'json' }];
        },
      };
    }
    case 'model':
      return modelCheck(spec.options);
    case 'moderation':
      return moderationCheck(spec.options, dependencies.moderation);
    case 'webhook':
      return new WebhookCheck(spec.options, field, dependencies.env, dependencies.webhookTransport);
  }
}

/** `text` with each span replaced by its label in brackets (`[email]`, `[secret]`). */
export function maskSpans(text: string, spans: readonly Span[]): string {
  let masked = '';
  let from = 0;
  for (const span of spans) {
    masked += `${text.slice(from, span.start)}[${span.label}]`;
    from = span.end;
  }
  return masked + text.slice(from);
}
