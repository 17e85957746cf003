import { useEffect, useState } from 'react';
import type { ApiKeyView } from '@modelgate/admin-api';
import { adminApi } from '../../api.js';

/**
 * A drop-down of the active keys that may run agents (`agents:execute`), choosing the first
 * by default: tests are metered against the key, conversations are shown as the key sees them.
 */
export function KeyPicker(props: { id: string; label: string; value: string; onChange: (keyId: string) => void; onError: (message: string) => void }) {
  const [keys, setKeys] = useState<ApiKeyView[] | null>(null);
  const { onChange, onError } = props;
  useEffect(() => {
    adminApi.keys
      .page({ status: 'active' }, undefined, 100)
      .then((page) => {
        const usable = page.data.filter((key) => key.scopes.includes('agents:execute'));
        setKeys(usable);
        if (usable[0] !== undefined) onChange(usable[0].id);
      })
      .catch((failure: unknown) => onError(failure instanceof Error ? failure.message : String(failure)));
  }, [onChange, onError]);
  return (
    <div className="field">
      <label htmlFor={props.id}>{props.label}</label>
      <select id={props.id} value={props.value} onChange={(event) => onChange(event.target.value)}>
        {keys?.length === 0 && <option value="">no active key with agents:execute</option>}
        {(keys ?? []).map((key) => (
          <option key={key.id} value={key.id}>
            {key.name} ({key.project_id})
          </option>
        ))}
      </select>
    </div>
  );
}
