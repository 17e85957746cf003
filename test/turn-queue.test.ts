import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TurnQueue } from '../src/server/turn-queue.js';

/** Holds the thread for `ms` (a step of real work), so a timer set before it is due after it. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('TurnQueue', () => {
  test('runs steps in the order asked, one per turn of the event loop: timers run between them', async () => {
    const turns = new TurnQueue();
    const seen: string[] = [];
    const steps = ['a', 'b', 'c'].map((name) =>
      turns.run(() => {
        seen.push(name);
        // Due before the next step: it fires only if the loop turns before that step runs.
        setTimeout(() => seen.push(`timer after ${name}`), 0);
        busy(3);
        return name;
      }),
    );
    assert.deepEqual(await Promise.all(steps), ['a', 'b', 'c']);
    await new Promise((resolve) => setTimeout(resolve, 5));
    assert.deepEqual(seen, ['a', 'timer after a', 'b', 'timer after b', 'c', 'timer after c']);
  });

  test('a step asked for by a running step waits for the steps already queued', async () => {
    const turns = new TurnQueue();
    const seen: string[] = [];
    const first = turns.run(() => {
      seen.push('first');
      return turns.run(() => seen.push('nested'));
    });
    const second = turns.run(() => seen.push('second'));
    await Promise.all([first.then((nested) => nested), second]);
    assert.deepEqual(seen, ['first', 'second', 'nested']);
  });

  test("a step's error rejects its own promise and the queue goes on", async () => {
    const turns = new TurnQueue();
    const failed = turns.run(() => {
      throw new SyntaxError('not JSON');
    });
    const next = turns.run(() => 'next');
    await assert.rejects(failed, SyntaxError);
    assert.equal(await next, 'next');
  });
});
