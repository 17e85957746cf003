import { GatewayError } from '../errors/index.js';
import type { KeyStatus } from './types.js';

export type KeyAction = 'pause' | 'resume' | 'revoke';

const TRANSITIONS: Record<KeyAction, { from: readonly KeyStatus[]; to: KeyStatus }> = {
  pause: { from: ['active'], to: 'paused' },
  resume: { from: ['paused'], to: 'active' },
  revoke: { from: ['active', 'paused'], to: 'revoked' },
};

/** The key lifecycle (docs/admin-api.md): revoked is final; pause/resume never rotate the secret. */
export function nextStatus(current: KeyStatus, action: KeyAction): KeyStatus {
  const transition = TRANSITIONS[action];
  if (transition.from.includes(current)) return transition.to;
  if (current === 'revoked') {
    throw new GatewayError('conflict', `Cannot ${action} this key: it is revoked, and revocation is final. Create a new key instead.`, { retryable: false });
  }
  throw new GatewayError('conflict', `Cannot ${action} this key: it is already ${transition.to}.`, { retryable: false });
}

/** Whether a key in `current` state can take `action` (a project-wide action skips the others). */
export function canTake(current: KeyStatus, action: KeyAction): boolean {
  return TRANSITIONS[action].from.includes(current);
}
