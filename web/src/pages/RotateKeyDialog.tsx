import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import type { ApiKeyView } from '@modelgate/admin-api';
import { adminApi, ApiError } from '../api.js';
import { ErrorAlert } from '../components/ErrorAlert';
import { Modal } from '../components/Modal.js';
import { SelectField } from '../components/SelectField';
import { useRefreshKeys } from './key-queries.js';

/** How long the replaced secret keeps working, in seconds (the admin API allows up to 30 days). */
const GRACE_PERIODS = [
  { value: '0', label: 'none: the old secret stops at once' },
  { value: '3600', label: '1 hour' },
  { value: '86400', label: '1 day' },
  { value: '604800', label: '7 days' },
  { value: '2592000', label: '30 days' },
];

const messageOf = (failure: unknown) => (failure instanceof ApiError ? failure.message : String(failure));

/** A new secret for the same key (id, settings and spend kept), shown once. */
export function RotateKeyDialog({ apiKey, onClose }: { apiKey: ApiKeyView; onClose: () => void }) {
  const [grace, setGrace] = useState('0');
  const refresh = useRefreshKeys();
  // The new fingerprint shows in the list behind the dialog.
  const rotate = useMutation({ mutationFn: () => adminApi.keys.rotate(apiKey.id, Number(grace)), onSuccess: refresh });
  const secret = rotate.data?.secret ?? null;

  return (
    <Modal open title={secret === null ? `Rotate ${apiKey.name}` : 'New secret'} onOpenChange={(open) => !open && onClose()}>
      {secret === null ? (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            rotate.mutate();
          }}
          className="key-form"
        >
          <p>The key keeps its id, settings, limits and spend; it gets a new secret, shown once.</p>
          <SelectField id="rotate-grace" label="The old secret keeps working for" value={grace} options={GRACE_PERIODS} onChange={setGrace} />
          <ErrorAlert message={rotate.error === null ? null : messageOf(rotate.error)} />
          <div className="dialog-actions">
            <button type="submit" disabled={rotate.isPending}>
              Rotate secret
            </button>
          </div>
        </form>
      ) : (
        <div className="secret">
          <p>
            <strong>Copy the secret now: it is shown only this once.</strong>
          </p>
          <label htmlFor="rotated-secret">Secret</label>
          <input id="rotated-secret" readOnly value={secret} onFocus={(event) => event.target.select()} />
        </div>
      )}
    </Modal>
  );
}
