import { useCallback, useState } from 'react';

const LIMIT = 200;
/** Changes of the same kind (typing in one field) this close together are one undo step. */
const MERGE_MS = 1000;

interface History<T> {
  past: T[];
  present: T;
  future: T[];
  lastKey: string | null;
  lastAt: number;
}

/**
 * A value with undo and redo. `set(value, key)`: changes with the same `key` in quick
 * succession merge into one step, so typing a prompt is undone as a whole, not per letter.
 */
export function useUndoable<T>(initial: T) {
  const [history, setHistory] = useState<History<T>>({ past: [], present: initial, future: [], lastKey: null, lastAt: 0 });

  const set = useCallback((update: T | ((current: T) => T), key: string | null = null) => {
    setHistory((current) => {
      const present = typeof update === 'function' ? (update as (value: T) => T)(current.present) : update;
      if (present === current.present) return current;
      const now = Date.now();
      const merge = key !== null && key === current.lastKey && now - current.lastAt < MERGE_MS;
      return {
        past: merge ? current.past : [...current.past, current.present].slice(-LIMIT),
        present,
        future: [],
        lastKey: key,
        lastAt: now,
      };
    });
  }, []);

  /** Replaces the value and forgets its history (another draft was opened). */
  const reset = useCallback((value: T) => setHistory({ past: [], present: value, future: [], lastKey: null, lastAt: 0 }), []);

  const undo = useCallback(() => {
    setHistory((current) =>
      current.past.length === 0
        ? current
        : { past: current.past.slice(0, -1), present: current.past[current.past.length - 1]!, future: [current.present, ...current.future], lastKey: null, lastAt: 0 },
    );
  }, []);

  const redo = useCallback(() => {
    setHistory((current) =>
      current.future.length === 0
        ? current
        : { past: [...current.past, current.present], present: current.future[0]!, future: current.future.slice(1), lastKey: null, lastAt: 0 },
    );
  }, []);

  return { value: history.present, set, reset, undo, redo, canUndo: history.past.length > 0, canRedo: history.future.length > 0 };
}
