import pino, { type Logger } from 'pino';
import { redactText, redactValue } from '../logs/index.js';

/**
 * The process log. Credentials never reach it: request headers that carry them are censored
 * here, every logged object and message goes through the request log's redaction (keys,
 * tokens, private keys, base64 media), and code never logs request bodies.
 */
export function createProcessLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'modelgate' },
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers["x-api-key"]',
        'req.headers.cookie',
        'headers.authorization',
        'headers["x-api-key"]',
        'headers.cookie',
        '*.apiKey',
        '*.adminToken',
        '*.encryptionKey',
      ],
      censor: '[redacted]',
    },
    formatters: { log: (object) => redactValue(object) as Record<string, unknown> },
    // Errors are already plain, redacted objects here; pino's own err serializer would rename their type.
    serializers: { err: (value: unknown) => redactValue(value) },
    hooks: {
      logMethod(args, method) {
        method.apply(this, args.map((arg) => (typeof arg === 'string' ? redactText(arg) : arg)) as Parameters<typeof method>);
      },
    },
  });
}
