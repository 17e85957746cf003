import type { FormEvent, ReactNode } from 'react';
import { ErrorAlert } from './ErrorAlert.js';

/**
 * The two forms a record is made and changed with on the Teams and Users pages: one under its
 * own heading that creates (its fields, one submit button, the failure under them), and one in
 * a table row, in place of what it changes (its fields, Save and Cancel, the failure).
 */

interface RecordFormProps {
  pending: boolean;
  error: string | null;
  onSubmit: () => void;
  children: ReactNode;
}

const submitted = (onSubmit: () => void) => (event: FormEvent) => {
  event.preventDefault();
  onSubmit();
};

export function CreateForm({ titleId, title, submitLabel, pending, error, onSubmit, children }: RecordFormProps & { titleId: string; title: string; submitLabel: string }) {
  return (
    <form className="filters" aria-labelledby={titleId} onSubmit={submitted(onSubmit)}>
      <h2 id={titleId}>{title}</h2>
      {children}
      <div className="field actions">
        <button type="submit" disabled={pending}>
          {submitLabel}
        </button>
      </div>
      <ErrorAlert message={error} />
    </form>
  );
}

export function InlineEditForm({ label, pending, error, onSubmit, onCancel, children }: RecordFormProps & { label: string; onCancel: () => void }) {
  return (
    <form className="inline-form" aria-label={label} onSubmit={submitted(onSubmit)}>
      {children}
      <button type="submit" className="small" disabled={pending}>
        Save
      </button>
      <button type="button" className="secondary small" onClick={onCancel}>
        Cancel
      </button>
      <ErrorAlert message={error} />
    </form>
  );
}
