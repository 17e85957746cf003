import { useState, type FormEvent } from 'react';
import type { ApiKeyView } from '@modelgate/admin-api';
import { adminApi, ApiError } from '../api.js';
import { Modal } from '../components/Modal.js';
import { DetailFields, detailProblems, detailsInputOf, detailTextsOf, LimitFields, limitProblems, limitsInputOf, limitTextsOf, ModelPicker } from './KeyFields.js';
import { ErrorAlert } from '../components/ErrorAlert';

export function EditKeyDialog({ apiKey, onClose }: { apiKey: ApiKeyView; onClose: (changed: boolean) => void }) {
  const [limits, setLimits] = useState(limitTextsOf(apiKey.limits));
  const [models, setModels] = useState<string[]>(apiKey.allowed_models ?? []);
  const saved = detailTextsOf(apiKey);
  const [details, setDetails] = useState(saved);
  const [error, setError] = useState<string | null>(null);
  const invalid = Object.keys(limitProblems(limits)).length > 0 || Object.keys(detailProblems(details, saved.expiresAt)).length > 0;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    try {
      // The expiry is sent only when changed: the field shows it to the minute.
      const { expires_at: expiresAt, ...tagsAndMetadata } = detailsInputOf(details);
      await adminApi.keys.update(apiKey.id, {
        limits: limitsInputOf(limits),
        allowed_models: models.length === 0 ? null : models,
        ...tagsAndMetadata,
        ...(details.expiresAt === saved.expiresAt ? {} : { expires_at: expiresAt }),
      });
      onClose(true);
    } catch (failure) {
      setError(failure instanceof ApiError ? failure.message : String(failure));
    }
  };

  return (
    <Modal open title={`Edit ${apiKey.name}`} onOpenChange={(open) => !open && onClose(false)}>
      <form onSubmit={(event) => void submit(event)} className="key-form">
        <LimitFields texts={limits} onChange={setLimits} />
        <ModelPicker selected={models} onChange={setModels} />
        <DetailFields texts={details} savedExpiry={saved.expiresAt} onChange={setDetails} />
        <ErrorAlert message={error} />
        <div className="dialog-actions">
          <button type="submit" disabled={invalid}>
            Save changes
          </button>
        </div>
      </form>
    </Modal>
  );
}
