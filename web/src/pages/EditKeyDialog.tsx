import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import type { ApiKeyView } from '@modelgate/admin-api';
import { adminApi, ApiError } from '../api.js';
import { Modal } from '../components/Modal.js';
import { DetailFields, detailProblems, detailsInputOf, detailTextsOf, LimitFields, limitProblems, limitsInputOf, limitTextsOf, ModelPicker } from './KeyFields.js';
import { ErrorAlert } from '../components/ErrorAlert';
import { useRefreshKeys } from './key-queries.js';

const messageOf = (failure: unknown) => (failure instanceof ApiError ? failure.message : String(failure));

export function EditKeyDialog({ apiKey, onClose }: { apiKey: ApiKeyView; onClose: () => void }) {
  const [limits, setLimits] = useState(limitTextsOf(apiKey.limits));
  const [models, setModels] = useState<string[]>(apiKey.allowed_models ?? []);
  const saved = detailTextsOf(apiKey);
  const [details, setDetails] = useState(saved);
  const refresh = useRefreshKeys();
  const save = useMutation({
    mutationFn: () => {
      // The expiry is sent only when changed: the field shows it to the minute.
      const { expires_at: expiresAt, ...tagsAndMetadata } = detailsInputOf(details);
      return adminApi.keys.update(apiKey.id, {
        limits: limitsInputOf(limits),
        allowed_models: models.length === 0 ? null : models,
        ...tagsAndMetadata,
        ...(details.expiresAt === saved.expiresAt ? {} : { expires_at: expiresAt }),
      });
    },
    onSuccess: () => {
      onClose();
      return refresh();
    },
  });
  const invalid = Object.keys(limitProblems(limits)).length > 0 || Object.keys(detailProblems(details, saved.expiresAt)).length > 0;

  return (
    <Modal open title={`Edit ${apiKey.name}`} onOpenChange={(open) => !open && onClose()}>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          save.mutate();
        }}
        className="key-form"
      >
        <LimitFields texts={limits} onChange={setLimits} />
        <ModelPicker selected={models} onChange={setModels} />
        <DetailFields texts={details} savedExpiry={saved.expiresAt} onChange={setDetails} />
        <ErrorAlert message={save.error === null ? null : messageOf(save.error)} />
        <div className="dialog-actions">
          <button type="submit" disabled={invalid || save.isPending}>
            Save changes
          </button>
        </div>
      </form>
    </Modal>
  );
}
