import * as AlertDialog from '@radix-ui/react-alert-dialog';
import { useState, type ReactNode } from 'react';
import { ConfirmDialogBody } from './ConfirmDialogBody.js';

/** A button whose action runs only after the user confirms it in a dialog. */
export function ConfirmButton({
  label,
  title,
  description,
  confirmLabel,
  danger = false,
  onConfirm,
}: {
  label: string;
  title: string;
  description: ReactNode;
  confirmLabel: string;
  danger?: boolean;
  onConfirm: () => Promise<void>;
}) {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  return (
    <AlertDialog.Root open={open} onOpenChange={setOpen}>
      <AlertDialog.Trigger asChild>
        <button type="button" className={danger ? 'danger small' : 'secondary small'}>
          {label}
        </button>
      </AlertDialog.Trigger>
      <ConfirmDialogBody
        title={title}
        description={description}
        cancelLabel="Cancel"
        action={
          <button
            type="button"
            className={danger ? 'danger' : ''}
            disabled={busy}
            onClick={() => {
              setBusy(true);
              void onConfirm().finally(() => {
                setBusy(false);
                setOpen(false);
              });
            }}
          >
            {confirmLabel}
          </button>
        }
      />
    </AlertDialog.Root>
  );
}
