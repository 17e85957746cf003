/**
 * Heavy steps (the stages of parsing a large body) run one per turn of the event loop, in
 * the order they were asked for. Between two steps the loop serves timers, sockets and every
 * other request, so a burst of large bodies holds it for one step at a time, never for the
 * whole burst: a step scheduled from within a step waits for the next turn (setImmediate
 * callbacks queued while immediates run are left for the next iteration).
 */
export class TurnQueue {
  private readonly pending: (() => void)[] = [];
  private scheduled = false;

  /** Runs `step` in a later turn of the event loop, after the steps asked for before it. */
  run<T>(step: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push(() => {
        try {
          resolve(step());
        } catch (error) {
          reject(error as Error);
        }
      });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.pending.length === 0) return;
    this.scheduled = true;
    setImmediate(this.next);
  }

  private readonly next = (): void => {
    this.scheduled = false;
    this.pending.shift()!();
    this.schedule();
  };
}
