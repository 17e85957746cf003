import pino, { type Logger } from 'pino';

/**
 * The process log. Credentials never reach it: request headers that carry them are censored
 * here, and code never logs request bodies (payloads go to the request log, redacted).
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
  });
}
