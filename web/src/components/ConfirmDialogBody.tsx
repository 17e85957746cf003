import * as AlertDialog from '@radix-ui/react-alert-dialog';
import type { ReactNode } from 'react';

/** The inside of a confirmation dialog: title, description, a cancel button and the action given. */
export function ConfirmDialogBody({ title, description, cancelLabel, action }: { title: string; description: ReactNode; cancelLabel: string; action: ReactNode }) {
  return (
    <AlertDialog.Portal>
      <AlertDialog.Overlay className="overlay" />
      <AlertDialog.Content className="dialog">
        <AlertDialog.Title>{title}</AlertDialog.Title>
        <AlertDialog.Description asChild>
          <div>{description}</div>
        </AlertDialog.Description>
        <div className="dialog-actions">
          <AlertDialog.Cancel asChild>
            <button type="button" className="secondary">
              {cancelLabel}
            </button>
          </AlertDialog.Cancel>
          {action}
        </div>
      </AlertDialog.Content>
    </AlertDialog.Portal>
  );
}
