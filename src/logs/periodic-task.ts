/**
 * Background work run on a timer, one run at a time: the first after `firstDelayMs`, each
 * next one `intervalMs` after the previous ended. The timer never keeps the process alive,
 * and `stop` waits for a run in progress.
 */
export class PeriodicTask<T> {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<T> | undefined;
  private stopped = false;

  constructor(private readonly work: () => Promise<T>) {}

  /** Set once `stop` was called: long work checks it between its steps. */
  get stopping(): boolean {
    return this.stopped;
  }

  start(firstDelayMs: number, intervalMs: number): void {
    const tick = (delay: number) => {
      this.timer = setTimeout(() => {
        void this.run().finally(() => {
          if (!this.stopped) tick(intervalMs);
        });
      }, delay);
      this.timer.unref();
    };
    tick(firstDelayMs);
  }

  /** The run in progress, or `work` (the task's own by default) started now. */
  run(work: () => Promise<T> = this.work): Promise<T> {
    this.running ??= work().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }
}
