import type { Logger } from 'pino';

export interface OutageLog {
  failed(error: Error): void;
  recovered(): void;
}

/**
 * Logs when something starts failing and when it works again, once each: a flood of requests
 * during an outage must not flood the process log.
 */
export function outageLog(logger: Logger, messages: { failing: string; recovered: string }): OutageLog {
  let failing = false;
  return {
    failed(error) {
      if (failing) return;
      failing = true;
      logger.warn({ reason: error.message }, messages.failing);
    },
    recovered() {
      if (!failing) return;
      failing = false;
      logger.info(messages.recovered);
    },
  };
}
